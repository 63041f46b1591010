"""Debezium on the real stack: reference data captured from Postgres, flow topics synced back to it."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from decimal import Decimal

import psycopg
import requests
from confluent_kafka import Producer

from brokerstream.clients.connectors import Connect, check, load_specs
from brokerstream.gen.orders import OrderGenerator
from brokerstream.gen.produce import produce_orders
from brokerstream.ops.flowcheck import latest_positions, read_topic, wait_drained

from .conftest import ROOT, launcher

CLI_JAR = ROOT / "schemas" / "target" / "schemas-0.1.0-cli.jar"


def wait_for(predicate, timeout=60.0, every=0.5, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"{what} not met within {timeout} s"
        time.sleep(every)


def test_an_insert_update_and_delete_in_postgres_arrive_in_the_reference_topic(stack, world):
    member = f"MT{uuid.uuid4().hex[:6].upper()}"
    with psycopg.connect(stack.postgres_dsn(), autocommit=True) as conn:
        conn.execute("INSERT INTO members VALUES (%s, 'Test Member', 'ACTIVE', 1000.5)", (member,))
        conn.execute("UPDATE members SET credit_limit = 2000.25, status = 'SUSPENDED' WHERE member_id = %s", (member,))
        conn.execute("DELETE FROM members WHERE member_id = %s", (member,))

    def records():
        found = [m for m in read_topic(stack, "ref.members", keys=lambda k: k == member)]
        return found if len(found) >= 3 else None

    inserted, updated, deleted = wait_for(records, what="three change events")[:3]
    assert inserted.value == {
        "member_id": member,
        "name": "Test Member",
        "status": "ACTIVE",
        "credit_limit": Decimal("1000.500000"),
        # the pre-trade controls' columns, at their defaults
        "trading_state": "ACTIVE",
        "max_order_quantity": None,
        "max_order_notional": None,
        "max_orders_per_second": None,
    }
    assert updated.value["credit_limit"] == Decimal("2000.250000") and updated.value["status"] == "SUSPENDED"
    assert deleted.value is None  # a tombstone: the key is gone from the tables built on the topic

    # The connector's schema is a compatible version of ours: our generated class reads its records.
    schema = requests.get(f"{stack.registry_url}/subjects/ref.members-value/versions/latest", timeout=10).json()
    assert json.loads(schema["schema"])["name"] == "Member"
    out = subprocess.run(
        [
            "java",
            "-jar",
            str(CLI_JAR),
            "consume",
            stack.kafka_bootstrap,
            stack.registry_url,
            "ref.members",
            "Member",
            str(len(world.members) + 3),
            "60",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    read = [json.loads(line) for line in out.stdout.splitlines()]
    assert {r["value"]["member_id"] for r in read if r["value"]} >= {m.member_id for m in world.members} | {member}
    assert [r["value"] for r in read if r["key"] == member][-1] is None


def postgres_rows(cfg, sql, *params):
    with psycopg.connect(cfg.postgres_dsn()) as conn:
        return conn.execute(sql, params).fetchall()


def run_orders(stack, world, tag, count):
    gen = OrderGenerator(world, 29, run_tag=tag, today=world.as_of)
    orders = [gen.next() for _ in range(count)]
    assert produce_orders(stack, iter(orders)).produced == count
    return orders


def test_after_a_run_postgres_holds_what_the_topics_hold(stack, world):
    tag = f"pg{uuid.uuid4().hex[:6]}"
    orders = run_orders(stack, world, tag, 5000)
    wait_drained(stack)
    results = {
        m.value["order_id"]: m.value
        for m in read_topic(stack, "order-results", keys=lambda k: k.partition("|")[2].startswith(tag))
    }
    assert len(results) == 5000
    wait_for(
        lambda: (
            postgres_rows(stack, "SELECT count(*) FROM order_results WHERE order_id LIKE %s", tag + "%")[0][0] == 5000
        ),
        what="all results in Postgres",
    )
    rows = {
        r[0]: r
        for r in postgres_rows(
            stack,
            "SELECT order_id, member_id, status, reason, fill_price, "
            "realized_pnl, limit_price, short_sale, closed_quantity, closed_avg_cost "
            "FROM order_results WHERE order_id LIKE %s",
            tag + "%",
        )
    }
    for order_id, r in results.items():
        assert rows[order_id][1:] == (
            r["member_id"],
            r["status"],
            r["reason"],
            r["fill_price"],
            r["realized_pnl"],
            r["limit_price"],
            r["short_sale"],
            r["closed_quantity"],
            r["closed_avg_cost"],
        )
    # what each order said comes along with its outcome: the raw orders topic is not synced
    sent = {o.order_id: o for o in orders}
    assert all(
        rows[i][6] == (None if sent[i].limit_micros is None else Decimal(sent[i].limit_micros).scaleb(-6)) for i in rows
    )
    # a closing fill's result is its realized P&L row: the view shows exactly those, nothing else
    closing = {i for i, r in results.items() if r["closed_quantity"] > 0}
    assert closing and all(results[i]["status"] == "ACCEPTED" for i in closing)
    realized = postgres_rows(
        stack,
        "SELECT order_id, closed_quantity, avg_cost, realized_pnl FROM realized_pnl WHERE order_id LIKE %s",
        tag + "%",
    )
    assert {r[0]: r[1:] for r in realized} == {
        i: (results[i]["closed_quantity"], results[i]["closed_avg_cost"], results[i]["realized_pnl"]) for i in closing
    }

    # positions: Postgres equals the latest version of every position in the topic
    latest = latest_positions(stack)

    def same():
        table = {
            f"{a}|{i}": (q, c, p, v)
            for a, i, q, c, p, v in postgres_rows(
                stack, "SELECT account_id, instrument_id, quantity, avg_cost, realized_pnl, version FROM positions"
            )
        }
        return table == {k: (p["quantity"], p["avg_cost"], p["realized_pnl"], p["version"]) for k, p in latest.items()}

    wait_for(same, what="positions in Postgres equal to the topic")

    # every row says when the sink wrote it (the sink's statement stamps it; no trigger does), after the
    # flow decided it and never in the future
    stamps = postgres_rows(
        stack,
        "SELECT count(*) FILTER (WHERE synced_at IS NULL), "
        "count(*) FILTER (WHERE synced_at < processed_ts OR synced_at > clock_timestamp()) "
        "FROM order_results WHERE order_id LIKE %s",
        tag + "%",
    )
    assert stamps == [(0, 0)]
    assert postgres_rows(
        stack, "SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal AND tgname LIKE %s", "%synced_at"
    ) == [(0,)]


def test_restarting_the_sinks_mid_run_leaves_no_duplicates_and_no_gaps(stack, world):
    tag = f"rs{uuid.uuid4().hex[:6]}"
    connect = Connect(stack.connect_url)
    orders = run_orders(stack, world, tag, 30_000)
    time.sleep(1)
    for name in ("sink-orders", "sink-marks"):
        connect.restart(name)
    time.sleep(2)
    for name in ("sink-orders", "sink-marks"):
        connect.restart(name)
    wait_drained(stack)
    wait_for(
        lambda: (
            postgres_rows(stack, "SELECT count(*) FROM order_results WHERE order_id LIKE %s", tag + "%")[0][0] == 30_000
        ),
        timeout=120,
        what="every result in Postgres",
    )
    ids = [r[0] for r in postgres_rows(stack, "SELECT order_id FROM order_results WHERE order_id LIKE %s", tag + "%")]
    assert sorted(ids) == sorted(o.order_id for o in orders)  # primary keys: no duplicates, and no gaps
    # the sinks can have caught up while a restart is still settling: RESTARTING must end in RUNNING
    wait_for(lambda: check(stack) == [], timeout=30, what="every connector and task running after the restarts")


def test_a_poison_record_goes_to_the_sink_dead_letter_topic_with_its_error(stack, world):
    poison = f"poison-{uuid.uuid4().hex[:6]}".encode()
    producer = Producer({"bootstrap.servers": stack.kafka_bootstrap})
    # order-events: a topic the sink reads and no other reader of the shared stack does
    producer.produce("order-events", poison, b"A0000001")
    assert producer.flush(10) == 0
    letter = wait_for(
        lambda: next((m for m in read_topic(stack, "dlq.connect", decode=False) if m.value == poison), None),
        what="the poison record in dlq.connect",
    )
    assert letter.key == "A0000001"
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": stack.kafka_bootstrap, "group.id": f"h-{uuid.uuid4().hex}"})
    consumer.assign([TopicPartition("dlq.connect", letter.partition, letter.offset)])
    msg = consumer.consume(1, 10)[0]
    consumer.close()
    headers = {k: v.decode() for k, v in msg.headers()}
    assert headers["__connect.errors.topic"] == "order-events"
    assert "Exception" in headers["__connect.errors.exception.class.name"]
    assert all(problem == [] for problem in [check(stack)])  # the sink goes on


def test_a_failed_task_shows_in_status_and_fails_the_check(stack, stack_env, world):
    connect = Connect(stack.connect_url)
    spec = next(s for s in load_specs() if s.name == "sink-marks")
    broken = dict(spec.config, **{"connection.password": "not-the-password"})
    requests.put(f"{stack.connect_url}/connectors/broken-sink/config", json=broken, timeout=10).raise_for_status()
    try:
        wait_for(lambda: any("broken-sink" in p and "FAILED" in p for p in check(stack)), what="the task to fail")
        status = json.loads(launcher(stack_env, "status", "--json", check=False).stdout)
        broken_row = next(c for c in status["connectors"] if c["connector"] == "broken-sink")
        assert [t["state"] for t in broken_row["tasks"]] == ["FAILED"]
        assert launcher(stack_env, "connectors", "check", check=False).returncode == 1
    finally:
        connect.delete("broken-sink")
    assert launcher(stack_env, "connectors", "check", check=False).returncode == 0
