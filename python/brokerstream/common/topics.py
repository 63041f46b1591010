"""The topic catalog (platform/topics.yaml): parse it, and make a broker hold what it says."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from brokerstream.common.config import ROOT, Config
from brokerstream.common.errors import UserError

CATALOG = ROOT / "platform" / "topics.yaml"
# The positions topic is the order flow's positions store's changelog, named after its application id.
POSITIONS = "brokerstream-orders-positions-changelog"
# What a member task reads, partition for partition: a member's orders, commands and triggers, its
# positions (the store's changelog) and its results (written to the member's partition and read back).
MEMBER_TASK_TOPICS = ("orders", "order-commands", "order-triggers", "order-triggers.fast", "order-results", POSITIONS)
# What the tick and book task reads, partition for partition: an equity's ticks beside its working orders
# and its operators' controls.
BOOK_TASK_TOPICS = ("price-ticks", "orders.resting", "prices.controls")
# The settings a catalog's `partitions` may name instead of a number.
PARTITION_KNOBS = {"default": "BS_TOPIC_PARTITIONS", "ticks": "BS_TICK_PARTITIONS"}


class CatalogError(UserError, ValueError):
    pass


@dataclass(frozen=True)
class Topic:
    name: str
    partitions: int
    replication_factor: int
    value: str | None
    key: str
    key_schema: str | None = None
    config: dict[str, str] = field(default_factory=dict)


def load_catalog(cfg: Config, path: Path = CATALOG) -> list[Topic]:
    doc = yaml.safe_load(path.read_text())
    if not isinstance(doc, dict) or not isinstance(doc.get("topics"), dict):
        raise CatalogError(f"{path}: expected a mapping with a 'topics' mapping")
    defaults = doc.get("defaults") or {}
    topics = []
    for name, spec in doc["topics"].items():
        spec = spec or {}
        unknown = set(spec) - {
            "key",
            "key_schema",
            "value",
            "partitions",
            "compacted",
            "retention_ms",
            "replication_factor",
            "config",
        }
        if unknown:
            raise CatalogError(f"{path}: topic {name}: unknown fields {sorted(unknown)}")
        partitions = spec.get("partitions", "default")
        if partitions in PARTITION_KNOBS:
            partitions = cfg.int(PARTITION_KNOBS[partitions])
        if not isinstance(partitions, int) or partitions < 1:
            raise CatalogError(
                f"{path}: topic {name}: partitions must be a positive integer, 'default' or 'ticks'"
                f" (BS_TOPIC_PARTITIONS and BS_TICK_PARTITIONS: 1 or more)"
            )
        config = {}
        if spec.get("compacted"):
            config["cleanup.policy"] = "compact"
        if "retention_ms" in spec:
            config["retention.ms"] = str(int(spec["retention_ms"]))
        config.update({str(k): str(v) for k, v in (spec.get("config") or {}).items()})
        replication = spec.get("replication_factor", defaults.get("replication_factor", "default"))
        if replication == "default":
            replication = cfg.kafka_replication
        if not isinstance(replication, int) or replication < 1:
            raise CatalogError(f"{path}: topic {name}: replication_factor must be a positive integer or 'default'")
        topics.append(
            Topic(
                name=name,
                partitions=partitions,
                replication_factor=replication,
                value=spec.get("value"),
                key=str(spec.get("key", "")),
                key_schema=spec.get("key_schema"),
                config=config,
            )
        )
    for task, names in (("member", MEMBER_TASK_TOPICS), ("book", BOOK_TASK_TOPICS)):
        counts = {t.name: t.partitions for t in topics if t.name in names}
        if len(set(counts.values())) > 1:
            raise CatalogError(
                f"{path}: the {task} task reads {', '.join(counts)} partition for partition, so they need one"
                f" partition count, not {counts}"
            )
    return topics


def ensure_topics(conf: dict, topics: list[Topic], timeout: float = 30.0) -> dict[str, str]:
    """Create the missing topics and grow partition counts that are short; returns what was done."""
    from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

    admin = AdminClient(conf)
    existing = admin.list_topics(timeout=timeout).topics
    outcome: dict[str, str] = {}
    to_create = [t for t in topics if t.name not in existing]
    if to_create:
        futures = admin.create_topics(
            [
                NewTopic(t.name, num_partitions=t.partitions, replication_factor=t.replication_factor, config=t.config)
                for t in to_create
            ],
            operation_timeout=timeout,
        )
        for name, future in futures.items():
            future.result()
            outcome[name] = "created"
    _sync_configs(admin, [t for t in topics if t.name in existing and t.config], outcome, timeout)
    grow = [t for t in topics if t.name in existing and len(existing[t.name].partitions) < t.partitions]
    if grow:
        futures = admin.create_partitions([NewPartitions(t.name, t.partitions) for t in grow])
        for name, future in futures.items():
            future.result()
            outcome[name] = "partitions increased"
    for t in topics:
        outcome.setdefault(t.name, "exists")
    return outcome


def _sync_configs(admin, topics: list[Topic], outcome: dict[str, str], timeout: float) -> None:
    """Existing topics get the catalog's configuration where theirs differs (the catalog rules)."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

    if not topics:
        return
    described = admin.describe_configs(
        [ConfigResource(ConfigResource.Type.TOPIC, t.name) for t in topics], request_timeout=timeout
    )
    changes = []
    for t in topics:
        current = {k: v.value for k, v in described[ConfigResource(ConfigResource.Type.TOPIC, t.name)].result().items()}
        differing = {k: v for k, v in t.config.items() if current.get(k) != v}
        if differing:
            changes.append(
                ConfigResource(
                    ConfigResource.Type.TOPIC,
                    t.name,
                    incremental_configs=[
                        ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in differing.items()
                    ],
                )
            )
    if changes:
        for resource, future in admin.incremental_alter_configs(changes).items():
            future.result()
            outcome[resource.name] = "configuration updated"
