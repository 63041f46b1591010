"""What every service of the native stack tells the launcher: how to prepare, start and probe it."""

from __future__ import annotations

import re
import signal
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from brokerstream.common.config import Config
from brokerstream.launcher.layout import Layout


@dataclass(frozen=True)
class Launch:
    argv: Sequence[str]
    env: Mapping[str, str] | None = None
    cwd: Path | None = None
    user: str | None = None


@dataclass
class Service:
    cfg: Config
    layout: Layout
    name: str = field(init=False, default="")
    needs: tuple[str, ...] = field(init=False, default=())
    # SIGTERM is a graceful stop for the JVMs; Postgres wants SIGINT for a fast shutdown.
    stop_signal: int = field(init=False, default=signal.SIGTERM)
    stop_grace: float = field(init=False, default=30.0)
    # 1: infrastructure, started first; 2: our apps, started once topics and schemas exist.
    phase: int = field(init=False, default=1)
    # Which CPU group it runs in (launcher/cpugroups.py): orders, platform, pnl or sync.
    cpu_group: str = field(init=False, default="platform")
    # Optional services start only when named (`up baseline`); a plain `up` leaves them out.
    optional: bool = field(init=False, default=False)

    def ports(self) -> dict[str, int]:
        return {}

    @property
    def host(self) -> str:
        """The address it runs at: this stack's bind address, or the host BS_HOSTS places it on."""
        return self.cfg.host(self.name)

    def metrics_url(self) -> str | None:
        """Its Prometheus endpoint: GET /metrics on its "metrics" port, when it has one."""
        port = self.ports().get("metrics")
        return f"http://{self.host}:{port}/metrics" if port else None

    def prepare(self) -> None:
        """Idempotent setup before a start: folders, config files, first-time formatting."""

    def launch(self) -> Launch:
        raise NotImplementedError

    def healthy(self) -> bool:
        """One real request to the running service; True when it answers as a healthy one does."""
        raise NotImplementedError

    def after_start(self) -> None:
        """Work that needs the service up (databases, users); idempotent."""

    @property
    def data(self) -> Path:
        return self.layout.data(self.name)

    @property
    def log(self) -> Path:
        return self.layout.log(self.name)


def http_ok(url: str, timeout: float = 2.0) -> bytes | None:
    """The body of a 2xx answer, or None for anything else (refused, timeout, error status)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.read() if 200 <= resp.status < 300 else None
    except (urllib.error.URLError, OSError, ValueError):
        return None


def port_open(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def write_if_changed(path: Path, text: str) -> None:
    """Config files are the stack user's alone (mode 0600): in the secure profile some hold passwords."""
    from brokerstream.clients.kafka_security import write_private

    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        write_private(path, text)


# A locale with a country: with a language alone (what C.UTF-8 gives Java) every String.format of a number
# builds the locale's DecimalFormatSymbols anew, and Kafka Streams formats a log line per empty input
# partition on every pass of its loop, logged or not: a tenth of the stream thread's CPU.
LOCALE = ["-Duser.language=en", "-Duser.country=US"]


# The collectors BS_JAVA_GC may name, with the flags each takes.
GARBAGE_COLLECTORS = {
    "G1": ("-XX:+UseG1GC", "-XX:MaxGCPauseMillis=50"),
    "Parallel": ("-XX:+UseParallelGC",),
    "Serial": ("-XX:+UseSerialGC",),
}


def gc_flags(name: str) -> list[str]:
    if name not in GARBAGE_COLLECTORS:
        raise ValueError(f"BS_JAVA_GC must be one of {', '.join(GARBAGE_COLLECTORS)}, got {name!r}")
    return list(GARBAGE_COLLECTORS[name])


# The JVMs BS_JAVA_C1_ONLY may name: a service, or every instance of it (`streams` covers `streams-2`).
JVM_SERVICES = (
    "kafka",
    "registry",
    "connect",
    "streams",
    "baseline",
    "flink-jobmanager",
    "flink-taskmanager",
    "flink-sql-gateway",
)


def jit_flags(service: "Service") -> list[str]:
    """C1 alone for a JVM BS_JAVA_C1_ONLY names: it compiles what it runs in a fraction of the CPU that
    C2 spends and runs it somewhat slower, which is the better trade for a JVM that does little per order.
    """
    named = [n.strip() for n in service.cfg.get("BS_JAVA_C1_ONLY", "").split(",") if n.strip()]
    unknown = [n for n in named if n not in JVM_SERVICES]
    if unknown:
        raise ValueError(f"BS_JAVA_C1_ONLY names JVMs of {', '.join(JVM_SERVICES)}, not {', '.join(unknown)}")
    base = re.sub(r"-[0-9]+$", "", service.name)
    return ["-XX:TieredStopAtLevel=1"] if base in named else []


def metrics_agent(service: "Service", port: int, rules: str) -> str:
    """The Prometheus JMX exporter as a Java agent: GET /metrics on the stack's address and `port`, serving
    what `rules` (a file of platform/metrics/) selects, and the JVM's own metrics."""
    return f"-javaagent:{service.layout.metrics_agent}={service.host}:{port}:{service.cfg.root / rules}"


def java_opts(heap: str, *extra: str, gc: str = "G1") -> list[str]:
    # A capped heap keeps RSS predictable; a small initial heap keeps an idle stack small.
    return [
        "-Xms64m",
        f"-Xmx{heap}",
        *gc_flags(gc),
        "-XX:+ExitOnOutOfMemoryError",
        "-Djava.awt.headless=true",
        *LOCALE,
        *extra,
    ]
