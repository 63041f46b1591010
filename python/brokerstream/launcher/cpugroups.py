"""CPU priority between the dataflows: cgroup v1 `cpu` groups, one per role, weighted by cpu.shares.

On a saturated machine the kernel shares CPU between runnable groups in proportion to their shares,
so the order flow (Kafka and the streams app) keeps the cores it needs while the P&L flow and the
Postgres sync fall behind and catch up later. Shares only matter under contention: an idle group
takes nothing from the others, and a busy one alone may use every core.

    <cgroup root>/cpu/bs-<id of the data folder>/orders | clients | platform | pnl | sync

One parent per data folder, so the test stack and the default stack never share groups. The parent
is also where a resource step's CPU quota goes (cpu.cfs_quota_us limits the whole stack), and a step's
memory limit has a parent of the same name in the `memory` hierarchy (memory.limit_in_bytes), which
every process placed in a CPU group joins while it exists.

Where the `cpuacct` controller is mounted apart (cgroup v1 as on this machine), each process also joins the
group of the same name under `<cgroup root>/cpuacct/bs-<id>/`: the kernel's count of the CPU time every
process of a role used, children included, which `bench cost` sets beside its per-process figures as
an independent total.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from brokerstream.common.config import Config

CGROUP_CPU = Path("/sys/fs/cgroup/cpu")
CGROUP_MEMORY = Path("/sys/fs/cgroup/memory")
CGROUP_CPUACCT = Path("/sys/fs/cgroup/cpuacct")
GROUPS = ("orders", "clients", "platform", "pnl", "sync")


@dataclass(frozen=True)
class CpuGroups:
    parent: Path
    shares: dict[str, int]
    enabled: bool
    memory_parent: Path | None = None
    accounting_parent: Path | None = None

    @classmethod
    def of(
        cls,
        cfg: Config,
        root: Path = CGROUP_CPU,
        memory_root: Path = CGROUP_MEMORY,
        accounting_root: Path | None = None,
    ) -> "CpuGroups":
        mode = (cfg.get("BS_CPU_PRIORITY") or "auto").lower()
        if mode not in ("on", "off", "auto"):
            raise ValueError(f"BS_CPU_PRIORITY is on, off or auto, got {mode!r}")
        ident = hashlib.sha1(str(cfg.data_dir.resolve()).encode()).hexdigest()[:8]
        shares = {g: cfg.int(f"BS_CPU_SHARES_{g.upper()}") for g in GROUPS}
        writable = root.is_dir() and os.access(root, os.W_OK)
        if mode == "on" and not writable:
            raise PermissionError(f"BS_CPU_PRIORITY=on but {root} is not a writable cgroup v1 cpu hierarchy")
        memory = memory_root / f"bs-{ident}" if memory_root.is_dir() and os.access(memory_root, os.W_OK) else None
        # the cpuacct hierarchy beside the cpu one, and only a separate one (where they share a mount,
        # the cpu groups count already)
        accounting_root = root.parent / CGROUP_CPUACCT.name if accounting_root is None else accounting_root
        separate = (
            accounting_root.is_dir()
            and os.access(accounting_root, os.W_OK)
            and accounting_root.resolve() != root.resolve()
        )
        accounting = accounting_root / f"bs-{ident}" if separate else None
        return cls(root / f"bs-{ident}", shares, mode == "on" or (mode == "auto" and writable), memory, accounting)

    def path(self, group: str) -> Path:
        if group not in GROUPS:
            raise KeyError(f"unknown CPU group {group!r}; known: {', '.join(GROUPS)}")
        return self.parent / group

    def ensure(self) -> None:
        """The groups exist with their configured shares (idempotent)."""
        if not self.enabled:
            return
        for group, shares in self.shares.items():
            path = self.path(group)
            path.mkdir(parents=True, exist_ok=True)
            _write(path / "cpu.shares", shares)
            if self.accounting_parent is not None:
                (self.accounting_parent / group).mkdir(parents=True, exist_ok=True)

    def place(self, group: str, pids: list[int]) -> int:
        """Moves processes (all their threads) into a group; returns how many moved. The first pid
        should be the parent: what it forks afterwards is born in the group."""
        if not self.enabled or not pids:
            return 0
        self.ensure()
        moved = 0
        limited = self.memory_parent is not None and self.memory_parent.is_dir()
        for pid in pids:
            if _move(self.path(group), pid) and (not limited or _move(self.memory_parent, pid)):
                if self.accounting_parent is not None:
                    _move(self.accounting_parent / group, pid)
                moved += 1
        return moved

    def join(self, group: str) -> None:
        """Moves the calling process into a group (a child's preexec_fn: what it execs is born there)."""
        if self.enabled:
            self.ensure()
            _write(self.path(group) / "cgroup.procs", os.getpid())
            if self.accounting_parent is not None:
                _write(self.accounting_parent / group / "cgroup.procs", os.getpid())

    def cpu_seconds(self) -> dict[str, float]:
        """CPU seconds the kernel counted for each group's processes (children included) since the group
        was made; empty where no cpuacct hierarchy of its own is mounted."""
        out = {}
        if not self.enabled or self.accounting_parent is None:
            return out
        for group in GROUPS:
            try:
                out[group] = int((self.accounting_parent / group / "cpuacct.usage").read_text()) / 1e9
            except (OSError, ValueError):
                pass
        return out

    def members(self, group: str) -> set[int]:
        return _procs(self.path(group))

    def group_of(self, pid: int) -> str | None:
        for group in GROUPS:
            if pid in self.members(group):
                return group
        return None

    def quota(self, vcpus: float | None) -> None:
        """Caps the whole stack at this many CPUs (None: no cap), over a 100 ms period."""
        if not self.enabled:
            return
        self.ensure()
        _write(self.parent / "cpu.cfs_period_us", 100_000)
        _write(self.parent / "cpu.cfs_quota_us", -1 if vcpus is None else max(1000, int(vcpus * 100_000)))

    def memory_limit(self, gb: float | None) -> None:
        """Caps the whole stack's memory (page cache included) at this many GB; every process of the
        CPU groups joins the memory group. None lifts the cap: the processes go back to the root
        group and the memory group is deleted."""
        if not self.enabled:
            return
        if self.memory_parent is None:
            raise PermissionError("no writable cgroup v1 memory hierarchy for a memory limit")
        if gb is None:
            self._release_memory()
            return
        self.memory_parent.mkdir(exist_ok=True)
        # Without this, pages a process touched before it moved stay charged to its old group; some
        # kernels refuse it (EINVAL), and then the limit holds what is allocated from now on.
        try:
            _write(self.memory_parent / "memory.move_charge_at_immigrate", 3)
        except OSError as exc:
            if exc.errno != 22:
                raise
        for group in GROUPS:
            for pid in self.members(group):
                _move(self.memory_parent, pid)
        try:
            _write(self.memory_parent / "memory.limit_in_bytes", int(gb * 1024**3))
        except OSError as exc:
            if exc.errno == 16:  # EBUSY: the kernel could not reclaim down to the limit
                used = int((self.memory_parent / "memory.usage_in_bytes").read_text()) / 1024**3
                raise ValueError(f"a memory limit of {gb} GB is below what the stack holds ({used:.1f} GB)") from None
            raise

    def _release_memory(self) -> None:
        if not self.memory_parent.is_dir():
            return
        for pid in _procs(self.memory_parent):
            _move(self.memory_parent.parent, pid)
        self.memory_parent.rmdir()

    def memory_limit_gb(self) -> float | None:
        try:
            limit = int((self.memory_parent / "memory.limit_in_bytes").read_text())
        except (OSError, TypeError):
            return None
        return None if limit >= 2**62 else limit / 1024**3

    def quota_vcpus(self) -> float | None:
        try:
            quota = int((self.parent / "cpu.cfs_quota_us").read_text())
            period = int((self.parent / "cpu.cfs_period_us").read_text())
        except OSError:
            return None
        return None if quota < 0 else quota / period

    def remove(self, wait: float = 5.0) -> None:
        """Deletes the groups once no process is left in them. A process that has just been stopped may
        stay listed while the kernel finishes its exit: wait up to `wait` seconds for the groups to empty."""
        import time

        deadline = time.monotonic() + wait
        while self.parent.exists() and any(self.members(g) for g in GROUPS) and time.monotonic() < deadline:
            time.sleep(0.1)
        if self.memory_parent is not None and self.memory_parent.is_dir() and not _procs(self.memory_parent):
            self.memory_parent.rmdir()
        self._remove_accounting()
        if not self.parent.exists():
            return
        for group in GROUPS:
            path = self.parent / group
            if path.exists() and not self.members(group):
                path.rmdir()
        if not any(p.is_dir() for p in self.parent.iterdir() if p.name in GROUPS):
            self.parent.rmdir()

    def _remove_accounting(self) -> None:
        acct = self.accounting_parent
        if acct is None or not acct.is_dir():
            return
        for group in GROUPS:
            path = acct / group
            if path.is_dir() and not _procs(path):
                path.rmdir()
        if not any(p.is_dir() for p in acct.iterdir() if p.name in GROUPS):
            acct.rmdir()


def _move(group: Path, pid: int) -> bool:
    """Moves a process into a group; False when it is gone meanwhile."""
    try:
        _write(group / "cgroup.procs", pid)
        return True
    except (ProcessLookupError, FileNotFoundError):
        return False
    except OSError as exc:
        if exc.errno == 3:  # ESRCH
            return False
        raise


def _procs(group: Path) -> set[int]:
    try:
        return {int(x) for x in (group / "cgroup.procs").read_text().split()}
    except OSError:
        return set()


def _write(path: Path, value) -> None:
    # cgroup files take one value per write() call
    with open(path, "w") as f:
        f.write(str(value))
