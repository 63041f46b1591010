"""The services of the native stack, in the order a reader meets them in docs/operations.md."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from brokerstream.common.config import MAX_STREAMS_INSTANCES, MAX_TASKMANAGERS, Config, ConfigError
from brokerstream.launcher.layout import Layout
from brokerstream.launcher.services.base import Service
from brokerstream.launcher.services.baseline import Baseline
from brokerstream.launcher.services.connect import Connect
from brokerstream.launcher.services.external import External, Remote, external_names
from brokerstream.launcher.services.flink import FlinkJobManager, FlinkSqlGateway, FlinkTaskManager
from brokerstream.launcher.services.kafka import Kafka, node_name
from brokerstream.launcher.services.postgres import Postgres
from brokerstream.launcher.services.registry import Registry
from brokerstream.launcher.services.streams import StreamsApp

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
        elif kind in SCALED_KINDS:
            scaled = SCALED_KINDS[kind]
            services.extend(kind(cfg, layout, instance=n) for n in range(1, scaled.count(cfg) + 1))
        else:
            svc = kind(cfg, layout)
            services.append(External(cfg, layout, kind=svc.name) if svc.name in external else svc)
    nodes = ("kafka",) if "kafka" in external else kafka_nodes(cfg)
    for svc in services:  # what needs Kafka needs the whole cluster up, not only its first node
        svc.needs = expand_kafka(svc.needs, nodes)
    placed = cfg.hosts
    unknown = sorted(set(placed) - {s.name for s in services})
    if unknown:
        raise ConfigError(f"BS_HOSTS places {', '.join(unknown)}: no such service in this configuration")
    # a service placed on another host is that host's launcher's to start: here it is waited for
    services = [
        s if cfg.is_local(s.name) or isinstance(s, External) else Remote(cfg, layout, service=s) for s in services
    ]
    return {s.name: s for s in services}


def kafka_nodes(cfg: Config) -> tuple[str, ...]:
    return tuple(node_name(n) for n in range(1, cfg.kafka_brokers + 1))


@dataclass(frozen=True)
class Scaled:
    """A service run as several processes, named by its first (`streams`: `streams`, `streams-2`, ...)."""

    kind: type
    count: Callable[[Config], int]  # how many the configuration runs
    most: int  # how many the launcher knows: a stack started with more still stops them all


SCALED = {
    "streams": Scaled(StreamsApp, lambda cfg: cfg.streams_instances, MAX_STREAMS_INSTANCES),
    "flink-taskmanager": Scaled(FlinkTaskManager, lambda cfg: cfg.flink_taskmanagers, MAX_TASKMANAGERS),
}
SCALED_KINDS = {s.kind: s for s in SCALED.values()}


def live_extras(cfg: Config, layout: Layout) -> list[Service]:
    """Instances beyond the configured count whose processes still run (started by a larger setting)."""
    out: list[Service] = []
    for scaled in SCALED.values():
        for n in range(scaled.count(cfg) + 1, scaled.most + 1):
            svc = scaled.kind(cfg, layout, instance=n)
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
