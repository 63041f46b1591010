"""The stack on several hosts, made here as network namespaces (tests/hosts/netns.py): each host runs the
launcher for the services placed on its address (BS_HOSTS, BS_BIND) and waits for the others at theirs,
as an operator runs it on several machines. Kafka is three nodes on three hosts with TLS and SCRAM
(BS_KAFKA_SECURITY=sasl_ssl, certificates naming each host's address); the streams app runs on two hosts.

    host 1  10.203.0.1  postgres, kafka (node 1), registry, streams (instance 1)
    host 2  10.203.0.2  kafka-2, connect, streams-2
    host 3  10.203.0.3  kafka-3, the Flink JobManager, TaskManager and SQL gateway (the P&L job)
    client  10.203.0.100  this test's own sockets (the test thread enters its namespace)

Its data folder is .data-test-hosts/; every port is the default (each host has its own). Needs root and
iproute2; the namespaces, their interfaces and every process are removed at the end, also on failure.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass

import pytest

from brokerstream.common import config
from brokerstream.launcher.layout import Layout
from brokerstream.launcher.procs import wait_gone

from ..integration.conftest import LAUNCHER, ROOT
from .netns import Inside, Network

ADDRESSES = {"h1": "10.203.0.1", "h2": "10.203.0.2", "h3": "10.203.0.3", "client": "10.203.0.100"}
PLACEMENT = {
    "h1": ("postgres", "kafka", "registry", "streams"),
    "h2": ("kafka-2", "connect", "streams-2"),
    "h3": ("kafka-3", "flink-jobmanager", "flink-taskmanager", "flink-sql-gateway"),
}
# Every host's infrastructure first, each `up` waiting for what it needs from the others (host 1 names
# the other nodes so that its topics are made once the whole cluster is up); then `up` on every host.
FIRST = {
    "h1": ("postgres", "kafka", "kafka-2", "kafka-3", "registry"),
    "h2": ("kafka-2", "connect"),
    "h3": ("kafka-3", "flink-jobmanager", "flink-taskmanager", "flink-sql-gateway"),
}
DATA = ROOT / ".data-test-hosts"


def host_environ(host: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BS_")}
    env.update(
        {
            "BS_DATA_DIR": str(DATA),
            "BS_BIND": ADDRESSES[host],
            "BS_HOSTS": ",".join(f"{s}={ADDRESSES[h]}" for h, services in PLACEMENT.items() for s in services),
            "BS_KAFKA_BROKERS": "3",
            "BS_KAFKA_SECURITY": "sasl_ssl",
            "BS_KAFKA_HEAP": "512m",
            "BS_STREAMS_INSTANCES": "2",
        }
    )
    return env


@dataclass
class Hosts:
    network: Network
    cfg: config.Config  # the client's view: every service on its host's address

    def up(self, plan: dict[str, tuple[str, ...]], timeout: float = 600) -> None:
        """`up` on every host of the plan at once (each waits for the others' services); all must pass."""
        logs = DATA / "host-logs"
        logs.mkdir(parents=True, exist_ok=True)
        procs = {}
        for host, services in plan.items():
            out = (logs / f"{host}-up.log").open("a")
            argv = [LAUNCHER, "up", "--no-install", *services]
            procs[host] = (self.network.run_in(host, argv, env=host_environ(host), stdout=out, stderr=out), out)
        deadline = time.monotonic() + timeout
        failed = []
        for host, (proc, out) in procs.items():
            try:
                rc = proc.wait(max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = "timeout"
            out.close()
            if rc != 0:
                failed.append(f"{host}: `up` {rc}:\n{(logs / f'{host}-up.log').read_text()[-4000:]}")
        assert not failed, "\n".join(failed)

    def kill(self, host: str) -> list[str]:
        """Every process of the host's services, SIGKILL to each one's process group: the host is gone."""
        layout, killed = Layout(self.cfg), []
        for name in PLACEMENT[host]:
            pid = layout.pidfile(name).live_pid()
            if pid is not None:
                os.killpg(pid, signal.SIGKILL)
                killed.append(name)
        return killed

    def down(self) -> None:
        """Every host killed the way the test kills host 2. Its data folder is thrown away, so a graceful `down`
        would buy nothing, and it costs over a minute here: with host 2 gone, the last Kafka nodes to stop lose
        their quorum and wait out their grace (a graceful `down` has its own test in tests/integration)."""
        layout = Layout(self.cfg)
        pids = [layout.pidfile(name).live_pid() for services in PLACEMENT.values() for name in services]
        for host in PLACEMENT:
            self.kill(host)
        for pid in filter(None, pids):
            wait_gone(pid, 30)


@pytest.fixture(scope="session")
def hosts():
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.fail("the several-hosts suite makes network namespaces: it needs root and iproute2 (`ip`)")
    network = Network("bs-t", "10.203.0", ADDRESSES)
    cfg = config.load(environ=host_environ("client"))
    shutil.rmtree(DATA, ignore_errors=True)
    network.create()
    running = Hosts(network, cfg)
    try:
        with Inside(network, "client"):
            try:
                running.up(FIRST)
                running.up({h: () for h in PLACEMENT})
                yield running
            finally:
                running.down()
    finally:
        network.delete()
        leftover = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert not [n for n in network.names() if n in leftover.split()], leftover
