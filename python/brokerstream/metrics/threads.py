"""CPU of a service's threads by name, from /proc: what part of a JVM's CPU its JIT compilers spent.

A JVM compiles the code a load runs while the load runs, on its compiler threads ("C1 CompilerThread0",
"C2 CompilerThread0"; the kernel keeps 15 characters of a thread's name). On a fresh stack that work is a
large part of what a window measures and it falls as the stack runs on, so the cost meter reports it
apart from the rest: a warm-up cost, not a cost per order.

A thread that ends between two readings takes its CPU with it (the process's total keeps it): the JVM
may stop compiler threads it started beyond the first of each kind, so a difference of two readings is
at least what the compilers spent.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import psutil

JIT_COMPILERS = ("C1 CompilerThre", "C2 CompilerThre")
PROC = Path("/proc")


def thread_seconds(pids: Iterable[int], prefixes: tuple[str, ...], proc: Path = PROC) -> float:
    """CPU seconds (user and system) of the threads of `pids` whose name starts with one of `prefixes`."""
    ticks = 0
    for pid in pids:
        try:
            tasks = list((proc / str(pid) / "task").iterdir())
        except OSError:  # the process ended
            continue
        for task in tasks:
            try:
                if not (task / "comm").read_text().rstrip("\n").startswith(prefixes):
                    continue
                # the name in parentheses may hold spaces: the fields after it are positional
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):  # the thread ended between the listing and the read
                continue
            ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return ticks / os.sysconf("SC_CLK_TCK")


def jit_seconds(procs: dict[int, psutil.Process], pid: int) -> float:
    """CPU seconds the JIT compilers of a service spent: its process and everything it started."""
    try:
        root = procs.setdefault(pid, psutil.Process(pid))
        tree = [root.pid] + [p.pid for p in root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    return thread_seconds(tree, JIT_COMPILERS)
