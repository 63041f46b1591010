"""The native stack, service by service, with a real request to each (issue: platform)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import urllib.request
import uuid

import psycopg
import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import Schema
from confluent_kafka.schema_registry.error import SchemaRegistryError

from brokerstream.clients.flinksql import SqlSession, wait_job
from brokerstream.clients.schemas import registry_client
from brokerstream.common.topics import load_catalog
from brokerstream.launcher import postgres_ddl, provision

from .conftest import launcher


def status_rows(env) -> dict[str, dict]:
    return {r["service"]: r for r in json.loads(launcher(env, "status", "--json").stdout)["services"]}


def test_every_service_is_healthy_and_listens_on_loopback_only(stack, stack_env):
    # The streams app reports unhealthy while it rebalances (an earlier test stops a second instance):
    # give it the session timeout to settle.
    deadline = time.monotonic() + 30
    while True:
        rows = status_rows(stack_env)
        if all(r["state"] == "healthy" for r in rows.values()) or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert {name: r["state"] for name, r in rows.items()} == {name: "healthy" for name in rows}
    for name, row in rows.items():
        assert row["pid"] and row["rss_bytes"] > 0, name
        listening = row["listening"]
        assert listening, f"{name} listens nowhere"
        assert {addr for addr, _ in listening} == {"127.0.0.1"}, f"{name}: {listening}"
        assert set(row["ports"].values()) <= {port for _, port in listening}, name


def test_catalog_topics_exist_with_their_partitions(stack):
    admin = AdminClient({"bootstrap.servers": stack.kafka_bootstrap})
    existing = admin.list_topics(timeout=10).topics
    for topic in load_catalog(stack):
        assert topic.name in existing, topic.name
        assert len(existing[topic.name].partitions) == topic.partitions, topic.name


def test_kafka_produces_and_consumes(stack):
    topic = f"smoke-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": stack.kafka_bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result()
    producer = Producer({"bootstrap.servers": stack.kafka_bootstrap, "enable.idempotence": True})
    payloads = [f"record-{i}".encode() for i in range(10)]
    for p in payloads:
        producer.produce(topic, p, key=b"k")
    assert producer.flush(10) == 0
    consumer = Consumer(
        {"bootstrap.servers": stack.kafka_bootstrap, "group.id": topic, "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    got = []
    deadline = time.monotonic() + 20
    while len(got) < len(payloads) and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and not msg.error():
            got.append(msg.value())
    consumer.close()
    assert got == payloads
    admin.delete_topics([topic])


V1 = {
    "type": "record",
    "name": "Smoke",
    "namespace": "io.brokerstream.test",
    "fields": [{"name": "id", "type": "string"}],
}


def test_registry_speaks_the_confluent_api_with_backward_compatibility(stack):
    client = registry_client(stack)
    subject = f"smoke-{uuid.uuid4().hex[:8]}-value"
    schema_id = client.register_schema(subject, Schema(json.dumps(V1), "AVRO"))
    fetched = client.get_schema(schema_id)
    assert json.loads(fetched.schema_str)["name"] == "Smoke"
    compatible = dict(V1, fields=V1["fields"] + [{"name": "note", "type": "string", "default": ""}])
    incompatible = dict(V1, fields=V1["fields"] + [{"name": "qty", "type": "long"}])
    client.register_schema(subject, Schema(json.dumps(compatible), "AVRO"))
    with pytest.raises(SchemaRegistryError) as err:
        client.register_schema(subject, Schema(json.dumps(incompatible), "AVRO"))
    assert err.value.http_status_code == 409


def test_postgres_creates_and_reads_a_table(stack):
    with psycopg.connect(stack.postgres_dsn(), autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS smoke (id int PRIMARY KEY, note text)")
        conn.execute("INSERT INTO smoke VALUES (1, 'one') ON CONFLICT (id) DO NOTHING")
        assert conn.execute("SELECT note FROM smoke WHERE id = 1").fetchone() == ("one",)
        assert conn.execute("SHOW wal_level").fetchone() == ("logical",)


def test_up_runs_unchanged_ddl_not_at_all_so_it_never_waits_on_the_sinks_locks(stack):
    # A writer mid-transaction on a flow table: re-running the DDL would want an ACCESS EXCLUSIVE lock on
    # it (ALTER TABLE ... IF NOT EXISTS) and wait, or deadlock with the sink.
    with psycopg.connect(stack.postgres_dsn()) as writer:
        writer.execute("LOCK TABLE order_results, positions IN ROW EXCLUSIVE MODE")
        done: list[str] = []
        runner = threading.Thread(target=lambda: done.append(provision.postgres_ddl(stack)), daemon=True)
        runner.start()
        runner.join(timeout=20)
        writer.rollback()
    runner.join(timeout=30)
    files = len(list((stack.root / "sql" / "postgres").glob("*.sql")))
    assert done and done[0] == f"0 DDL files of sql/postgres applied, {files} unchanged", done


def test_a_new_ddl_file_is_applied_once_and_waits_out_a_lock_held_past_its_timeout(stack, tmp_path):
    tag = uuid.uuid4().hex[:8]
    table, name = f"ddl_probe_{tag}", f"900_probe_{tag}.sql"
    (tmp_path / name).write_text(
        f"CREATE TABLE IF NOT EXISTS {table} (id int PRIMARY KEY);\n"
        f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS note text;\n"
    )
    with psycopg.connect(stack.postgres_dsn(), autocommit=True) as conn:
        try:
            conn.execute(f"CREATE TABLE {table} (id int PRIMARY KEY)")
            holder = psycopg.connect(stack.postgres_dsn())
            holder.execute(f"LOCK TABLE {table} IN ROW EXCLUSIVE MODE")
            release = threading.Timer(7.0, holder.close)  # past one lock timeout: the first try gives up
            release.start()
            first = postgres_ddl.apply(conn, tmp_path)
            release.join()
            assert first.applied == (name,) and first.retries >= 1, first
            assert conn.execute(
                "SELECT count(*) FROM information_schema.columns WHERE table_name = %s AND column_name = 'note'",
                (table,),
            ).fetchone() == (1,)
            again = postgres_ddl.apply(conn, tmp_path)
            assert again.applied == () and again.unchanged == (name,)
            (tmp_path / name).write_text(
                (tmp_path / name).read_text() + f"CREATE INDEX IF NOT EXISTS {table}_note ON {table} (note);\n"
            )
            changed = postgres_ddl.apply(conn, tmp_path)
            assert changed.applied == (name,)
        finally:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
            conn.execute(f"DELETE FROM {postgres_ddl.LEDGER} WHERE file = %s", (name,))


REWRITTEN_ROWS = {
    # the tables the sync rewrites row by row, and a row of each (the key's first column takes a number)
    "positions": (
        "INSERT INTO positions (account_id, member_id, instrument_id, underlying_id, multiplier, quantity,"
        " avg_cost, realized_pnl, version, updated_ts) SELECT 'hot-' || n, 'm', 'EQ1', 'EQ1', 1, 10, 1.5, 0, 1,"
        " now() FROM generate_series(1, %s) n",
        "UPDATE positions SET quantity = quantity + 1, version = version + 1 WHERE account_id LIKE 'hot-%%'",
    ),
    "equity_marks": (
        "INSERT INTO equity_marks (underlying_id, underlying_price, window_end, computed_ts, marks)"
        " SELECT 'hot-' || n, 100, now(), now(), json_build_array(json_build_object('instrument_id', 'EQ1',"
        " 'mark_price', 100), json_build_object('instrument_id', 'OPT1', 'mark_price', repeat('7', 900)))"
        " FROM generate_series(1, %s) n",
        "UPDATE equity_marks SET underlying_price = underlying_price + 1 WHERE underlying_id LIKE 'hot-%%'",
    ),
}


@pytest.mark.parametrize("table", sorted(REWRITTEN_ROWS))
def test_the_rows_the_sync_rewrites_have_room_on_their_page_for_their_next_version(stack, table):
    # On a full page an update writes its new version elsewhere and inserts it into every index of the table;
    # with room on the page it is a heap-only update and no index changes. Rows written and rewritten within
    # one transaction (rolled back: nothing stays) can only use the room the table's fill factor left: on new
    # pages at fill factor f about (100 - f) / f of them (positions at 70: 43 %; equity_marks at 50: all),
    # at 100 next to none. (A table with free room from earlier versions takes more in place either way.)
    insert, update = REWRITTEN_ROWS[table]
    with psycopg.connect(stack.postgres_dsn()) as conn:
        try:
            conn.execute(insert, (2000,))
            updated = conn.execute(update).rowcount
            hot, total = conn.execute(
                "SELECT pg_stat_get_xact_tuples_hot_updated(%s::regclass),"
                " pg_stat_get_xact_tuples_updated(%s::regclass)",
                (table, table),
            ).fetchone()
        finally:
            conn.rollback()
    assert updated == total == 2000
    assert hot / total > 0.3, (table, hot, total)


def test_postgres_wants_a_password_and_never_lets_the_superuser_in_over_tcp(stack):
    host, port = stack["BS_POSTGRES_HOST"], stack.port("postgres")
    attempts = [
        ("postgres", ""),
        ("postgres", "postgres"),
        (stack["BS_POSTGRES_USER"], ""),
        (stack["BS_POSTGRES_USER"], stack["BS_POSTGRES_PASSWORD"] + "-wrong"),
    ]
    for user, password in attempts:
        with pytest.raises(psycopg.OperationalError) as refused:
            psycopg.connect(
                host=host, port=port, user=user, password=password, dbname="postgres", connect_timeout=5
            ).close()
        assert (
            "password authentication failed" in str(refused.value)
            or "rejects connection" in str(refused.value)
            or "no password supplied" in str(refused.value)
        ), (user, str(refused.value))
    # the registry's password is in its environment, not on its command line
    for proc_dir in os.listdir("/proc"):
        if proc_dir.isdigit():
            try:
                with open(f"/proc/{proc_dir}/cmdline", "rb") as f:
                    argv = f.read().decode(errors="replace")
            except OSError:
                continue
            if "quarkus-run.jar" in argv:
                assert f"password={stack['BS_POSTGRES_PASSWORD']}" not in argv


def test_connect_has_the_debezium_source_our_postgres_sink_and_the_avro_converter(stack):
    with urllib.request.urlopen(stack.connect_url + "/connector-plugins?connectorsOnly=false", timeout=10) as r:
        classes = {p["class"] for p in json.load(r)}
    assert "io.debezium.connector.postgresql.PostgresConnector" in classes
    assert "io.brokerstream.connect.postgres.PostgresSinkConnector" in classes
    assert "io.debezium.connector.jdbc.JdbcSinkConnector" in classes  # still installed: bench sink --ceiling --debezium
    assert "io.apicurio.registry.utils.converter.AvroConverter" in classes
    assert "io.brokerstream.connect.convert.RegistryFaultsConverter" in classes  # wraps it: outages wait
    assert "io.debezium.transforms.ExtractNewRecordState" in classes


def test_flink_runs_a_job_submitted_through_the_sql_gateway(stack):
    with SqlSession(stack.sql_gateway_url, {"execution.runtime-mode": "batch"}) as sql:
        sql.execute(
            "CREATE TEMPORARY TABLE numbers (n BIGINT) WITH ('connector' = 'datagen', "
            "'number-of-rows' = '100', 'fields.n.kind' = 'sequence', 'fields.n.start' = '1', "
            "'fields.n.end' = '100')"
        )
        result = sql.execute("SELECT SUM(n) AS total FROM numbers")
    assert result.rows == [[5050]]
    assert wait_job(stack.flink_url, result.job_id) == "FINISHED"


def test_chdb_answers_queries_through_the_clickhouse_client(stack, tmp_path):
    import clickhouse_connect

    client = clickhouse_connect.get_client(dsn=f"chdb://{tmp_path / 'ch'}")
    client.command("CREATE TABLE t (x UInt32) ENGINE = MergeTree ORDER BY x")
    client.insert("t", [[1], [2], [3]], column_names=["x"])
    assert client.query("SELECT sum(x) FROM t").result_rows == [(6,)]


def test_kill_minus_nine_is_reported_and_up_restores_the_service(stack, stack_env):
    pid = status_rows(stack_env)["connect"]["pid"]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while status_rows(stack_env)["connect"]["state"] != "down" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert status_rows(stack_env)["connect"]["state"] == "down"
    assert launcher(stack_env, "status", "--check", check=False).returncode == 1
    out = launcher(stack_env, "up", "--no-install").stdout
    assert "connect" in out and "ready in" in out
    assert "kafka              already running" in out
    rows = status_rows(stack_env)
    assert rows["connect"]["state"] == "healthy" and rows["connect"]["pid"] != pid


def test_down_leaves_nothing_running_and_up_keeps_data_and_schemas(stack, stack_env):
    client = registry_client(stack)
    subject = f"persist-{uuid.uuid4().hex[:8]}-value"
    schema_id = client.register_schema(subject, Schema(json.dumps(V1), "AVRO"))
    with psycopg.connect(stack.postgres_dsn(), autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS persist (id int PRIMARY KEY)")
        conn.execute("INSERT INTO persist VALUES (7) ON CONFLICT DO NOTHING")
    pids = {r["pid"] for r in status_rows(stack_env).values()}
    ports = {p for r in status_rows(stack_env).values() for _, p in r["listening"]}

    launcher(stack_env, "down")
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split(") ")[1][0] == "Z"
    listening = {
        int(line.split()[1].split(":")[1], 16)
        for table in ("/proc/net/tcp", "/proc/net/tcp6")
        for line in open(table).read().splitlines()[1:]
        if line.split()[3] == "0A"
    }
    assert not (ports & listening), f"still listening after down: {ports & listening}"

    launcher(stack_env, "up", "--no-install")
    fresh = registry_client(stack)
    assert json.loads(fresh.get_schema(schema_id).schema_str)["name"] == "Smoke"
    assert subject in fresh.get_subjects()
    with psycopg.connect(stack.postgres_dsn(), autocommit=True) as conn:
        assert conn.execute("SELECT id FROM persist").fetchall() == [(7,)]
