import pytest

from brokerstream.common import config
from brokerstream.common.topics import CatalogError, load_catalog


def test_catalog_names_every_flow_and_uses_the_partition_knob():
    cfg = config.load(environ={"BS_TOPIC_PARTITIONS": "12"})
    topics = {t.name: t for t in load_catalog(cfg)}
    for name in (
        "orders",
        "order-results",
        "price-ticks",
        "positions",
        "realized-pnl",
        "pnl.marks",
        "pnl.accounts",
        "ref.members",
        "ref.accounts",
        "ref.instruments",
        "ref.equity-starts",
        "dlq.streams",
        "metrics.samples",
    ):
        assert name in topics
    assert topics["orders"].partitions == 12
    assert topics["ref.members"].partitions == 1
    assert topics["positions"].config == {
        "cleanup.policy": "compact",
        "segment.ms": "60000",
        "min.cleanable.dirty.ratio": "0.1",
    }
    assert topics["order-results"].config == {}


def test_unknown_fields_and_bad_partitions_are_rejected(tmp_path):
    cfg = config.load(environ={})
    bad = tmp_path / "topics.yaml"
    bad.write_text("topics:\n  x:\n    partitons: 3\n")
    with pytest.raises(CatalogError, match="unknown fields"):
        load_catalog(cfg, bad)
    bad.write_text("topics:\n  x:\n    partitions: 0\n")
    with pytest.raises(CatalogError, match="positive integer"):
        load_catalog(cfg, bad)
