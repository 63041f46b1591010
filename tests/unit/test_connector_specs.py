"""The connector files agree with the topic catalog and the Postgres DDL, without a stack."""
import re

from brokerstream import config
from brokerstream.config import ROOT
from brokerstream.connectors import load_specs
from brokerstream.topics import load_catalog

# The raw orders topic is not synced: order_results holds each order with its outcome, one row per order.
# Unrealized P&L reaches Postgres as marks only: views add positions up (pnl_positions, pnl_accounts, pnl_members).
SYNCED = {"order-results", "order-events", "realized-pnl", "positions", "pnl.mark-snapshots"}


def _sinks():
    return [s for s in load_specs() if s.config["connector.class"].endswith("JdbcSinkConnector")]


def _table_of(spec, topic: str) -> str:
    """The table a sink writes a topic's records to, as Connect would name it."""
    cfg = spec.config
    if "transforms" in cfg:
        assert cfg["transforms"] == "toTable"
        topic = re.sub(cfg["transforms.toTable.regex"],
                       cfg["transforms.toTable.replacement"].replace("$", "\\"), topic)
    return cfg["collection.name.format"].replace("${topic}", topic)


def test_every_synced_topic_has_exactly_one_sink_and_each_sink_topic_is_in_the_catalog():
    topics = {t.name for t in load_catalog(config.load(environ={}))}
    seen = [t for s in _sinks() for t in s.config["topics"].split(",")]
    assert sorted(seen) == sorted(SYNCED)
    assert set(seen) <= topics


def test_each_sink_writes_tables_the_ddl_creates():
    ddl = (ROOT / "sql" / "postgres" / "002_flow.sql").read_text()
    created = set(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", ddl))
    tables = {_table_of(s, t) for s in _sinks() for t in s.config["topics"].split(",")}
    assert tables == {"order_results", "order_events", "realized_pnl", "positions", "instrument_marks"}
    assert tables <= created
    for view in ("pnl_positions", "pnl_accounts", "pnl_members"):
        assert f"CREATE OR REPLACE VIEW {view} AS" in ddl


def _primary_key(ddl: str, table: str) -> list[str]:
    body = re.search(rf"CREATE TABLE IF NOT EXISTS {table} \((.*?)\n\);", ddl, re.S).group(1)
    inline = re.search(r"^\s*(\w+)\s+[^,]*PRIMARY KEY", body, re.M)
    return [inline.group(1)] if inline else [c.strip() for c in re.search(r"PRIMARY KEY \(([^)]*)\)", body).group(1).split(",")]


def test_each_sink_upserts_by_its_tables_primary_key():
    # an order id is unique per member, and only while the flow remembers it: results and realized P&L are
    # keyed by member, order id and when the broker received the order, so an id used again keeps both fills
    ddl = (ROOT / "sql" / "postgres" / "002_flow.sql").read_text()
    for spec in _sinks():
        if spec.config["primary.key.mode"] == "kafka":
            # many rows per key (an order's events): each record is its own row, by its place in Kafka
            fields = ["__connect_topic", "__connect_partition", "__connect_offset"]
            assert "primary.key.fields" not in spec.config, spec.name
        else:
            fields = spec.config["primary.key.fields"].split(",")
        for topic in spec.config["topics"].split(","):
            assert _primary_key(ddl, _table_of(spec, topic)) == fields, (spec.name, topic)
    assert _primary_key(ddl, "order_results") == ["member_id", "order_id", "ingest_ts"]
    assert _primary_key(ddl, "realized_pnl") == ["member_id", "order_id", "ingest_ts"]


def test_a_single_topic_sink_names_its_table_outright():
    # the topic-rename transform runs a regex per record: only sinks with several topics pay for it
    for spec in _sinks():
        if "," not in spec.config["topics"]:
            assert "transforms" not in spec.config, spec.name
            assert "${topic}" not in spec.config["collection.name.format"], spec.name


def test_positions_and_marks_do_not_share_a_sink():
    owner = {t: s.name for s in _sinks() for t in s.config["topics"].split(",")}
    assert owner["positions"] != owner["pnl.mark-snapshots"]


def test_every_sink_is_exactly_once_downstream_and_dead_letters():
    for spec in _sinks():
        cfg = spec.config
        assert cfg["consumer.override.isolation.level"] == "read_committed", spec.name
        assert cfg["insert.mode"] == "upsert", spec.name
        assert cfg["errors.tolerance"] == "all" and cfg["errors.deadletterqueue.topic.name"] == "dlq.connect"
        assert cfg["errors.deadletterqueue.context.headers.enable"] == "true", spec.name


def test_the_marks_sink_reads_the_topic_the_pnl_job_snapshots_to():
    # the job's topic names live in Java: a rename on one side only would leave Postgres without P&L
    java = (ROOT / "flink-jobs" / "src" / "main" / "java" / "io" / "brokerstream" / "pnl" / "MarkRecordSchema.java")
    text = java.read_text()
    snapshots = re.search(r'MARK_SNAPSHOTS = "([^"]+)"', text).group(1)
    marks = re.search(r' MARKS = "([^"]+)"', text).group(1)
    owner = {t: s.name for s in _sinks() for t in s.config["topics"].split(",")}
    assert owner[snapshots] == "sink-marks"
    assert marks not in owner  # the every-window stream is not synced whole
