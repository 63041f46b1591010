"""Apache Kafka in KRaft mode, on loopback: one node that is both broker and controller, or (with
BS_KAFKA_BROKERS=3) three such nodes, a static controller quorum of three and every topic replicated
three ways, so that any one node may die."""

from __future__ import annotations

import contextlib
import fcntl
import threading
from dataclasses import dataclass

from brokerstream.clients import kafka_security
from brokerstream.clients.kafka_clients import client_conf
from brokerstream.common.config import Config, kafka_node_name
from brokerstream.common.errors import UserError
from brokerstream.common.progress import run
from brokerstream.launcher.services.base import (
    Launch,
    Service,
    java_opts,
    jit_flags,
    metrics_agent,
    port_open,
    write_if_changed,
)

LOG4J = "platform/logging/kafka-log4j2.properties"
METRICS = "platform/metrics/kafka-jmx.yaml"


# The cluster size a data folder was formatted for; a quorum cannot change size under its logs.
CLUSTER_FILE = "kafka-cluster.properties"


node_name = kafka_node_name


@dataclass
class Kafka(Service):
    node: int = 1

    def __post_init__(self) -> None:
        self.name = node_name(self.node)
        self._acls_applied = False
        self.cpu_group = "orders"
        self.stop_grace = 60.0  # a clean shutdown spares the next start its log recovery

    def ports(self) -> dict[str, int]:
        broker, controller = self.cfg.kafka_node_ports(self.node)
        return {"broker": broker, "controller": controller, "metrics": self.cfg.kafka_metrics_port(self.node)}

    @property
    def properties_file(self):
        return self.data / "server.properties"

    def properties(self) -> str:
        cfg = self.cfg
        host, (port, cport) = self.host, cfg.kafka_node_ports(self.node)
        voters = ",".join(
            f"{n}@{cfg.host(node_name(n))}:{cfg.kafka_node_ports(n)[1]}" for n in range(1, cfg.kafka_brokers + 1)
        )
        rf, isr = str(cfg.kafka_replication), str(cfg.kafka_min_insync)
        settings = {
            "process.roles": "broker,controller",
            "node.id": str(self.node),
            # A static voter set: the quorum follows the configured ports even after a port change.
            "controller.quorum.voters": voters,
            "listeners": f"PLAINTEXT://{host}:{port},CONTROLLER://{host}:{cport}",
            "advertised.listeners": f"PLAINTEXT://{host}:{port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.data / "logs"),
            # Topics come from the catalog (platform/topics.yaml); a typo must not create one.
            "auto.create.topics.enable": "false",
            "num.partitions": "8",
            # Topics the catalog does not list (the streams app's changelogs and repartition topics,
            # Connect's) get the same replication as those it does.
            "default.replication.factor": rf,
            "min.insync.replicas": isr,
            "offsets.topic.replication.factor": rf,
            "transaction.state.log.replication.factor": rf,
            "transaction.state.log.min.isr": isr,
            "share.coordinator.state.topic.replication.factor": rf,
            "share.coordinator.state.topic.min.isr": isr,
            "group.initial.rebalance.delay.ms": "0",
            "log.retention.hours": "168",
            "log.segment.bytes": str(256 * 1024 * 1024),
            # Threads for two cores: more only switch between each other.
            "num.network.threads": "2",
            "num.io.threads": "3",
            # The log cleaner clears its whole offset map (128 MB by default) before each pass: with the
            # compacted flow topics cleaned every minute that was an eighth of the broker's CPU. 16 MB
            # hold about 700,000 keys per pass, more than the largest compacted topic here.
            "log.cleaner.dedupe.buffer.size": str(16 * 1024 * 1024),
        }
        if cfg.kafka_secure:
            settings.update(kafka_security.broker_settings(cfg, host, port, cport))
        return "".join(f"{k}={v}\n" for k, v in settings.items())

    def classpath(self) -> str:
        return str(self.layout.kafka_lib / "*")

    def prepare(self) -> None:
        self.check_cluster_size()
        if self.cfg.kafka_secure:
            with _formatting(self.cfg):
                if kafka_security.ensure_material(self.cfg):
                    print(
                        "[kafka] secure profile: CA, broker certificate and SCRAM passwords made in "
                        f"{kafka_security.security_dir(self.cfg)}",
                        flush=True,
                    )
        self.data.mkdir(parents=True, exist_ok=True)
        write_if_changed(self.properties_file, self.properties())
        if (self.data / "logs" / "meta.properties").exists():
            return
        id_file = self.cfg.data_dir / "kafka" / "cluster.id"  # node 1's folder; all nodes share the id
        with _formatting(self.cfg):
            if not id_file.exists():
                id_file.parent.mkdir(parents=True, exist_ok=True)
                id_file.write_text(self.tool_output("kafka.tools.StorageTool", "random-uuid").strip())
        args = ["kafka.tools.StorageTool", "format", "-t", id_file.read_text().strip(), "-c", str(self.properties_file)]
        if self.cfg.kafka_secure:
            args += kafka_security.scram_format_arguments(self.cfg)
        # The main class and its arguments from a file (the java launcher's @argfile): the SCRAM
        # passwords never appear in the process table.
        argfile = self.data / "format.args"
        write_if_changed(argfile, "".join(_argfile_quote(a) + "\n" for a in args))
        try:
            run(
                [
                    self.cfg.java(),
                    "-cp",
                    self.classpath(),
                    f"-Dlog4j2.configurationFile={self.cfg.root / LOG4J}",
                    f"@{argfile}",
                ],
                what=f"{self.name} storage format",
                log=self.layout.log(f"{self.name}-format"),
            )
        finally:
            argfile.unlink(missing_ok=True)

    def check_cluster_size(self) -> None:
        """A data folder made for one cluster size refuses another: the voters are in its logs."""
        marker = self.cfg.data_dir / CLUSTER_FILE
        want = f"brokers={self.cfg.kafka_brokers}\n"
        if self.cfg.kafka_secure:  # SCRAM users exist only if the log was formatted with them
            want += "security=sasl_ssl\n"
        with _formatting(self.cfg):
            if not marker.exists():
                if (self.cfg.data_dir / "kafka" / "logs" / "meta.properties").exists():
                    marker.write_text("brokers=1\n")  # made before the marker existed: single broker
                else:
                    marker.parent.mkdir(parents=True, exist_ok=True)
                    marker.write_text(want)
        have = marker.read_text()
        if have != want:
            made = dict(line.split("=", 1) for line in have.split())
            raise ClusterSizeError(
                f"{self.cfg.data_dir} holds a Kafka cluster of {made.get('brokers', '?')} broker(s), security "
                f"{made.get('security', 'plaintext')}, and the configuration asks for {self.cfg.kafka_brokers}, "
                f"{self.cfg.kafka_security} (BS_KAFKA_BROKERS, BS_KAFKA_SECURITY): `./brokerstream reset` "
                "(it deletes the data) or set them back"
            )

    def tool_output(self, main: str, *args: str) -> str:
        import subprocess

        proc = subprocess.run(
            [self.cfg.java(), "-cp", self.classpath(), main, *args], capture_output=True, text=True, check=True
        )
        return proc.stdout.strip().splitlines()[-1]

    def launch(self) -> Launch:
        # Request and topic counters over HTTP on loopback (what `bench cost` divides by the orders)
        argv = [
            self.cfg.java(),
            *java_opts(self.cfg["BS_KAFKA_HEAP"], *jit_flags(self), gc=self.cfg["BS_JAVA_GC"]),
            metrics_agent(self, self.cfg.kafka_metrics_port(self.node), METRICS),
            f"-Dlog4j2.configurationFile={self.cfg.root / LOG4J}",
            f"-Dkafka.logs.dir={self.layout.cfg.log_dir}",
            "-cp",
            self.classpath(),
            "kafka.Kafka",
            str(self.properties_file),
        ]
        return Launch(argv=argv)

    def healthy(self) -> bool:
        """This node answers metadata on its own listener and the controllers have registered it."""
        port = self.ports()["broker"]
        if not port_open(self.host, port):
            return False
        from confluent_kafka.admin import AdminClient

        admin = AdminClient(
            client_conf(
                self.cfg,
                kafka_security.ADMIN,
                bootstrap=f"{self.host}:{port}",
                **{"socket.timeout.ms": 2000, "log_level": 0},
            )
        )
        try:
            meta = admin.list_topics(timeout=3)
        except Exception:
            return False
        if self.node not in meta.brokers:
            return False
        if self.cfg.kafka_secure and self.node == 1 and not self._acls_applied:
            # before anything that needs Kafka starts: without its ACLs a client is refused everything
            try:
                kafka_security.apply_acls(admin)
            except Exception as e:
                print(f"[kafka] ACLs not applied yet: {e}", flush=True)
                return False
            self._acls_applied = True
        return True


def _argfile_quote(arg: str) -> str:
    """One argument per line, quoted as the java launcher's @argfile wants (its brackets and '=' kept)."""
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


class ClusterSizeError(UserError):
    pass


_format_lock = threading.Lock()  # `up` prepares the nodes in parallel threads


@contextlib.contextmanager
def _formatting(cfg: Config):
    """One node at a time makes the cluster's shared material (its id, the secure profile's CA and
    passwords, the size marker): the nodes of this launcher's threads, and those other launchers prepare
    on the same data folder (nodes placed on several hosts, BS_HOSTS)."""
    path = cfg.data_dir / "kafka-format.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with _format_lock, open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
