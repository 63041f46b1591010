"""Kafka Connect: one distributed worker with the Debezium source, our Postgres sink and the Apicurio converter."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from brokerstream.clients.kafka_security import java_client_properties
from brokerstream.launcher.services.base import (
    Launch,
    Service,
    http_ok,
    java_opts,
    jit_flags,
    metrics_agent,
    write_if_changed,
)
from brokerstream.launcher.services.kafka import LOG4J

METRICS = "platform/metrics/connect-jmx.yaml"
REQUIRED_PLUGINS = (
    "io.debezium.connector.postgresql.PostgresConnector",
    "io.brokerstream.connect.postgres.PostgresSinkConnector",
)


@dataclass
class Connect(Service):
    def __post_init__(self) -> None:
        self.name = "connect"
        self.cpu_group = "sync"
        self.needs = ("kafka",)

    def ports(self) -> dict[str, int]:
        return {"rest": self.cfg.port("connect"), "metrics": self.cfg.port("connect_metrics")}

    def properties(self) -> str:
        host, port = self.cfg.bind, self.cfg.port("connect")
        settings = {
            "bootstrap.servers": self.cfg.kafka_bootstrap,
            "group.id": "brokerstream-connect",
            "listeners": f"http://{host}:{port}",
            "rest.advertised.host.name": host,
            "rest.advertised.port": str(port),
            # Keys are plain strings; values Avro in the Confluent wire format through the registry.
            # Converters are the worker's, not the connectors': compose's worker uses Confluent's
            # converter with the same connectors/*.json files.
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            # Apicurio's converter, wrapped so that a registry that is down is waited out: Connect would
            # dead-letter whatever a converter throws, an outage's errors included (connectors/registry-faults).
            "value.converter": "io.brokerstream.connect.convert.RegistryFaultsConverter",
            "value.converter.delegate": "io.apicurio.registry.utils.converter.AvroConverter",
            "value.converter.apicurio.registry.url": (
                f"http://{self.cfg.host('registry')}:{self.cfg.port('registry')}/apis/registry/v2"
            ),
            "value.converter.apicurio.registry.auto-register": "true",
            "value.converter.apicurio.registry.find-latest": "true",
            # The Confluent wire format: magic byte and a 4-byte content id (what ccompat serves).
            "value.converter.apicurio.registry.as-confluent": "true",
            "value.converter.apicurio.registry.use-id": "contentId",
            # as-confluent frames the id, but the id also goes to headers unless these are off.
            "value.converter.apicurio.registry.headers.enabled": "false",
            # The converter asks the registry again for every schema it has held 30 s. A content id never
            # changes, but a refresh while the registry is down failed the task (refdata-source: "Tolerance
            # exceeded") or dead-lettered a sink's record; with this it keeps what it held and says so.
            "value.converter.apicurio.registry.fault-tolerant-refresh": "true",
            # connectors/*.json say ${env:BS_POSTGRES_HOST}; no secret lands in the config topic.
            "config.providers": "env",
            "config.providers.env.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
            "config.storage.topic": "_connect-configs",
            "offset.storage.topic": "_connect-offsets",
            "status.storage.topic": "_connect-status",
            "config.storage.replication.factor": str(self.cfg.kafka_replication),
            "offset.storage.replication.factor": str(self.cfg.kafka_replication),
            "status.storage.replication.factor": str(self.cfg.kafka_replication),
            "offset.flush.interval.ms": "1000",
            "plugin.path": str(self.layout.connect_plugins),
            # Reading ServiceLoader manifests instead of scanning every jar: 4-8 s to ready, not 24 s.
            "plugin.discovery": "service_load",
            "exactly.once.source.support": "enabled",
            # A worker that lost its group membership (its coordinator's broker died) rejoins as a new
            # member; by default the leader then holds the connectors it ran for 5 minutes in case the old
            # member comes back. One worker, or a few restarted by a supervisor, come back within seconds.
            "scheduled.rebalance.max.delay.ms": "10000",
        }
        # The secure profile's login for the worker and for every client it makes for connectors.
        for key, value in java_client_properties(self.cfg, "connect").items():
            for prefix in ("", "producer.", "consumer.", "admin."):
                settings[prefix + key] = value
        return "".join(f"{k}={v}\n" for k, v in settings.items())

    @property
    def properties_file(self):
        return self.data / "connect-distributed.properties"

    def prepare(self) -> None:
        self.data.mkdir(parents=True, exist_ok=True)
        write_if_changed(self.properties_file, self.properties())

    def launch(self) -> Launch:
        argv = [
            self.cfg.java(),
            *java_opts(self.cfg["BS_CONNECT_HEAP"], *jit_flags(self), gc=self.cfg["BS_JAVA_GC"]),
            metrics_agent(self, self.cfg.port("connect_metrics"), METRICS),
            f"-Dlog4j2.configurationFile={self.cfg.root / LOG4J}",
            "-cp",
            str(self.layout.kafka_lib / "*"),
            "org.apache.kafka.connect.cli.ConnectDistributed",
            str(self.properties_file),
        ]
        env = dict(os.environ)
        env.update({k: v for k, v in self.cfg.values.items() if k.startswith("BS_POSTGRES_")})
        return Launch(argv=argv, env=env)

    def healthy(self) -> bool:
        body = http_ok(self.cfg.connect_url + "/connector-plugins")
        if body is None:
            return False
        found = {p.get("class") for p in json.loads(body)}
        return all(plugin in found for plugin in REQUIRED_PLUGINS)
