"""Apache Flink session cluster: JobManager, TaskManagers (one by default) and the SQL gateway.

The scripts and jars come from the PyPI distribution; our lib/ and opt/ (with the Kafka and Avro
SQL formats and the gateway jar) and our configuration are passed through Flink's own environment
variables, so the venv's copy stays untouched.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass

from brokerstream.launcher.services.base import (
    LOCALE,
    Launch,
    Service,
    gc_flags,
    http_ok,
    jit_flags,
    metrics_agent,
    write_if_changed,
)

METRICS = "platform/metrics/flink-jmx.yaml"
# The three processes share one configuration folder and may be prepared at the same time.
_PREPARE_LOCK = threading.Lock()

# Flink's distribution ships these JVM flags in its default config; the runtime needs them on JDK 17.
JAVA_OPENS = " ".join(
    [
        "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
        "--add-exports=jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED",
        "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
        "--add-exports=jdk.compiler/com.sun.tools.javac.parser=ALL-UNNAMED",
        "--add-exports=jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED",
        "--add-exports=jdk.compiler/com.sun.tools.javac.util=ALL-UNNAMED",
        "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
        *[
            f"--add-opens=java.base/{pkg}=ALL-UNNAMED"
            for pkg in (
                "java.lang",
                "java.net",
                "java.io",
                "java.nio",
                "sun.nio.ch",
                "java.lang.reflect",
                "java.text",
                "java.time",
                "java.util",
                "java.util.concurrent",
                "java.util.concurrent.atomic",
                "java.util.concurrent.locks",
            )
        ],
    ]
)


@dataclass
class FlinkBase(Service):
    """Shared configuration of the three Flink processes (one config.yaml for all)."""

    @property
    def flink_data(self):
        return self.layout.data("flink")

    @property
    def conf_dir(self):
        return self.flink_data / "conf"

    def config(self) -> dict[str, str]:
        # every process reads one configuration: each part names the host its own service is placed on
        jm, tm, gateway = (self.cfg.host(n) for n in ("flink-jobmanager", "flink-taskmanager", "flink-sql-gateway"))
        data = self.flink_data
        return {
            "env.java.opts.all": " ".join([JAVA_OPENS, *LOCALE, *gc_flags(self.cfg["BS_JAVA_GC"])]),
            "jobmanager.bind-host": jm,
            "jobmanager.rpc.address": jm,
            "jobmanager.rpc.port": str(self.cfg.port("flink_jm_rpc")),
            "jobmanager.memory.process.size": self.cfg["BS_FLINK_JM_MEMORY"],
            "jobmanager.memory.jvm-metaspace.size": self.cfg["BS_FLINK_JM_METASPACE"],
            "jobmanager.execution.failover-strategy": "region",
            "taskmanager.bind-host": tm,
            "taskmanager.host": tm,
            "taskmanager.rpc.port": str(self.cfg.port("flink_tm_rpc")),
            "taskmanager.data.port": str(self.cfg.port("flink_tm_data")),
            "taskmanager.numberOfTaskSlots": self.cfg["BS_FLINK_TM_SLOTS"],
            # with several TaskManagers a job's slots go to all of them, not the first one's first
            "taskmanager.load-balance.mode": "SLOTS",
            "taskmanager.memory.process.size": self.cfg["BS_FLINK_TM_MEMORY"],
            "parallelism.default": "1",
            "rest.address": jm,
            "rest.bind-address": jm,
            "rest.port": str(self.cfg.port("flink_rest")),
            "blob.server.port": str(self.cfg.port("flink_blob")),
            "sql-gateway.endpoint.rest.address": gateway,
            "sql-gateway.endpoint.rest.bind-address": gateway,
            "sql-gateway.endpoint.rest.port": str(self.cfg.port("flink_sql_gateway")),
            "state.backend.type": "hashmap",
            "execution.checkpointing.dir": f"file://{data / 'checkpoints'}",
            "execution.checkpointing.savepoint-dir": f"file://{data / 'savepoints'}",
            "io.tmp.dirs": str(data / "tmp"),
            "web.tmpdir": str(data / "web"),
            "web.upload.dir": str(data / "web" / "uploads"),
            "heartbeat.timeout": "30000",
            # The REST API's metrics come from a cache refreshed at most this often, after the ask that set
            # the refresh off was answered (the default 10 s left a bench's 20 s step reading one refresh twice)
            "metrics.fetcher.update-interval": "1000",
            # Metrics as MBeans, served over HTTP by each process's JMX exporter agent (platform/metrics/)
            "metrics.reporter.jmx.factory.class": "org.apache.flink.metrics.jmx.JMXReporterFactory",
        }

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            {
                "FLINK_CONF_DIR": str(self.conf_dir),
                "FLINK_LIB_DIR": str(self.layout.flink_runtime / "lib"),
                "FLINK_OPT_DIR": str(self.layout.flink_runtime / "opt"),
                "FLINK_LOG_DIR": str(self.cfg.log_dir / "flink"),
                "FLINK_PID_DIR": str(self.cfg.run_dir / "flink"),
            }
        )
        if self.cfg.get("BS_JAVA_HOME"):
            env["JAVA_HOME"] = self.cfg["BS_JAVA_HOME"]
        return env

    def script(self, name: str) -> str:
        return str(self.layout.pyflink_home / "bin" / name)

    def prepare(self) -> None:
        with _PREPARE_LOCK:
            self._write_config()

    def _write_config(self) -> None:
        for sub in ("tmp", "web/uploads", "checkpoints", "savepoints"):
            (self.flink_data / sub).mkdir(parents=True, exist_ok=True)
        for folder in (self.cfg.log_dir / "flink", self.cfg.run_dir / "flink"):
            folder.mkdir(parents=True, exist_ok=True)
        text = "".join(f"{k}: {json.dumps(v)}\n" for k, v in self.config().items())
        write_if_changed(self.conf_dir / "config.yaml", text)
        source = self.layout.pyflink_home / "conf"
        for name in (
            "log4j-console.properties",
            "log4j-cli.properties",
            "log4j-session.properties",
            "log4j.properties",
            "logback-console.xml",
        ):
            write_if_changed(self.conf_dir / name, (source / name).read_text())

    def overview(self) -> dict | None:
        body = http_ok(self.cfg.flink_url + "/overview")
        return json.loads(body) if body else None


@dataclass
class FlinkJobManager(FlinkBase):
    def __post_init__(self) -> None:
        self.name = "flink-jobmanager"
        self.cpu_group = "pnl"

    def ports(self) -> dict[str, int]:
        return {
            "rest": self.cfg.port("flink_rest"),
            "rpc": self.cfg.port("flink_jm_rpc"),
            "blob": self.cfg.port("flink_blob"),
            "metrics": self.cfg.port("flink_jm_metrics"),
        }

    def launch(self) -> Launch:
        agent = metrics_agent(self, self.cfg.port("flink_jm_metrics"), METRICS)
        env = {**self.env(), "FLINK_ENV_JAVA_OPTS_JM": " ".join([agent, *jit_flags(self)])}
        return Launch(argv=["bash", self.script("jobmanager.sh"), "start-foreground"], env=env)

    def healthy(self) -> bool:
        return self.overview() is not None


def taskmanager_name(instance: int) -> str:
    """TaskManager 1 keeps the single one's name: `flink-taskmanager`, `flink-taskmanager-2`, ..."""
    return "flink-taskmanager" if instance == 1 else f"flink-taskmanager-{instance}"


