"""A service's CPU by thread name from /proc: the JIT compilers' threads counted, the others not, a thread
or process that ends while it is read skipped; and a real JVM's compilers found."""

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from brokerstream.metrics import threads

HZ = os.sysconf("SC_CLK_TCK")


def task(proc: Path, pid: int, tid: int, name: str, utime: int, stime: int) -> None:
    d = proc / str(pid) / "task" / str(tid)
    d.mkdir(parents=True)
    (d / "comm").write_text(name + "\n")
    # the name in parentheses may hold spaces and a ")"; utime and stime are fields 14 and 15
    fields = ["S", "1", "1", "1", "0", "-1", "0", "0", "0", "0", "0", str(utime), str(stime), "0", "0"]
    (d / "stat").write_text(f"{tid} ({name[:15]}) " + " ".join(fields) + "\n")


@pytest.mark.parametrize(
    "names, expected_ticks",
    [
        (["C2 CompilerThre", "C1 CompilerThre", "main"], 2 * (10 + 3)),
        (["data-plane-kafk", "GC Thread#0"], 0),
        (["C2 CompilerThre"], 13),
        (["x) C2 CompilerThre"], 0),  # a name that only contains the prefix is not a compiler
    ],
)
def test_only_the_named_threads_are_summed(tmp_path, names, expected_ticks):
    for i, name in enumerate(names):
        task(tmp_path, 7, 100 + i, name, 10, 3)
    assert threads.thread_seconds([7], threads.JIT_COMPILERS, tmp_path) == pytest.approx(expected_ticks / HZ)


def test_processes_are_added_up_and_one_that_ended_counts_nothing(tmp_path):
    task(tmp_path, 7, 70, "C2 CompilerThre", 100, 0)
    task(tmp_path, 8, 80, "C1 CompilerThre", 0, 50)
    (tmp_path / "8" / "task" / "81").mkdir(parents=True)  # a thread that ended between listing and reading
    assert threads.thread_seconds([7, 8, 9], threads.JIT_COMPILERS, tmp_path) == pytest.approx(150 / HZ)


def test_a_live_jvms_compilers_are_found_and_their_cpu_only_grows(tmp_path):
    java = shutil.which("java")
    if java is None:
        pytest.skip("no java on PATH")
    src = tmp_path / "Spin.java"
    src.write_text(
        "public class Spin { public static void main(String[] a) throws Exception {"
        " long s = 0; for (long i = 0; i < 3_000_000_000L; i++) { s += i % 7; }"
        " System.out.println(s); Thread.sleep(60_000); } }"
    )
    jvm = subprocess.Popen([java, str(src)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        procs: dict = {}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and threads.jit_seconds(procs, jvm.pid) == 0:
            time.sleep(0.2)  # the source launcher compiles the class with javac's own code: the JIT works
        first = threads.jit_seconds(procs, jvm.pid)
        assert first > 0
        names = {
            (Path(f"/proc/{jvm.pid}/task") / t / "comm").read_text().strip()
            for t in os.listdir(f"/proc/{jvm.pid}/task")
        }
        assert names & set(threads.JIT_COMPILERS)
        assert threads.jit_seconds(procs, jvm.pid) >= first
    finally:
        jvm.kill()
        jvm.wait()
    assert threads.jit_seconds({}, jvm.pid) == 0.0  # gone: nothing, no error
