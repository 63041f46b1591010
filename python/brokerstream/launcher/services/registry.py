"""Apicurio Registry 3: the schema registry, speaking the Confluent API under /apis/ccompat/v7.

Schemas live in Postgres (its own database), so they survive restarts and `down`/`up`. The global
compatibility rule is BACKWARD, the Confluent default; Apicurio's own default is NONE.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from brokerstream.launcher.services.base import Launch, Service, http_ok, java_opts, jit_flags


@dataclass
class Registry(Service):
    def __post_init__(self) -> None:
        self.name = "registry"
        self.needs = ("postgres",)

    def ports(self) -> dict[str, int]:
        return {"api": self.cfg.port("registry"), "management": self.cfg.port("registry_management")}

    def metrics_url(self) -> str | None:
        # Quarkus serves Micrometer's Prometheus registry on the management interface
        return f"http://{self.host}:{self.cfg.port('registry_management')}/metrics"

    def properties(self) -> dict[str, str]:
        host = self.cfg.bind
        return {
            "quarkus.http.host": host,
            "quarkus.http.port": str(self.cfg.port("registry")),
            # Quarkus cannot switch the management interface off; keep it on loopback too.
            "quarkus.management.host": host,
            "quarkus.management.port": str(self.cfg.port("registry_management")),
            "quarkus.http.access-log.enabled": "false",
            "apicurio.storage.kind": "sql",
            "apicurio.storage.sql.kind": "postgresql",
            "apicurio.datasource.url": (
                f"jdbc:postgresql://{self.cfg['BS_POSTGRES_HOST']}:{self.cfg.port('postgres')}/{self.cfg['BS_REGISTRY_DB']}"
            ),
            "apicurio.datasource.username": self.cfg["BS_POSTGRES_USER"],
            "apicurio.datasource.jdbc.initial-size": "2",
            "apicurio.datasource.jdbc.min-size": "2",
            "apicurio.datasource.jdbc.max-size": "20",
            "apicurio.rules.global.compatibility": "BACKWARD",
            "apicurio.storage.snapshot.location": str(self.data),
        }

    def prepare(self) -> None:
        self.data.mkdir(parents=True, exist_ok=True)

    def launch(self) -> Launch:
        props = [f"-D{k}={v}" for k, v in self.properties().items()]
        argv = [
            self.cfg.java(min_version=21),
            *java_opts(self.cfg["BS_REGISTRY_HEAP"], *jit_flags(self), gc=self.cfg["BS_JAVA_GC"]),
            f"-Djava.io.tmpdir={self.data}",
            *props,
            "-jar",
            "quarkus-run.jar",
        ]
        # The password goes in the environment (Quarkus maps APICURIO_DATASOURCE_PASSWORD to
        # apicurio.datasource.password), not on the command line, which `ps` shows every user.
        env = {**os.environ, "APICURIO_DATASOURCE_PASSWORD": self.cfg["BS_POSTGRES_PASSWORD"]}
        return Launch(argv=argv, cwd=self.layout.apicurio_home, env=env)

    def healthy(self) -> bool:
        mgmt = f"http://{self.host}:{self.cfg.port('registry_management')}"
        return http_ok(mgmt + "/health/ready") is not None and http_ok(self.cfg.registry_url + "/subjects") is not None
