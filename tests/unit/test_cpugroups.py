"""CPU groups on a fake cgroup hierarchy (a folder): shares written, processes placed, cleaned up."""

import os

import pytest

from brokerstream.common import config
from brokerstream.launcher.cpugroups import GROUPS, CpuGroups


def cfg_with(tmp_path, **over):
    env = {"BS_DATA_DIR": str(tmp_path / "data"), **over}
    return config.load(environ=env)


def test_each_group_gets_its_configured_shares(tmp_path):
    root = tmp_path / "cpu"
    root.mkdir()
    cg = CpuGroups.of(cfg_with(tmp_path, BS_CPU_PRIORITY="on", BS_CPU_SHARES_PNL="300"), root=root)
    cg.ensure()
    assert (cg.path("pnl") / "cpu.shares").read_text() == "300"
    assert (cg.path("orders") / "cpu.shares").read_text() == "4096"
    assert sorted(p.name for p in cg.parent.iterdir()) == sorted(GROUPS)


def test_two_data_folders_never_share_a_parent(tmp_path):
    root = tmp_path / "cpu"
    root.mkdir()
    a = CpuGroups.of(config.load(environ={"BS_DATA_DIR": str(tmp_path / "a")}), root=root)
    b = CpuGroups.of(config.load(environ={"BS_DATA_DIR": str(tmp_path / "b")}), root=root)
    assert a.parent != b.parent


def test_placing_writes_each_pid_and_a_quota_caps_the_parent(tmp_path):
    root = tmp_path / "cpu"
    root.mkdir()
    cg = CpuGroups.of(cfg_with(tmp_path, BS_CPU_PRIORITY="on"), root=root)
    # a plain file keeps only the last write: the real cgroup.procs takes one pid per write
    assert cg.place("sync", [11, 12]) == 2
    assert (cg.path("sync") / "cgroup.procs").read_text() == "12"
    cg.quota(1.5)
    assert (cg.parent / "cpu.cfs_quota_us").read_text() == "150000"
    cg.quota(None)
    assert (cg.parent / "cpu.cfs_quota_us").read_text() == "-1"


def test_off_or_unwritable_means_nothing_is_touched(tmp_path):
    cg = CpuGroups.of(cfg_with(tmp_path, BS_CPU_PRIORITY="off"), root=tmp_path)
    assert not cg.enabled
    assert cg.place("orders", [1]) == 0
    assert not cg.parent.exists()
    missing = CpuGroups.of(cfg_with(tmp_path, BS_CPU_PRIORITY="auto"), root=tmp_path / "nope")
    assert not missing.enabled
    with pytest.raises(PermissionError):
        CpuGroups.of(cfg_with(tmp_path, BS_CPU_PRIORITY="on"), root=tmp_path / "nope")


def test_unknown_groups_and_modes_are_errors(tmp_path):
    with pytest.raises(ValueError):
        CpuGroups.of(cfg_with(tmp_path, BS_CPU_PRIORITY="maybe"))
    with pytest.raises(KeyError):
        CpuGroups.of(cfg_with(tmp_path, BS_CPU_PRIORITY="off")).path("gpu")


@pytest.mark.skipif(not os.access("/sys/fs/cgroup/cpu", os.W_OK), reason="needs a writable cgroup v1 cpu hierarchy")
def test_a_real_process_lands_in_its_group_and_the_group_goes_away(tmp_path):
    import subprocess

    cg = CpuGroups.of(cfg_with(tmp_path, BS_CPU_PRIORITY="on"))
    proc = subprocess.Popen(["sleep", "30"], preexec_fn=lambda: cg.join("clients"))
    try:
        assert cg.group_of(proc.pid) == "clients"
        assert f"/{cg.parent.name}/clients" in open(f"/proc/{proc.pid}/cgroup").read()
    finally:
        proc.kill()
        proc.wait()
    cg.remove()
    assert not cg.parent.exists()


