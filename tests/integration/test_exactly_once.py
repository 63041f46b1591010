"""Exactly-once on the real stack: kill -9 the order flow in the middle of a prefilled run, restart it,
and the outcome is as if nothing had happened."""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from decimal import Decimal

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from brokerstream.gen.orders import OrderGenerator
from brokerstream.gen.produce import produce_orders
from brokerstream.loadtest.bench import architectures
from brokerstream.ops.flowcheck import (
    holdings,
    latest_positions,
    read_topic,
    reconcile,
    replay_positions,
    result_key,
    wait_drained,
)

from .conftest import launcher

ORDERS = 80_000


def results_written(cfg) -> int:
    consumer = Consumer({"bootstrap.servers": cfg.kafka_bootstrap, "group.id": "eos-watch"})
    try:
        parts = consumer.list_topics("order-results", timeout=10).topics["order-results"].partitions
        return sum(consumer.get_watermark_offsets(TopicPartition("order-results", p), timeout=10)[1] for p in parts)
    finally:
        consumer.close()


def streams_pid(env) -> int:
    rows = {r["service"]: r for r in json.loads(launcher(env, "status", "--json").stdout)["services"]}
    return rows["streams"]["pid"]


def test_kill_minus_nine_mid_run_loses_nothing_and_applies_nothing_twice(stack, stack_env, world, gateway_for):
    launcher(stack_env, "down", "streams")
    tag = f"eos{uuid.uuid4().hex[:6]}"
    holdings_before = holdings(stack)
    gen = OrderGenerator(world, 17, run_tag=tag, today=world.as_of, positions=holdings_before)
    orders = [gen.next() for _ in range(ORDERS)]
    baseline = results_written(stack)
    assert produce_orders(stack, iter(orders)).produced == ORDERS

    launcher(stack_env, "up", "--no-install", "streams")
    deadline = time.monotonic() + 120
    while results_written(stack) - baseline < ORDERS // 3:
        assert time.monotonic() < deadline, "the flow did not get a third of the way"
        time.sleep(0.2)
    victim = streams_pid(stack_env)
    os.kill(victim, signal.SIGKILL)
    launcher(stack_env, "up", "--no-install", "streams")
    assert streams_pid(stack_env) != victim

    wanted = {result_key(o.key, o.order_id): o for o in orders}
    wait_drained(stack, timeout=240)
    all_results = read_topic(stack, "order-results")
    results = [m for m in all_results if m.key in wanted]

    # Nothing lost, nothing decided twice (read_committed sees only committed transactions).
    rec = reconcile(wanted, results, [])
    assert rec.missing == [] and rec.duplicates == [], rec.summary()
    assert rec.accepted + sum(rec.rejected.values()) == ORDERS
    mismatched = [
        (m.key, m.value["status"], m.value["reason"], wanted[m.key].expected)
        for m in results
        if (m.value["status"] if m.value["status"] == "ACCEPTED" else m.value["reason"]) != wanted[m.key].expected
    ]
    if mismatched:  # say where the broker's view and the generator's parted
        first = wanted[mismatched[0][0]]
        key = (first.account_id, first.instrument_id)
        broker = sum(
            (m.value["quantity"] if m.value["side"] == "BUY" else -m.value["quantity"])
            for m in results
            if m.value["status"] == "ACCEPTED" and (m.value["account_id"], m.value["instrument_id"]) == key
        )
        meant = sum(
            (o.quantity if o.side == "BUY" else -o.quantity)
            for o in orders
            if o.expected == "ACCEPTED" and (o.account_id, o.instrument_id) == key
        )
        start = holdings_before.get(first.account_id, {}).get(first.instrument_id, 0)
        related = [
            (
                m.value["order_id"],
                m.value["side"],
                m.value["quantity"],
                m.value["status"],
                m.value["reason"],
                wanted[m.key].expected,
            )
            for m in results
            if (m.value["account_id"], m.value["instrument_id"]) == key
        ]
        raise AssertionError(
            f"{len(mismatched)} orders decided otherwise than meant, e.g. {mismatched[:5]}; "
            f"{key}: held at start {start}, broker net fills {broker}, generator meant {meant}; "
            f"orders on it: {sorted(related)[:40]}"
        )

    # Positions: every order ever sent, replayed in the order the flow took them with the fills it
    # reported, equal the positions it published and the ones it answers queries with. Orders a
    # baseline drain decided on this stack (test_baseline) were booked in its tables, not the flow's.
    multipliers = {i.instrument_id: i.multiplier for i in world.instruments}
    fills = {
        result_key(m.value["member_id"], m.value["order_id"]): (
            m.value["fill_price"],
            multipliers[m.value["instrument_id"]],
        )
        for m in all_results
        if m.value["status"] == "ACCEPTED"
    }
    expected = replay_positions(read_topic(stack, "orders"), fills, architectures.of("baseline").decided_records(stack))
    published = latest_positions(stack)
    assert set(published) == set(expected)
    for key, (qty, avg, realized) in expected.items():
        p = published[key]
        assert (p["quantity"], p["avg_cost"], p["realized_pnl"]) == (qty, avg, realized), key

    # quantities straight from the orders the generator meant to be accepted
    for key in {f"{o.account_id}|{o.instrument_id}" for o in orders if o.expected == "ACCEPTED"}:
        assert key in published
    member_of = {a.account_id: a.member_id for a in world.accounts}
    for account in {o.account_id for o in orders if o.expected == "ACCEPTED"}:
        gw = gateway_for(member_of[account])
        answered = {p["instrument_id"]: p for p in gw.get(f"/accounts/{account}/positions").json()["positions"]}
        for key, (qty, avg, realized) in expected.items():
            acct, instrument = key.split("|")
            if acct == account:
                assert answered[instrument]["quantity"] == qty
                assert Decimal(answered[instrument]["avg_cost"]) == avg
                assert Decimal(answered[instrument]["realized_pnl"]) == realized

    # A member's risk is not changelogged: the restarted flow summed it again from the positions it
    # restored. It must be what the positions add up to (|quantity| x average cost x multiplier
    # committed, realized P&L), exactly.
    committed: dict[str, Decimal] = {}
    realized_by: dict[str, Decimal] = {}
    for p in published.values():
        m = p["member_id"]
        committed[m] = committed.get(m, Decimal(0)) + abs(p["quantity"]) * p["avg_cost"] * p["multiplier"]
        realized_by[m] = realized_by.get(m, Decimal(0)) + p["realized_pnl"]
    for member in sorted({member_of[o.account_id] for o in orders if o.expected == "ACCEPTED"}):
        risk = gateway_for(member).get(f"/members/{member}/risk").json()
        assert (Decimal(risk["committed"]), Decimal(risk["realized_pnl"])) == (
            committed[member],
            realized_by[member],
        ), member


def test_reading_back_waits_for_an_open_transaction_and_then_sees_what_was_committed_after_it(stack):
    # A killed instance leaves its transaction open until the broker aborts it; results others committed
    # after its first record sit behind it. Reading "to the end" must wait for them, not stop short.
    topic = f"flowcheck-open-txn-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": stack.kafka_bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result()
    try:
        zombie = Producer({"bootstrap.servers": stack.kafka_bootstrap, "transactional.id": topic})
        zombie.init_transactions(30)
        zombie.begin_transaction()
        zombie.produce(topic, key=b"undecided", value=b"1")
        zombie.flush(30)
        later = Producer({"bootstrap.servers": stack.kafka_bootstrap, "enable.idempotence": True})
        later.produce(topic, key=b"committed-after", value=b"2")
        later.flush(30)

        with pytest.raises(TimeoutError):
            read_topic(stack, topic, decode=False, timeout=3)
        zombie.abort_transaction(30)
        assert [m.key for m in read_topic(stack, topic, decode=False, timeout=30)] == ["committed-after"]
    finally:
        admin.delete_topics([topic])[topic].result()
