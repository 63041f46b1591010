"""Stack configuration: documented defaults in platform/stack.env, overridden by the environment.

Every key of the defaults file may be overridden by an environment variable of the same name;
values may refer to other keys as ${KEY}. The launcher, the tests and the tooling all read the
configuration through `load()`, so a test stack is just a different environment.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from brokerstream.common.errors import UserError

ROOT = Path(__file__).resolve().parents[3]
DEFAULTS_FILE = ROOT / "platform" / "stack.env"

_KEY = re.compile(r"[A-Z][A-Z0-9_]*")
_REF = re.compile(r"\$\{([A-Z][A-Z0-9_]*)\}")


class ConfigError(UserError, ValueError):
    pass


# Services placed on another host (BS_HOSTS) whose address a URL setting derives from BS_BIND: with the
# service placed, the setting names the service's host instead (unless given outright).
PLACED_ADDRESSES = {
    "postgres": "BS_POSTGRES_HOST",
    "registry": "BS_REGISTRY_URL",
    "connect": "BS_CONNECT_URL",
    "flink-jobmanager": "BS_FLINK_URL",
    "flink-sql-gateway": "BS_SQL_GATEWAY_URL",
    "streams": "BS_GATEWAY_URL",
}

MAX_STREAMS_INSTANCES = 4
MAX_TASKMANAGERS = 4
KAFKA_CLUSTER_SIZES = (1, 3)
# plaintext: no authentication (loopback only). sasl_ssl: TLS, SCRAM users and ACLs (kafka_security.py).
KAFKA_SECURITY_MODES = ("plaintext", "sasl_ssl")


def parse_env_file(path: Path) -> dict[str, str]:
    """KEY=VALUE lines; blank lines and # comments ignored. No quoting: values are taken verbatim."""
    values: dict[str, str] = {}
    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not _KEY.fullmatch(key):
            raise ConfigError(f"{path}:{lineno}: expected KEY=VALUE, got {raw!r}")
        values[key] = value.strip()
    return values


def parse_hosts(text: str | None) -> dict[str, str]:
    """BS_HOSTS, "service=address,...": where each named service runs; the others on BS_BIND."""
    out: dict[str, str] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        name, sep, address = item.partition("=")
        if not sep or not name.strip() or not address.strip():
            raise ConfigError(f"BS_HOSTS: {item.strip()!r} is not service=address")
        out[name.strip()] = address.strip()
    return out


def kafka_node_name(node: int) -> str:
    """Node 1 keeps the single broker's name (its data, logs, pid file): `kafka`, `kafka-2`, `kafka-3`."""
    return "kafka" if node == 1 else f"kafka-{node}"


def _resolve(raw: Mapping[str, str]) -> dict[str, str]:
    resolved: dict[str, str] = {}

    def value_of(key: str, chain: tuple[str, ...]) -> str:
        if key in resolved:
            return resolved[key]
        if key in chain:
            raise ConfigError("circular reference: " + " -> ".join(chain + (key,)))
        if key not in raw:
            raise ConfigError(f"{chain[-1]} refers to undefined key {key}")
        text = _REF.sub(lambda m: value_of(m.group(1), chain + (key,)), raw[key])
        resolved[key] = text
        return text

    for key in raw:
        value_of(key, ())
    return resolved


