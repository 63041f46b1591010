"""The order flow: our Kafka Streams app and its HTTP gateway (streams/, one fat jar)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from brokerstream.clients.kafka_security import GATEWAY, java_client_file
from brokerstream.launcher.services.base import Launch, Service, http_ok, java_opts, jit_flags

JAR = ("streams", "streams-0.1.0.jar")


def instance_name(instance: int) -> str:
    """Instance 1 keeps the single app's name (its data, logs, pid file): `streams`, `streams-2`, ..."""
    return "streams" if instance == 1 else f"streams-{instance}"


@dataclass
class StreamsApp(Service):
    instance: int = 1

    def __post_init__(self) -> None:
        self.name = instance_name(self.instance)
        self.cpu_group = "orders"
        self.needs = ("kafka", "registry")
        self.phase = 2  # after the topics and schemas exist
        self.stop_grace = 45.0  # a clean close commits and writes checkpoints: a fast restart

    def ports(self) -> dict[str, int]:
        return {
            "gateway": self.cfg.gateway_port(self.instance),
            "metrics": self.cfg.streams_metrics_port(self.instance),
        }

    def prepare(self) -> None:
        self.data.mkdir(parents=True, exist_ok=True)
        jar = self.layout.module_jar(*JAR)
        if not jar.exists():
            raise FileNotFoundError(f"{jar} is missing: run ./brokerstream install (it builds the Java modules)")

    def environment(self) -> dict[str, str]:
        """The app's settings (streams/src/main/resources/broker-defaults.properties) from the stack's."""
        cfg = self.cfg
        return {
            "BROKER_KAFKA_BOOTSTRAP": cfg.kafka_bootstrap,
            "BROKER_REGISTRY_URL": cfg.registry_url,
            "BROKER_STATE_DIR": str(self.data / "state"),
            "BROKER_STREAM_THREADS": cfg["BS_STREAMS_THREADS"],
            "BROKER_GATEWAY_HOST": self.host,
            "BROKER_GATEWAY_ADVERTISED_HOST": self.host,
            "BROKER_GATEWAY_PORT": str(cfg.gateway_port(self.instance)),
            "BROKER_METRICS_HOST": self.host,
            "BROKER_METRICS_PORT": str(cfg.streams_metrics_port(self.instance)),
            # the secure profile's logins: files, so no password is in the environment or argv
            "BROKER_KAFKA_LOGIN": str(java_client_file(cfg, "streams") or ""),
            "BROKER_GATEWAY_KAFKA_LOGIN": str(java_client_file(cfg, GATEWAY) or ""),
        }

    def launch(self) -> Launch:
        env = dict(os.environ)
        env.update(self.environment())
        argv = [
            self.cfg.java(),
            *java_opts(self.cfg["BS_STREAMS_HEAP"], *jit_flags(self), gc=self.cfg["BS_JAVA_GC"]),
            f"-Djava.io.tmpdir={self.data}",
            *self.cfg["BS_STREAMS_JAVA_OPTS"].split(),
            "-jar",
            str(self.layout.module_jar(*JAR)),
        ]
        return Launch(argv=argv, env=env, cwd=self.data)

    def healthy(self) -> bool:
        return http_ok(self.url + "/health") is not None

    @property
    def url(self) -> str:
        return self.cfg.gateway_url_of(self.instance)
