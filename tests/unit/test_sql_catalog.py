"""The stream SQL catalogs: Flink's and ksqlDB's stay in step, the Flink tables match the Avro schemas."""

from __future__ import annotations

import json
import re

import pytest

from brokerstream.common.config import ROOT
from brokerstream.ops import streamsql
from brokerstream.ops.streamsql import CatalogError, parse_catalog, parse_since, render, split_statements

AVRO = ROOT / "schemas" / "src" / "main" / "avro"


def test_flink_and_ksqldb_catalogs_list_the_same_queries_in_the_same_order_with_the_same_purposes():
    flink = parse_catalog(streamsql.FLINK_CATALOG)
    ksql = parse_catalog(streamsql.KSQLDB_CATALOG)
    assert [(q.name, q.purpose) for q in flink] == [(q.name, q.purpose) for q in ksql]
    assert len(flink) >= 5


def test_each_flink_query_is_one_view_named_after_it():
    for query in parse_catalog(streamsql.FLINK_CATALOG):
        assert query.creates() == [("VIEW", query.name)], query.name
        assert len(query.statements) == 1


def test_each_ksqldb_query_materialises_its_name_and_every_statement_can_be_rerun():
    declared = {name for _, name in parse_catalog_like(streamsql.KSQLDB_STREAMS)}
    for query in parse_catalog(streamsql.KSQLDB_CATALOG):
        creates = query.creates()
        assert creates and creates[-1][1] == query.name, query.name
        for statement in query.statements:
            assert re.match(r"CREATE (TABLE|STREAM) IF NOT EXISTS \w+ AS\s", statement), statement[:80]
            for source in re.findall(r"\b(?:FROM|JOIN)\s+(\w+)", statement):
                assert source in declared, f"{query.name}: {source} is not declared before it"
            declared.add(re.match(r"CREATE \w+ IF NOT EXISTS (\w+)", statement).group(1))


def parse_catalog_like(path):
    out = []
    for statement in split_statements(path.read_text()):
        match = re.match(r"CREATE (TABLE|STREAM) IF NOT EXISTS (\w+)", statement)
        if match:
            out.append(match.groups())
    return out


def test_ksqldb_declares_a_stream_or_table_for_each_flink_table():
    flink_tables = streamsql.table_names(split_statements(streamsql.FLINK_TABLES.read_text()))
    ksql = {name for _, name in parse_catalog_like(streamsql.KSQLDB_STREAMS)}
    assert set(flink_tables) == ksql
    topics = lambda text: set(re.findall(r"(?:'topic'|KAFKA_TOPIC)\s*=\s*'([^']+)'", text))
    assert topics(streamsql.FLINK_TABLES.read_text()) == topics(streamsql.KSQLDB_STREAMS.read_text())


def avro_fields(name: str) -> list[tuple[str, bool]]:
    """(field, required) in schema order."""
    return [
        (f["name"], not isinstance(f["type"], list)) for f in json.loads((AVRO / f"{name}.avsc").read_text())["fields"]
    ]


def test_flink_tables_have_exactly_the_avro_fields_with_matching_nullability():
    # Flink refuses a reader schema that does not match the columns, but only when a query runs.
    checked = 0
    for statement in split_statements(streamsql.FLINK_TABLES.read_text()):
        schema = re.search(r"\$\{schema:(\w+)\}", statement)
        assert schema, statement[:60]
        body = statement[statement.index("(") + 1 : statement.index(") WITH")]
        key_fields = set(re.findall(r"'key\.fields' = '(\w+)'", statement))
        columns = []
        for line in body.splitlines():
            line = line.strip().rstrip(",")
            if not line or line.startswith("WATERMARK") or " METADATA " in line:
                continue
            name = line.split()[0].strip("`")
            if name not in key_fields:
                columns.append((name, "NOT NULL" in line))
        assert columns == avro_fields(schema.group(1)), schema.group(1)
        checked += 1
    assert checked == 5


def test_split_statements_respects_quotes_and_drops_comments():
    text = "-- it's a comment; not a statement\nSELECT 'a;b' AS x; -- trailing\nSELECT `c;d` FROM t;\n\n"
    assert split_statements(text) == ["SELECT 'a;b' AS x", "SELECT `c;d` FROM t"]
    with pytest.raises(CatalogError):
        split_statements("SELECT 'open")


def test_render_fills_placeholders_as_sql_string_contents():
    values = {("registry_url", None): "http://r", ("schema", "X"): '{"doc": "it\'s"}'}
    out = render("'${registry_url}' '${schema:X}'", lambda k, a: values[(k, a)])
    assert out == "'http://r' '{\"doc\": \"it''s\"}'"


def test_a_catalog_needs_unique_named_purposeful_blocks(tmp_path):
    path = tmp_path / "c.sql"
    path.write_text("-- name: a\n-- purpose: p\nCREATE VIEW a AS SELECT 1;\n-- name: a\n-- purpose: p\nSELECT 2;\n")
    with pytest.raises(CatalogError, match="twice"):
        parse_catalog(path)
    path.write_text("-- name: b\nCREATE VIEW b AS SELECT 1;\n")
    with pytest.raises(CatalogError, match="purpose"):
        parse_catalog(path)
    path.write_text("-- name: Bad-Name\n-- purpose: p\nSELECT 1;\n")
    with pytest.raises(CatalogError, match="snake_case"):
        parse_catalog(path)


def test_since_takes_epoch_ms_iso_times_and_ages():
    now = 1_800_000_000_000
    assert parse_since(None) is None
    assert parse_since("1700000000123", now) == 1_700_000_000_123
    assert parse_since("15m", now) == now - 900_000
    assert parse_since("2h", now) == now - 7_200_000
    assert parse_since("2026-01-02T03:04:05", now) == 1_767_323_045_000
    assert parse_since("2026-01-02T03:04:05+01:00", now) == 1_767_319_445_000
    with pytest.raises(CatalogError):
        parse_since("yesterday", now)


def test_run_options_stop_at_the_latest_offsets_and_start_at_since():
    assert streamsql.scan_options(bounded=False, since_ms=None) == {}
    assert streamsql.scan_options(bounded=True, since_ms=5) == {
        "scan.bounded.mode": "latest-offset",
        "scan.startup.mode": "timestamp",
        "scan.startup.timestamp-millis": "5",
    }
