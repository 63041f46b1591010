"""The services of the native stack, in the order a reader meets them in docs/operations.md."""

from __future__ import annotations

from brokerstream.common.config import MAX_STREAMS_INSTANCES, MAX_TASKMANAGERS, Config
from brokerstream.launcher.layout import Layout
from brokerstream.launcher.services.base import Service
from brokerstream.launcher.services.baseline import Baseline
from brokerstream.launcher.services.connect import Connect
from brokerstream.launcher.services.external import External, external_names
from brokerstream.launcher.services.flink import FlinkJobManager, FlinkSqlGateway, FlinkTaskManager, taskmanager_name
from brokerstream.launcher.services.kafka import Kafka, node_name
from brokerstream.launcher.services.postgres import Postgres
from brokerstream.launcher.services.registry import Registry
from brokerstream.launcher.services.streams import StreamsApp, instance_name

SERVICE_TYPES = (
    Postgres,
    Kafka,
    Registry,
    Connect,
    FlinkJobManager,
    FlinkTaskManager,
    FlinkSqlGateway,
    StreamsApp,
    Baseline,
)


def all_services(cfg: Config) -> dict[str, Service]:
    layout = Layout(cfg)
    services: list[Service] = []
    external = external_names(cfg)
    for kind in SERVICE_TYPES:
        if kind is Kafka and "kafka" in external:
            services.append(External(cfg, layout, kind="kafka"))  # a cluster elsewhere, at BS_KAFKA_BOOTSTRAP
        elif kind is FlinkTaskManager and "flink-taskmanager" in external:
            services.append(External(cfg, layout, kind="flink-taskmanager"))
        elif kind is Kafka:
            services.extend(Kafka(cfg, layout, node=n) for n in range(1, cfg.kafka_brokers + 1))
        elif kind is StreamsApp:
            services.extend(StreamsApp(cfg, layout, instance=n) for n in range(1, cfg.streams_instances + 1))
        elif kind is FlinkTaskManager:
            services.extend(FlinkTaskManager(cfg, layout, instance=n) for n in range(1, cfg.flink_taskmanagers + 1))
        else:
            svc = kind(cfg, layout)
            services.append(External(cfg, layout, kind=svc.name) if svc.name in external else svc)
    nodes = ("kafka",) if "kafka" in external else kafka_nodes(cfg)
    for svc in services:  # what needs Kafka needs the whole cluster up, not only its first node
        svc.needs = expand_kafka(svc.needs, nodes)
    return {s.name: s for s in services}


def kafka_nodes(cfg: Config) -> tuple[str, ...]:
    return tuple(node_name(n) for n in range(1, cfg.kafka_brokers + 1))


def streams_instances(cfg: Config) -> tuple[str, ...]:
    return tuple(instance_name(n) for n in range(1, cfg.streams_instances + 1))


def taskmanagers(cfg: Config) -> tuple[str, ...]:
    return tuple(taskmanager_name(n) for n in range(1, cfg.flink_taskmanagers + 1))


# Services run as several processes: the group's name, its instances as configured, and every instance
# the launcher can know (a stack started with more than it is now configured for still stops them all).
SCALED = {
    "streams": (streams_instances, lambda cfg, layout, n: StreamsApp(cfg, layout, instance=n), MAX_STREAMS_INSTANCES),
    "flink-taskmanager": (
        taskmanagers,
        lambda cfg, layout, n: FlinkTaskManager(cfg, layout, instance=n),
        MAX_TASKMANAGERS,
    ),
}


def live_extras(cfg: Config, layout: Layout) -> list[Service]:
    """Instances beyond the configured count whose processes still run (started by a larger setting)."""
    out: list[Service] = []
    for names, make, most in SCALED.values():
        for n in range(len(names(cfg)) + 1, most + 1):
            svc = make(cfg, layout, n)
            if layout.pidfile(svc.name).live_pid() is not None:
                out.append(svc)
    return out


def expand_kafka(needs: tuple[str, ...], nodes: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for name in needs:
        out.extend(nodes if name == "kafka" else (name,))
    return tuple(out)


def service_names(cfg: Config) -> list[str]:
    """Every service of the stack as configured (three Kafka nodes in the multi-broker mode)."""
    return list(all_services(cfg))
