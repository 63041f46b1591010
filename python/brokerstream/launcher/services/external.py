"""Services that run elsewhere (BS_EXTERNAL_SERVICES): the launcher neither starts nor stops them.

`up` waits for each at the address the configuration gives its clients (BS_KAFKA_BOOTSTRAP,
BS_REGISTRY_URL, BS_POSTGRES_HOST and BS_POSTGRES_PORT, BS_CONNECT_URL, BS_FLINK_URL, BS_SQL_GATEWAY_URL),
then provisions topics, schemas, connectors and the P&L job there and starts our apps against them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from brokerstream.common.config import Config, ConfigError
from brokerstream.launcher.services.base import Service, http_ok

# what a user names -> the native services it replaces (a group: every Kafka node, every Flink process)
EXTERNAL_GROUPS = {
    "postgres": ("postgres",),
    "kafka": ("kafka",),
    "registry": ("registry",),
    "connect": ("connect",),
    "flink": ("flink-jobmanager", "flink-taskmanager", "flink-sql-gateway"),
}


def external_names(cfg: Config) -> set[str]:
    """The native service names BS_EXTERNAL_SERVICES replaces; errors name what may be given."""
    given = [n.strip() for n in (cfg.get("BS_EXTERNAL_SERVICES") or "").split(",") if n.strip()]
    unknown = [n for n in given if n not in EXTERNAL_GROUPS]
    if unknown:
        raise ConfigError(f"BS_EXTERNAL_SERVICES: {', '.join(unknown)} unknown; one of {', '.join(EXTERNAL_GROUPS)}")
    return {name for n in given for name in EXTERNAL_GROUPS[n]}


@dataclass
class External(Service):
    """Stands in for a native service of the same name that runs elsewhere."""

    kind: str = ""

    def __post_init__(self) -> None:
        self.name = self.kind

    def launch(self):
        raise RuntimeError(f"{self.name} is external (BS_EXTERNAL_SERVICES): the launcher does not start it")

    @property
    def address(self) -> str:
        cfg = self.cfg
        return {
            "postgres": f"{cfg['BS_POSTGRES_HOST']}:{cfg.port('postgres')}",
            "kafka": cfg.kafka_bootstrap,
            "registry": cfg.registry_url,
            "connect": cfg.connect_url,
            "flink-sql-gateway": cfg.sql_gateway_url,
        }.get(self.name, cfg.flink_url)

    def healthy(self) -> bool:
        """One real request at the configured address, as a client of the service makes it."""
        cfg = self.cfg
        if self.name == "postgres":
            import psycopg

            try:
                with psycopg.connect(cfg.postgres_dsn(), connect_timeout=3) as conn:
                    return conn.execute("SELECT 1").fetchone() == (1,)
            except psycopg.Error:
                return False
        if self.name == "kafka":
            from confluent_kafka.admin import AdminClient

            from brokerstream.clients.kafka_clients import client_conf

            try:
                return bool(AdminClient(client_conf(cfg)).list_topics(timeout=3).brokers)
            except Exception:  # KafkaException: not reachable (yet)
                return False
        if self.name == "registry":
            return http_ok(cfg.registry_url + "/subjects") is not None
        if self.name == "connect":
            return http_ok(cfg.connect_url + "/connector-plugins") is not None
        if self.name == "flink-sql-gateway":
            return http_ok(cfg.sql_gateway_url + "/v1/info") is not None
        body = http_ok(cfg.flink_url + "/overview")
        if body is None:
            return False
        return self.name == "flink-jobmanager" or json.loads(body).get("taskmanagers", 0) >= 1


@dataclass
class Remote(External):
    """A service of this stack that BS_HOSTS places on another host: the launcher there starts it; here it
    is waited for with its own health probe at its host, and never started or stopped."""

    service: Service | None = None

    def __post_init__(self) -> None:
        assert self.service is not None
        self.name = self.service.name
        self.needs = self.service.needs
        self.phase = self.service.phase
        self.cpu_group = self.service.cpu_group
        self.optional = self.service.optional

    def ports(self) -> dict[str, int]:
        return self.service.ports()

    def metrics_url(self) -> str | None:
        return self.service.metrics_url()

    @property
    def address(self) -> str:
        return f"{self.service.host}:{','.join(str(p) for p in self.ports().values())}"

    def healthy(self) -> bool:
        try:
            return self.service.healthy()
        except Exception:  # not probeable yet (e.g. the secure profile's logins not made yet by its host)
            return False
