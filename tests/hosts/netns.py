"""Hosts for a test, made of Linux network namespaces it creates and removes: one namespace per host,
each with one veth interface and one address, their peers on a bridge in a namespace of its own, so no
interface or address is ever added outside the namespaces made here."""

from __future__ import annotations

import ctypes
import os
import subprocess
from dataclasses import dataclass

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL("libc.so.6", use_errno=True)


def _ip(*args: str) -> None:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"ip {' '.join(args)}: {proc.stderr.strip()}")


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


@dataclass
class Network:
    """`hosts`: name -> address in `subnet`.0/24. Namespaces are `<prefix>-<name>`; the bridge's is
    `<prefix>-switch`."""

    prefix: str
    subnet: str
    hosts: dict[str, str]

    def ns(self, name: str) -> str:
        return f"{self.prefix}-{name}"

    @property
    def switch(self) -> str:
        return self.ns("switch")

    def names(self) -> list[str]:
        return [self.switch] + [self.ns(h) for h in self.hosts]

    def create(self) -> None:
        self.delete()  # what an interrupted earlier run left behind
        _ip("netns", "add", self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        for i, (host, address) in enumerate(self.hosts.items()):
            ns, peer = self.ns(host), f"port{i}"
            _ip("netns", "add", ns)
            _ip("-n", ns, "link", "set", "lo", "up")
            # both ends are made inside namespaces: the host's eth0 and its peer on the switch
            _ip("-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", peer, "netns", self.switch)
            _ip("-n", ns, "addr", "add", f"{address}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            _ip("-n", self.switch, "link", "set", peer, "master", "br0")
            _ip("-n", self.switch, "link", "set", peer, "up")

    def delete(self) -> None:
        """Deleting a namespace deletes its interfaces (and the veth peers with them)."""
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        present = {line.split()[0] for line in listed.splitlines() if line.strip()}
        for ns in self.names():
            if ns in present:
                _ip("netns", "del", ns)

    def run_in(self, host: str, argv: list[str], **kw) -> subprocess.Popen:
        """A process (and all it starts) on a host."""
        return subprocess.Popen(["ip", "netns", "exec", self.ns(host), *argv], **kw)


class Inside:
    """This thread (and the threads and processes it starts from now on) in a host's namespace, back
    where it was on exit."""

    def __init__(self, network: Network, host: str):
        self.path = f"/run/netns/{network.ns(host)}"
        self.home: int | None = None

    def __enter__(self):
        self.home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        fd = os.open(self.path, os.O_RDONLY)
        try:
            _setns(fd)
        finally:
            os.close(fd)
        return self

    def __exit__(self, *exc):
        assert self.home is not None
        try:
            _setns(self.home)
        finally:
            os.close(self.home)