@dataclass
class FlinkTaskManager(FlinkBase):
    instance: int = 1

    def __post_init__(self) -> None:
        self.name = taskmanager_name(self.instance)
        self.cpu_group = "pnl"
        self.needs = ("flink-jobmanager",)

    def ports(self) -> dict[str, int]:
        rpc, data = self.cfg.taskmanager_ports(self.instance)
        return {"rpc": rpc, "data": data, "metrics": self.cfg.taskmanager_metrics_port(self.instance)}

    def launch(self) -> Launch:
        # the shared configuration names TaskManager 1's ports; the others override theirs
        rpc, data = self.cfg.taskmanager_ports(self.instance)
        argv = ["bash", self.script("taskmanager.sh"), "start-foreground"]
        if self.instance > 1:
            argv += [
                f"-Dtaskmanager.rpc.port={rpc}",
                f"-Dtaskmanager.data.port={data}",
                f"-Dtaskmanager.host={self.host}",
                f"-Dtaskmanager.bind-host={self.host}",
            ]
        agent = metrics_agent(self, self.cfg.taskmanager_metrics_port(self.instance), METRICS)
        return Launch(argv=argv, env={**self.env(), "FLINK_ENV_JAVA_OPTS_TM": " ".join([agent, *jit_flags(self)])})

    def healthy(self) -> bool:
        # this one's own registration: the JobManager lists each TaskManager with its data port
        body = http_ok(self.cfg.flink_url + "/taskmanagers")
        ports = {tm.get("dataPort") for tm in json.loads(body).get("taskmanagers", [])} if body else set()
        return self.cfg.taskmanager_ports(self.instance)[1] in ports


@dataclass
class FlinkSqlGateway(FlinkBase):
    def __post_init__(self) -> None:
        self.name = "flink-sql-gateway"
        self.needs = ("flink-jobmanager",)

    def ports(self) -> dict[str, int]:
        return {"rest": self.cfg.port("flink_sql_gateway")}

    def launch(self) -> Launch:
        env = {**self.env(), "FLINK_ENV_JAVA_OPTS_SQL_GATEWAY": " ".join(jit_flags(self))}
        return Launch(argv=["bash", self.script("sql-gateway.sh"), "start-foreground"], env=env)

    def healthy(self) -> bool:
        return http_ok(self.cfg.sql_gateway_url + "/v1/info") is not None
