"""CPU priority between the dataflows: cgroup v1 `cpu` groups, one per role, weighted by cpu.shares.

On a saturated machine the kernel shares CPU between runnable groups in proportion to their shares,
so the order flow (Kafka and the streams app) keeps the cores it needs while the P&L flow and the
Postgres sync fall behind and catch up later. Shares only matter under contention: an idle group
takes nothing from the others, and a busy one alone may use every core.

    <cgroup root>/cpu/bs-<id of the data folder>/orders | clients | platform | pnl | sync

One parent per data folder, so the test stack and the default stack never share groups. The parent
is also where a resource step's CPU quota goes (cpu.cfs_quota_us limits the whole stack).
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from ..config import Config

CGROUP_CPU = Path("/sys/fs/cgroup/cpu")
GROUPS = ("orders", "clients", "platform", "pnl", "sync")


@dataclass(frozen=True)
class CpuGroups:
    parent: Path
    shares: dict[str, int]
    enabled: bool

    @classmethod
    def of(cls, cfg: Config, root: Path = CGROUP_CPU) -> "CpuGroups":
        mode = (cfg.get("BS_CPU_PRIORITY") or "auto").lower()
        if mode not in ("on", "off", "auto"):
            raise ValueError(f"BS_CPU_PRIORITY is on, off or auto, got {mode!r}")
        ident = hashlib.sha1(str(cfg.data_dir.resolve()).encode()).hexdigest()[:8]
        shares = {g: cfg.int(f"BS_CPU_SHARES_{g.upper()}") for g in GROUPS}
        writable = root.is_dir() and os.access(root, os.W_OK)
        if mode == "on" and not writable:
            raise PermissionError(f"BS_CPU_PRIORITY=on but {root} is not a writable cgroup v1 cpu hierarchy")
        return cls(root / f"bs-{ident}", shares, mode == "on" or (mode == "auto" and writable))

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

    def place(self, group: str, pids: list[int]) -> int:
        """Moves processes (all their threads) into a group; returns how many moved. The first pid
        should be the parent: what it forks afterwards is born in the group."""
        if not self.enabled or not pids:
            return 0
        self.ensure()
        moved = 0
        for pid in pids:
            try:
                _write(self.path(group) / "cgroup.procs", pid)
                moved += 1
            except (ProcessLookupError, FileNotFoundError):
                continue  # gone meanwhile
            except OSError as exc:
                if exc.errno == 3:  # ESRCH: gone meanwhile
                    continue
                raise
        return moved

    def join(self, group: str) -> None:
        """Moves the calling process into a group (a child's preexec_fn: what it execs is born there)."""
        if self.enabled:
            self.ensure()
            _write(self.path(group) / "cgroup.procs", os.getpid())

    def members(self, group: str) -> set[int]:
        try:
            return {int(x) for x in (self.path(group) / "cgroup.procs").read_text().split()}
        except OSError:
            return set()

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

    def remove(self) -> None:
        """Deletes the groups once no process is left in them."""
        if not self.parent.exists():
            return
        for group in GROUPS:
            path = self.parent / group
            if path.exists() and not self.members(group):
                path.rmdir()
        if not any(p.is_dir() for p in self.parent.iterdir() if p.name in GROUPS):
            self.parent.rmdir()


def _write(path: Path, value) -> None:
    # cgroup files take one value per write() call
    with open(path, "w") as f:
        f.write(str(value))
