"""The connector files agree with the topic catalog and the Postgres DDL, without a stack."""

import re

from brokerstream.clients.connectors import RETIRED, load_specs
from brokerstream.common import config
from brokerstream.common.config import ROOT
from brokerstream.common.topics import POSITIONS, load_catalog
from brokerstream.loadtest.bench import sink as sink_bench

# The raw orders topic is not synced: order_results holds each order with its outcome, one row per order.
# Unrealized P&L reaches Postgres as marks only: views add positions up (pnl_positions, pnl_accounts, pnl_members).
# Halts and resumptions (prices.status) are kept as a history, a row per record.
SYNCED = {"order-results", "order-events", POSITIONS, "pnl.equity-marks", "prices.status"}
SINK = "io.brokerstream.connect.postgres.PostgresSinkConnector"
KAFKA_KEY = ["__connect_topic", "__connect_partition", "__connect_offset"]
DDL = (ROOT / "sql" / "postgres" / "002_flow.sql").read_text()


def _sinks():
    return [s for s in load_specs() if s.config["connector.class"] == SINK]


def _table_of(spec, topic: str) -> str:
    """The table a sink writes a topic's records to, as the sink names it."""
    return spec.config.get(f"table.{topic}", topic.replace(".", "_").replace("-", "_"))


def _key_of(spec, table: str) -> list[str]:
    key = spec.config[f"key.{table}"]
    return KAFKA_KEY if key == "kafka" else [c.strip() for c in key.split(",")]


def test_every_synced_topic_has_exactly_one_sink_and_each_sink_topic_is_in_the_catalog():
    topics = {t.name for t in load_catalog(config.load(environ={}))}
    seen = [t for s in _sinks() for t in s.config["topics"].split(",")]
    assert sorted(seen) == sorted(SYNCED)
    assert set(seen) <= topics
    # every connector file is either the Debezium source or ours: Debezium's JDBC sink is only measured beside it
    assert {s.config["connector.class"] for s in load_specs()} == {
        SINK,
        "io.debezium.connector.postgresql.PostgresConnector",
    }
    assert not {s.name for s in load_specs()} & set(RETIRED)


def test_each_sink_writes_tables_the_ddl_creates():
    created = set(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", DDL))
    tables = {_table_of(s, t) for s in _sinks() for t in s.config["topics"].split(",")}
    assert tables == {"order_results", "order_events", "positions", "equity_marks", "instrument_status_changes"}
    assert tables <= created
    for view in ("pnl_positions", "pnl_accounts", "pnl_members"):
        assert f"CREATE OR REPLACE VIEW {view} AS" in DDL


def _primary_key(table: str) -> list[str]:
    body = re.search(rf"CREATE TABLE IF NOT EXISTS {table} \((.*?)\n\);", DDL, re.S).group(1)
    inline = re.search(r"^\s*(\w+)\s+[^,]*PRIMARY KEY", body, re.M)
    return (
        [inline.group(1)]
        if inline
        else [c.strip() for c in re.search(r"PRIMARY KEY \(([^)]*)\)", body).group(1).split(",")]
    )


def test_each_sink_upserts_by_its_tables_primary_key():
    # an order id is unique per member, and only while the flow remembers it: results (with the P&L a fill
    # realized) are keyed by member, order id and when the broker received the order, so an id used again
    # keeps both fills
    for spec in _sinks():
        for topic in spec.config["topics"].split(","):
            table = _table_of(spec, topic)
            assert _primary_key(table) == _key_of(spec, table), (spec.name, topic)
    assert _primary_key("order_results") == ["member_id", "order_id", "ingest_ts"]
    assert _primary_key("order_events") == KAFKA_KEY  # many rows per order: each record its own row
    orders = next(s for s in _sinks() if s.name == "sink-orders")
    assert orders.config["conflict.order_events"] == "nothing"  # an event's row never changes
    assert orders.config["conflict.instrument_status_changes"] == "nothing"


def test_what_the_order_flow_writes_is_one_sink_and_one_transaction_per_batch():
    orders = next(s for s in _sinks() if s.name == "sink-orders")
    assert set(orders.config["topics"].split(",")) == {"order-results", POSITIONS, "order-events", "prices.status"}
    owner = {t: s.name for s in _sinks() for t in s.config["topics"].split(",")}
    assert owner[POSITIONS] != owner["pnl.equity-marks"]  # the P&L's cadence never holds the orders' back


def test_every_sink_is_exactly_once_downstream_and_dead_letters():
    for spec in _sinks():
        cfg = spec.config
        assert cfg["consumer.override.isolation.level"] == "read_committed", spec.name
        assert cfg["errors.tolerance"] == "all" and cfg["errors.deadletterqueue.topic.name"] == "dlq.connect"
        assert cfg["errors.deadletterqueue.context.headers.enable"] == "true", spec.name


def test_the_marks_sink_reads_the_topic_the_pnl_job_writes_its_marks_to():
    # the job's topic names live in Java: a rename on one side only would leave Postgres without P&L
    pnl = ROOT / "flink-jobs" / "src" / "main" / "java" / "io" / "brokerstream" / "pnl"
    marks = re.search(r' TOPIC = "([^"]+)"', (pnl / "EquityMarksSchema.java").read_text()).group(1)
    assert marks in {t.name for t in load_catalog(config.load(environ={}))}
    owner = {t: s.name for s in _sinks() for t in s.config["topics"].split(",")}
    assert owner[marks] == "sink-marks"
    spec = next(s for s in _sinks() if s.name == "sink-marks")
    # one row per equity, keyed as the topic is: the batch keeps each equity's last record
    assert spec.config[f"table.{marks}"] == "equity_marks"
    assert spec.config["key.equity_marks"] == "underlying_id"


def test_the_ceiling_bench_runs_both_sinks_on_the_same_topics_from_their_ends():
    orders = next(s for s in _sinks() if s.name == "sink-orders")
    specs = sink_bench.ceiling_specs(orders.config)
    assert set(specs) == {"debezium-jdbc", "brokerstream-postgres"}
    for spec in specs.values():
        assert spec.config["topics"] == "order-results"
        assert spec.config["consumer.override.auto.offset.reset"] == "latest"
        assert spec.config["connection.url"] == orders.config["connection.url"]
    assert specs["debezium-jdbc"].config["primary.key.fields"] == "member_id,order_id,ingest_ts"


def test_the_sink_tasks_setting_sizes_every_sink_and_leaves_the_cdc_source_at_one():
    import pytest

    from brokerstream.clients.connectors import ConnectorError, sized

    specs = load_specs()
    assert sized(specs, "") == specs and sized(specs, None) == specs
    four = {s.name: s.config["tasks.max"] for s in sized(specs, "4")}
    assert {n: t for n, t in four.items() if n.startswith("sink-")} == {s.name: "4" for s in _sinks()}
    assert four["refdata-source"] == "1"
    assert {s.config["tasks.max"] for s in load_specs()} == {"1"}  # the files are untouched
    for bad in ("0", "33", "-1", "two"):
        with pytest.raises(ConnectorError):
            sized(specs, bad)
