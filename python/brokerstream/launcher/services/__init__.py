"""The services of the native stack, in the order a reader meets them in docs/operations.md."""

from __future__ import annotations

from brokerstream.common.config import Config
from brokerstream.launcher.layout import Layout
from brokerstream.launcher.services.base import Service
from brokerstream.launcher.services.baseline import Baseline
from brokerstream.launcher.services.connect import Connect
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
    for kind in SERVICE_TYPES:
        if kind is Kafka:
            services.extend(Kafka(cfg, layout, node=n) for n in range(1, cfg.kafka_brokers + 1))
        else:
            services.append(kind(cfg, layout))
    nodes = kafka_nodes(cfg)
    for svc in services:  # what needs Kafka needs the whole cluster up, not only its first node
        svc.needs = expand_kafka(svc.needs, nodes)
    return {s.name: s for s in services}


def kafka_nodes(cfg: Config) -> tuple[str, ...]:
    return tuple(node_name(n) for n in range(1, cfg.kafka_brokers + 1))


def expand_kafka(needs: tuple[str, ...], nodes: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for name in needs:
        out.extend(nodes if name == "kafka" else (name,))
    return tuple(out)


def service_names(cfg: Config) -> list[str]:
    """Every service of the stack as configured (three Kafka nodes in the multi-broker mode)."""
    return list(all_services(cfg))
