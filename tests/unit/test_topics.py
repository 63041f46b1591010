import pytest

from brokerstream.common import config
from brokerstream.common.topics import POSITIONS, CatalogError, load_catalog


def test_catalog_names_every_flow_and_uses_the_partition_knob():
    cfg = config.load(environ={"BS_TOPIC_PARTITIONS": "12"})
    topics = {t.name: t for t in load_catalog(cfg)}
    for name in (
        "orders",
        "order-results",
        "price-ticks",
        POSITIONS,
        "pnl.equity-marks",
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
    # the positions store's changelog is the positions topic: the orders' partitions, compacted eagerly
    assert topics[POSITIONS].partitions == topics["orders"].partitions
    assert topics[POSITIONS].config == {
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


def test_a_stack_made_by_the_design_with_a_positions_topic_of_its_own_is_told_to_reset():
    from brokerstream.common.errors import UserError
    from brokerstream.launcher.provision import refuse_retired

    refuse_retired({"orders", POSITIONS, "order-results"})  # today's catalog: nothing to say
    with pytest.raises(UserError, match=r"positions: .*`./brokerstream reset`"):
        refuse_retired({"orders", "positions", POSITIONS})