def _cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not os.access("/sys/fs/cgroup/cpu", os.W_OK), reason="needs a writable cgroup v1 cpu hierarchy")
@pytest.mark.parametrize("vcpus", [0.25, 0.5])
def test_a_quota_is_really_in_force_on_a_busy_process(tmp_path, vcpus):
    """Two spinning threads would take two cores; under the quota they get what it allows (+10 % at most)."""
    import subprocess
    import sys
    import time

    cg = CpuGroups.of(cfg_with(tmp_path, BS_CPU_PRIORITY="on"))
    spin = "import threading\ndef f():\n    while True: pass\nthreading.Thread(target=f, daemon=True).start()\nf()"
    # two processes (the GIL would keep one to a core): the limit is on the group, not a process
    procs = [subprocess.Popen([sys.executable, "-c", spin], preexec_fn=lambda: cg.join("sync")) for _ in range(2)]
    try:
        cg.quota(vcpus)
        assert cg.quota_vcpus() == pytest.approx(vcpus)
        time.sleep(0.5)
        t0, c0 = time.monotonic(), sum(_cpu_seconds(p.pid) for p in procs)
        time.sleep(3)
        used = (sum(_cpu_seconds(p.pid) for p in procs) - c0) / (time.monotonic() - t0)
        assert used <= vcpus * 1.10, f"{used:.3f} cores used under a {vcpus} vCPU quota"
        assert used >= vcpus * 0.5, f"{used:.3f} cores: the spinners should get their share"
        cg.quota(None)
        assert cg.quota_vcpus() is None
    finally:
        for p in procs:
            p.kill()
            p.wait()
        cg.remove()
    assert not cg.parent.exists()


@pytest.mark.skipif(
    not os.access("/sys/fs/cgroup/memory", os.W_OK), reason="needs a writable cgroup v1 memory hierarchy"
)
def test_a_memory_limit_holds_the_groups_processes_and_goes_away_with_them(tmp_path):
    import subprocess
    import sys

    cg = CpuGroups.of(cfg_with(tmp_path, BS_CPU_PRIORITY="on"))
    proc = subprocess.Popen(["sleep", "30"], preexec_fn=lambda: cg.join("platform"))
    hog = None
    try:
        cg.memory_limit(0.25)
        assert cg.memory_limit_gb() == pytest.approx(0.25)
        assert f"memory:/{cg.memory_parent.name}" in open(f"/proc/{proc.pid}/cgroup").read()
        # what is placed afterwards joins it too; past the limit the kernel stops it (OOM), not the machine
        hog = subprocess.Popen([sys.executable, "-c", "import time; x = bytearray(400 * 2**20); time.sleep(30)"])
        cg.place("platform", [hog.pid])
        # a process moved in before it allocates: its 400 MB cannot fit in 256 MB
        assert hog.wait(timeout=30) != 0
        cg.memory_limit(None)
        assert cg.memory_limit_gb() is None
    finally:
        for p in (proc, hog):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        cg.remove()
    assert not cg.memory_parent.exists() and not cg.parent.exists()


@pytest.mark.skipif(not os.access("/sys/fs/cgroup/cpu", os.W_OK), reason="needs a writable cgroup v1 cpu hierarchy")
def test_a_process_still_exiting_when_the_stack_is_removed_does_not_leave_its_group_behind(tmp_path):
    import subprocess

    cg = CpuGroups.of(cfg_with(tmp_path, BS_CPU_PRIORITY="on"))
    proc = subprocess.Popen(["sleep", "1"], preexec_fn=lambda: cg.join("orders"))
    cg.remove()  # while it is still there: waits for it to go
    proc.wait()
    assert not cg.parent.exists()


def test_each_process_placed_also_joins_its_accounting_group_which_counts_its_cpu(tmp_path):
    root, acct = tmp_path / "cpu", tmp_path / "cpuacct"
    root.mkdir()
    acct.mkdir()
    cg = CpuGroups.of(cfg_with(tmp_path, BS_CPU_PRIORITY="on"), root=root)
    assert cg.accounting_parent == acct / cg.parent.name
    assert cg.place("orders", [41]) == 1
    assert (cg.accounting_parent / "orders" / "cgroup.procs").read_text() == "41"
    (cg.accounting_parent / "orders" / "cpuacct.usage").write_text("2500000000\n")  # the kernel counts ns
    assert cg.cpu_seconds() == {"orders": 2.5}
    shared = tmp_path / "shared"
    shared.mkdir()
    assert (
        CpuGroups.of(cfg_with(tmp_path, BS_CPU_PRIORITY="on"), root=shared, accounting_root=shared).accounting_parent
        is None
    )


@pytest.mark.skipif(
    not os.access("/sys/fs/cgroup/cpuacct", os.W_OK), reason="needs a writable cgroup v1 cpuacct hierarchy"
)
def test_the_kernel_counts_a_busy_process_in_its_accounting_group(tmp_path):
    import subprocess

    cg = CpuGroups.of(cfg_with(tmp_path, BS_CPU_PRIORITY="on"))
    proc = subprocess.Popen(
        ["python3", "-c", "import time\nt=time.process_time()\nwhile time.process_time()-t<0.3: pass"],
        preexec_fn=lambda: cg.join("clients"),
    )
    proc.wait()
    try:
        assert 0.25 <= cg.cpu_seconds()["clients"] <= 1.0
    finally:
        cg.remove()
    assert not cg.parent.exists() and not cg.accounting_parent.exists()