@dataclass(frozen=True)
class Config:
    values: Mapping[str, str]

    def __getitem__(self, key: str) -> str:
        try:
            return self.values[key]
        except KeyError:
            raise ConfigError(f"unknown configuration key {key}") from None

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key, default)

    def int(self, key: str) -> int:
        text = self[key]
        try:
            return int(text)
        except ValueError:
            raise ConfigError(f"{key} must be an integer, got {text!r}") from None

    def path(self, key: str) -> Path:
        return Path(self[key])

    def port(self, name: str) -> int:
        return self.int(f"BS_{name.upper()}_PORT")

    @property
    def root(self) -> Path:
        return Path(self["BS_HOME"])

    @property
    def bind(self) -> str:
        return self["BS_BIND"]

    @property
    def data_dir(self) -> Path:
        return self.path("BS_DATA_DIR")

    @property
    def cache_dir(self) -> Path:
        return self.path("BS_CACHE_DIR")

    @property
    def run_dir(self) -> Path:
        return self.data_dir / "run"

    @property
    def log_dir(self) -> Path:
        return self.data_dir / "logs"

    # --- the Kafka cluster ----------------------------------------------------------------------------
    @property
    def kafka_brokers(self) -> int:
        count = self.int("BS_KAFKA_BROKERS")
        if count not in KAFKA_CLUSTER_SIZES:
            raise ConfigError(
                f"BS_KAFKA_BROKERS must be one of {KAFKA_CLUSTER_SIZES}, got {count}: a cluster "
                "that survives the loss of a broker needs a majority of controllers left"
            )
        return count

    @property
    def kafka_replication(self) -> int:
        """Replication factor of every topic: 1 on one broker, else 3."""
        return 1 if self.kafka_brokers == 1 else 3

    @property
    def kafka_min_insync(self) -> int:
        """Replicas an acks=all write waits for: 2 of 3 lets one broker die without refusing writes."""
        return 1 if self.kafka_brokers == 1 else 2

    @property
    def kafka_security(self) -> str:
        mode = self.get("BS_KAFKA_SECURITY", "plaintext").strip().lower()
        if mode not in KAFKA_SECURITY_MODES:
            raise ConfigError(f"BS_KAFKA_SECURITY must be one of {KAFKA_SECURITY_MODES}, got {mode!r}")
        return mode

    @property
    def kafka_secure(self) -> bool:
        return self.kafka_security == "sasl_ssl"

    def kafka_node_ports(self, node: int) -> tuple[int, int]:
        """(broker, controller) ports of node 1..BS_KAFKA_BROKERS."""
        name = "kafka" if node == 1 else f"kafka_{node}"
        return self.port(name), self.port(f"{name}_controller")

    @property
    def hosts(self) -> dict[str, str]:
        return parse_hosts(self.get("BS_HOSTS"))

    def host(self, service: str) -> str:
        """The address a service runs at: its BS_HOSTS entry, or this stack's bind address."""
        return self.hosts.get(service, self.bind)

    def is_local(self, service: str) -> bool:
        """Whether the launcher here runs the service (it is placed on this host's address)."""
        return self.host(service) == self.bind

    def kafka_metrics_port(self, node: int) -> int:
        """The port where node 1..BS_KAFKA_BROKERS serves its metrics (platform/metrics/kafka-jmx.yaml)."""
        return self.port("kafka_metrics" if node == 1 else f"kafka_{node}_metrics")

    @property
    def kafka_metrics_urls(self) -> list[str]:
        return [
            f"http://{self.host(kafka_node_name(n))}:{self.kafka_metrics_port(n)}/metrics"
            for n in range(1, self.kafka_brokers + 1)
        ]

    # --- where clients find the services (native: derived from bind and ports; compose: containers)
    @property
    def kafka_bootstrap(self) -> str:
        given = self["BS_KAFKA_BOOTSTRAP"]
        if given:
            return given
        return ",".join(
            f"{self.host(kafka_node_name(n))}:{self.kafka_node_ports(n)[0]}" for n in range(1, self.kafka_brokers + 1)
        )

    @property
    def registry_url(self) -> str:
        """The Confluent-compatible schema registry API."""
        return self["BS_REGISTRY_URL"]

    @property
    def connect_url(self) -> str:
        return self["BS_CONNECT_URL"]

    @property
    def flink_url(self) -> str:
        return self["BS_FLINK_URL"]

    @property
    def sql_gateway_url(self) -> str:
        return self["BS_SQL_GATEWAY_URL"]

    @property
    def gateway_url(self) -> str:
        return self["BS_GATEWAY_URL"]

    def _count(self, key: str, most: int, ports: str) -> int:
        """A number of processes of one service, 1 to `most` (each needs its own `ports` keys)."""
        count = self.int(key)
        if not 1 <= count <= most:
            raise ConfigError(f"{key} must be 1 to {most} (each needs its {ports}), got {count}")
        return count

    @property
    def streams_instances(self) -> int:
        return self._count("BS_STREAMS_INSTANCES", MAX_STREAMS_INSTANCES, "BS_GATEWAY_N_PORT")

    @property
    def flink_taskmanagers(self) -> int:
        return self._count("BS_FLINK_TASKMANAGERS", MAX_TASKMANAGERS, "BS_FLINK_TM_N_* ports")

    def taskmanager_ports(self, instance: int) -> tuple[int, int]:
        """(rpc, data) ports of TaskManager 1..BS_FLINK_TASKMANAGERS."""
        name = "flink_tm" if instance == 1 else f"flink_tm_{instance}"
        return self.port(f"{name}_rpc"), self.port(f"{name}_data")

    def taskmanager_metrics_port(self, instance: int) -> int:
        return self.port("flink_tm_metrics" if instance == 1 else f"flink_tm_{instance}_metrics")

    def streams_metrics_port(self, instance: int) -> int:
        return self.port("streams_metrics" if instance == 1 else f"streams_{instance}_metrics")

    def gateway_port(self, instance: int) -> int:
        """The gateway port of streams app instance 1..BS_STREAMS_INSTANCES."""
        return self.port("gateway" if instance == 1 else f"gateway_{instance}")

    @property
    def gateway_urls(self) -> list[str]:
        """Every instance's gateway: the first is BS_GATEWAY_URL (the compose stack points it at its
        container), the others on this stack's bind address."""
        return [self.gateway_url_of(n) for n in range(1, self.streams_instances + 1)]

    def gateway_url_of(self, instance: int) -> str:
        return (
            self.gateway_url
            if instance == 1
            else f"http://{self.host(f'streams-{instance}')}:{self.gateway_port(instance)}"
        )

    def postgres_dsn(self, db: str | None = None) -> str:
        from urllib.parse import quote  # a password may hold '@', ':' or '/'

        return (
            f"postgresql://{quote(self['BS_POSTGRES_USER'], safe='')}:{quote(self['BS_POSTGRES_PASSWORD'], safe='')}"
            f"@{self['BS_POSTGRES_HOST']}:{self.port('postgres')}/{db or self['BS_POSTGRES_DB']}"
        )

    def java(self, min_version: int = 17) -> str:
        home = self["BS_JAVA21_HOME"] if min_version > 17 else self.get("BS_JAVA_HOME", "")
        return str(Path(home) / "bin" / "java") if home else "java"

    def with_overrides(self, **overrides: str) -> "Config":
        return Config({**self.values, **overrides})


def load(environ: Mapping[str, str] | None = None, defaults_file: Path = DEFAULTS_FILE) -> Config:
    environ = os.environ if environ is None else environ
    raw = parse_env_file(defaults_file)
    raw["BS_HOME"] = str(ROOT)
    for key, value in environ.items():
        if key in raw or key.startswith("BS_"):
            raw[key] = value
    for service, address in parse_hosts(raw.get("BS_HOSTS")).items():
        key = PLACED_ADDRESSES.get(service)
        if key and key not in environ:
            raw[key] = raw[key].replace("${BS_BIND}", address)
    cfg = Config(_resolve(raw))
    if "BS_KAFKA_BOOTSTRAP" in cfg.values and not cfg.values["BS_KAFKA_BOOTSTRAP"]:
        # Child processes and tools that read the key itself see the derived address list too.
        cfg = cfg.with_overrides(BS_KAFKA_BOOTSTRAP=cfg.kafka_bootstrap)
    return cfg
