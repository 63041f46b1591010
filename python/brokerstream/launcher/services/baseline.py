"""The architecture baseline: the seed thesis's database-centric monolith (baseline/, one fat jar,
Java 21 for its virtual threads). Optional: a plain `up` leaves it out, since it and the streams app
would both decide every order; `up baseline` or `bench drain --architecture baseline` start it."""

from __future__ import annotations

import os
from dataclasses import dataclass

from brokerstream.clients.kafka_security import java_client_file
from brokerstream.launcher.services.base import Launch, Service, http_ok, java_opts, jit_flags

JAR = ("baseline", "baseline-0.1.0.jar")


@dataclass
class Baseline(Service):
    def __post_init__(self) -> None:
        self.name = "baseline"
        self.cpu_group = "orders"
        self.needs = ("kafka", "registry", "postgres")
        self.phase = 2  # after the topics and schemas exist
        self.optional = True

    def ports(self) -> dict[str, int]:
        return {"http": self.cfg.port("baseline")}

    def metrics_url(self) -> str | None:
        return f"http://{self.cfg.bind}:{self.cfg.port('baseline')}/metrics"

    def prepare(self) -> None:
        self.data.mkdir(parents=True, exist_ok=True)
        jar = self.layout.module_jar(*JAR)
        if not jar.exists():
            raise FileNotFoundError(f"{jar} is missing: run ./brokerstream install (it builds the Java modules)")

    def environment(self) -> dict[str, str]:
        """The baseline's settings (baseline-defaults.properties) from the stack's."""
        cfg = self.cfg
        return {
            "BASELINE_CONFIG_FILE": cfg["BS_BASELINE_CONFIG"],
            "BASELINE_KAFKA_BOOTSTRAP": cfg.kafka_bootstrap,
            "BASELINE_KAFKA_LOGIN": str(java_client_file(cfg, "streams") or ""),
            "BASELINE_REGISTRY_URL": cfg.registry_url,
            "BASELINE_DB_URL": f"jdbc:postgresql://{cfg['BS_POSTGRES_HOST']}:{cfg.port('postgres')}/{cfg['BS_POSTGRES_DB']}",
            "BASELINE_DB_USER": cfg["BS_POSTGRES_USER"],
            "BASELINE_DB_PASSWORD": cfg["BS_POSTGRES_PASSWORD"],
            "BASELINE_HTTP_HOST": cfg.bind,
            "BASELINE_HTTP_PORT": str(cfg.port("baseline")),
        }

    def launch(self) -> Launch:
        env = dict(os.environ)
        env.update(self.environment())
        argv = [
            self.cfg.java(min_version=21),
            *java_opts(self.cfg["BS_BASELINE_HEAP"], *jit_flags(self), gc=self.cfg["BS_JAVA_GC"]),
            f"-Djava.io.tmpdir={self.data}",
            *self.cfg["BS_BASELINE_JAVA_OPTS"].split(),
            "-jar",
            str(self.layout.module_jar(*JAR)),
        ]
        return Launch(argv=argv, env=env, cwd=self.data)

    def healthy(self) -> bool:
        return http_ok(f"http://{self.cfg.bind}:{self.cfg.port('baseline')}/health") is not None

    def metrics(self) -> dict[str, int] | None:
        """Its counters by name (`orders_accepted`, ...), read from its Prometheus endpoint."""
        from brokerstream.clients.prometheus import samples

        body = http_ok(f"http://{self.cfg.bind}:{self.cfg.port('baseline')}/metrics")
        if not body:
            return None
        prefix, suffix = "brokerstream_baseline_", "_total"
        return {
            s.name[len(prefix) : -len(suffix)]: int(s.value)
            for s in samples(body.decode())
            if s.name.startswith(prefix) and s.name.endswith(suffix)
        }
