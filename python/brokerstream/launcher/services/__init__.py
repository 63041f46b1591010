"""The services of the native stack, in the order a reader meets them in the README."""
from __future__ import annotations

from ...config import Config
from ..layout import Layout
from .base import Service
from .connect import Connect
from .flink import FlinkJobManager, FlinkSqlGateway, FlinkTaskManager
from .kafka import Kafka
from .postgres import Postgres
from .registry import Registry
from .streams import StreamsApp

SERVICE_TYPES = (Postgres, Kafka, Registry, Connect, FlinkJobManager, FlinkTaskManager, FlinkSqlGateway, StreamsApp)


def all_services(cfg: Config) -> dict[str, Service]:
    layout = Layout(cfg)
    services = [kind(cfg, layout) for kind in SERVICE_TYPES]
    return {s.name: s for s in services}
