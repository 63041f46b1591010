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


def test_the_tick_and_book_topics_follow_their_own_knob():
    cfg = config.load(environ={"BS_TOPIC_PARTITIONS": "12", "BS_TICK_PARTITIONS": "3"})
    topics = {t.name: t.partitions for t in load_catalog(cfg)}
    assert [topics[n] for n in ("price-ticks", "orders.resting", "prices.latest")] == [3, 3, 3]
    assert topics["orders"] == topics["order-triggers"] == 12
    assert config.load(environ={}).int("BS_TICK_PARTITIONS") == 1  # stack.env's default


def test_unknown_fields_and_bad_partitions_are_rejected(tmp_path):
    cfg = config.load(environ={})
    bad = tmp_path / "topics.yaml"
    bad.write_text("topics:\n  x:\n    partitons: 3\n")
    with pytest.raises(CatalogError, match="unknown fields"):
        load_catalog(cfg, bad)
    bad.write_text("topics:\n  x:\n    partitions: 0\n")
    with pytest.raises(CatalogError, match="positive integer"):
        load_catalog(cfg, bad)
    bad.write_text("topics:\n  x:\n    partitions: ticks\n")
    with pytest.raises(CatalogError, match="positive integer"):
        load_catalog(config.load(environ={"BS_TICK_PARTITIONS": "0"}), bad)


@pytest.mark.parametrize("topic", ["order-results", "order-commands", POSITIONS])
def test_the_member_tasks_topics_must_share_one_partition_count(tmp_path, topic):
    cfg = config.load(environ={"BS_TOPIC_PARTITIONS": "4"})
    text = "topics:\n  orders:\n    partitions: default\n  order-results:\n    partitions: default\n"
    text += f"  order-commands:\n    partitions: default\n  {POSITIONS}:\n    partitions: default\n"
    catalog = tmp_path / "topics.yaml"
    catalog.write_text(text)
    assert {t.partitions for t in load_catalog(cfg, catalog)} == {4}
    catalog.write_text(text.replace(f"  {topic}:\n    partitions: default", f"  {topic}:\n    partitions: 8"))
    with pytest.raises(CatalogError, match="one partition count"):
        load_catalog(cfg, catalog)


def test_the_book_tasks_topics_must_share_one_partition_count(tmp_path):
    cfg = config.load(environ={"BS_TOPIC_PARTITIONS": "4", "BS_TICK_PARTITIONS": "1"})
    catalog = tmp_path / "topics.yaml"
    catalog.write_text("topics:\n  price-ticks:\n    partitions: ticks\n  orders.resting:\n    partitions: ticks\n")
    assert {t.partitions for t in load_catalog(cfg, catalog)} == {1}
    catalog.write_text("topics:\n  price-ticks:\n    partitions: ticks\n  orders.resting:\n    partitions: default\n")
    with pytest.raises(CatalogError, match="book task reads price-ticks, orders.resting .* one partition count"):
        load_catalog(cfg, catalog)


def test_a_stack_made_by_the_design_with_a_positions_topic_of_its_own_is_told_to_reset():
    from brokerstream.common.errors import UserError
    from brokerstream.launcher.provision import refuse_retired

    refuse_retired({"orders", POSITIONS, "order-results"})  # today's catalog: nothing to say
    with pytest.raises(UserError, match=r"positions: .*`./brokerstream reset`"):
        refuse_retired({"orders", "positions", POSITIONS})
    with pytest.raises(UserError, match=r"order-ids-changelog: .*by member.*`./brokerstream reset`"):
        refuse_retired({"orders", "brokerstream-orders-order-ids-changelog", POSITIONS})
