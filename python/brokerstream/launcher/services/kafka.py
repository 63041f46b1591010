"""Apache Kafka: one KRaft node that is both broker and controller, on loopback."""
from __future__ import annotations

from dataclasses import dataclass

from ..progress import run
from .base import Launch, Service, java_opts, port_open, write_if_changed

LOG4J = "platform/logging/kafka-log4j2.properties"


@dataclass
class Kafka(Service):
    def __post_init__(self) -> None:
        self.name = "kafka"
        self.cpu_group = "orders"
        self.stop_grace = 60.0  # a clean shutdown spares the next start its log recovery

    def ports(self) -> dict[str, int]:
        return {"broker": self.cfg.port("kafka"), "controller": self.cfg.port("kafka_controller")}

    @property
    def properties_file(self):
        return self.data / "server.properties"

    def properties(self) -> str:
        host, port, cport = self.cfg.bind, self.cfg.port("kafka"), self.cfg.port("kafka_controller")
        settings = {
            "process.roles": "broker,controller",
            "node.id": "1",
            # A static voter set: the quorum follows the configured port even after a port change.
            "controller.quorum.voters": f"1@{host}:{cport}",
            "listeners": f"PLAINTEXT://{host}:{port},CONTROLLER://{host}:{cport}",
            "advertised.listeners": f"PLAINTEXT://{host}:{port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.data / "logs"),
            # Topics come from the catalog (platform/topics.yaml); a typo must not create one.
            "auto.create.topics.enable": "false",
            "num.partitions": "8",
            "default.replication.factor": "1",
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "log.retention.hours": "168",
            "log.segment.bytes": str(256 * 1024 * 1024),
            "num.network.threads": "3",
            "num.io.threads": "4",
        }
        return "".join(f"{k}={v}\n" for k, v in settings.items())

    def classpath(self) -> str:
        return str(self.layout.kafka_lib / "*")

    def prepare(self) -> None:
        self.data.mkdir(parents=True, exist_ok=True)
        write_if_changed(self.properties_file, self.properties())
        if (self.data / "logs" / "meta.properties").exists():
            return
        id_file = self.data / "cluster.id"
        if not id_file.exists():
            id_file.write_text(self.tool_output("kafka.tools.StorageTool", "random-uuid").strip())
        run([self.cfg.java(), "-cp", self.classpath(), f"-Dlog4j2.configurationFile={self.cfg.root / LOG4J}",
             "kafka.tools.StorageTool", "format", "-t", id_file.read_text().strip(),
             "-c", str(self.properties_file)], what="kafka storage format", log=self.layout.log("kafka-format"))

    def tool_output(self, main: str, *args: str) -> str:
        import subprocess
        proc = subprocess.run([self.cfg.java(), "-cp", self.classpath(), main, *args],
                              capture_output=True, text=True, check=True)
        return proc.stdout.strip().splitlines()[-1]

    def launch(self) -> Launch:
        argv = [self.cfg.java(), *java_opts(self.cfg["BS_KAFKA_HEAP"]),
                f"-Dlog4j2.configurationFile={self.cfg.root / LOG4J}",
                f"-Dkafka.logs.dir={self.layout.cfg.log_dir}",
                "-cp", self.classpath(), "kafka.Kafka", str(self.properties_file)]
        return Launch(argv=argv)

    def healthy(self) -> bool:
        if not port_open(self.cfg.bind, self.cfg.port("kafka")):
            return False
        from confluent_kafka.admin import AdminClient
        admin = AdminClient({"bootstrap.servers": self.cfg.kafka_bootstrap, "socket.timeout.ms": 2000,
                             "log_level": 0})
        try:
            meta = admin.list_topics(timeout=3)
        except Exception:
            return False
        return len(meta.brokers) >= 1
