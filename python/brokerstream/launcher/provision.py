"""What `up` does once the services are healthy: the topics of the catalog, then (as later parts of
the system arrive) schemas, connectors and jobs. Every step is idempotent."""
from __future__ import annotations

from ..config import Config
from ..topics import ensure_topics, load_catalog
from .stack import Provisioner, Stack


def topics(cfg: Config) -> str:
    outcome = ensure_topics(cfg.kafka_bootstrap, load_catalog(cfg))
    created = sum(1 for v in outcome.values() if v != "exists")
    return f"{len(outcome)} in catalog, {created} created or grown"


def default_stack(cfg: Config) -> Stack:
    return Stack(cfg, provisioners=[
        Provisioner("topics", ("kafka",), topics),
    ])
