"""Background processes with pid files: start, identify, stop.

A pid file records the pid and the process start time (from /proc), so a recycled pid never
makes us believe a service is running, nor makes `down` signal a stranger's process.
"""

from __future__ import annotations

import ipaddress
import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence


def _start_ticks(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: fields resume after the last ')'.
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] == "Z":  # a zombie is as good as gone
        return None
    return int(fields[19])


def rss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@dataclass(frozen=True)
class PidFile:
    path: Path

    def write(self, pid: int) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps({"pid": pid, "start": _start_ticks(pid)}))

    def read(self) -> tuple[int, int | None] | None:
        try:
            data = json.loads(self.path.read_text())
            return int(data["pid"]), data.get("start")
        except (OSError, ValueError, KeyError):
            return None

    def live_pid(self) -> int | None:
        """The recorded pid if that very process still runs, else None."""
        record = self.read()
        if record is None:
            return None
        pid, start = record
        now = _start_ticks(pid)
        if now is None or (start is not None and now != start):
            return None
        return pid

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def spawn(
    argv: Sequence[str],
    *,
    log: Path,
    pidfile: PidFile,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    user: str | None = None,
) -> int:
    """Start argv detached in its own session, output appended to log; returns its pid."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        out.write(f"\n==== {time.strftime('%Y-%m-%d %H:%M:%S')} starting: {' '.join(argv)}\n".encode())
        out.flush()
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
            user=user,
            group=user,
        )
    pidfile.write(proc.pid)
    return proc.pid


def wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _start_ticks(pid) is None:
            return True
        try:  # reap it if it is our child, so it does not linger as a zombie
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.1)
    return _start_ticks(pid) is None


def terminate(pidfile: PidFile, *, sig: int = signal.SIGTERM, grace: float = 20.0) -> str:
    """Stop the recorded process (and its process group): sig first, SIGKILL after grace seconds."""
    pid = pidfile.live_pid()
    if pid is None:
        pidfile.remove()
        return "not running"
    _signal_group(pid, sig)
    how = "stopped"
    if not wait_gone(pid, grace):
        _signal_group(pid, signal.SIGKILL)
        wait_gone(pid, 10.0)
        how = "killed"
    pidfile.remove()
    return how


def _signal_group(pid: int, sig: int) -> None:
    try:
        # spawn() made each service a session leader, so its pgid is its pid; children go too.
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except ProcessLookupError:
        pass


def listening_sockets(pid: int) -> list[tuple[str, int]]:
    """(address, port) of every TCP socket in LISTEN state held by pid."""
    inodes = set()
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        return []
    found = []
    for table, family in (("tcp", 4), ("tcp6", 6)):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if cols[3] != "0A" or cols[9] not in inodes:  # 0A = TCP_LISTEN
                continue
            addr_hex, port_hex = cols[1].split(":")
            found.append((_decode_addr(addr_hex, family), int(port_hex, 16)))
    return found


def _decode_addr(hexaddr: str, family: int) -> str:
    raw = bytes.fromhex(hexaddr)
    if family == 4:
        return ".".join(str(b) for b in reversed(raw))
    # /proc prints IPv6 as four little-endian 32-bit words.
    words = [raw[i : i + 4][::-1] for i in range(0, 16, 4)]
    address = ipaddress.IPv6Address(b"".join(words))
    # A JVM listening on 127.0.0.1 shows up as the IPv4-mapped ::ffff:127.0.0.1.
    return str(address.ipv4_mapped or address)
