"""The order flow on the real stack: the gateway, the Streams app, Debezium-fed reference data."""

from __future__ import annotations

import time
import uuid
from decimal import Decimal

import psycopg
from confluent_kafka import Producer

from brokerstream.common import config
from brokerstream.gen.orders import OrderGenerator
from brokerstream.gen.produce import produce_orders
from brokerstream.launcher.layout import Layout
from brokerstream.ops.flowcheck import holdings, read_topic, reconcile, result_key, wait_drained

from .conftest import launcher

M1, M2 = "M000001", "M000002"


def accounts_of(world, member):
    return [a for a in world.accounts if a.member_id == member and a.status == "ACTIVE"]


def test_every_request_needs_a_known_key_and_a_member_sees_only_its_own(world, gateway_for):
    a1 = accounts_of(world, M1)[0].account_id
    a2 = accounts_of(world, M2)[0].account_id
    order = {"account_id": a2, "instrument_id": "EQ000001", "side": "BUY", "quantity": 1}
    assert gateway_for(None).post("/orders", order).status_code == 401
    stranger = gateway_for(None)
    stranger.http.headers["X-Api-Key"] = "not-a-key"
    assert stranger.post("/orders", order).status_code == 401
    m1 = gateway_for(M1)
    forbidden = m1.post("/orders", order)
    assert forbidden.status_code == 403 and a2 in forbidden.json()["error"]
    assert m1.get(f"/accounts/{a2}/positions").status_code == 403
    assert m1.get(f"/members/{M2}/risk").status_code == 403
    assert m1.get(f"/accounts/{a1}/positions").status_code == 200
    # a result is readable only by the member it belongs to: to another it does not exist
    mine = m1.order(account_id=a1, instrument_id="EQ000001", side="BUY", quantity=1)
    assert gateway_for(M2).get(f"/orders/{mine['order_id']}", wait_ms=0).status_code == 404
    assert gateway_for(M1).get("/health").status_code == 200


def test_an_accepted_order_without_its_result_yet_reads_pending_never_unknown(world, gateway_for):
    """Polls right behind a batch: each order is either decided (200) or pending (202), never 404; an
    id this gateway never accepted, or another member's, is 404."""
    a1 = accounts_of(world, M1)[0].account_id
    m1 = gateway_for(M1)
    batch = m1.post(
        "/orders:batch",
        {"orders": [{"account_id": a1, "instrument_id": "EQ000001", "side": "BUY", "quantity": 1} for _ in range(500)]},
    )
    assert batch.status_code == 202, batch.text
    ids = [o["order_id"] for o in batch.json()["orders"]]
    first = {}
    for order_id in reversed(ids):  # the last of the batch first: the most likely to be undecided
        resp = m1.get(f"/orders/{order_id}", wait_ms=0)
        first[order_id] = resp.status_code
        assert resp.status_code in (200, 202), resp.text
        if resp.status_code == 202:
            assert resp.json() == {"order_id": order_id, "status": "PENDING", "result": f"/orders/{order_id}"}
    assert 202 in first.values(), "no poll caught an order before its result: the test proves nothing"
    assert m1.get("/orders/never-placed-here", wait_ms=0).status_code == 404
    assert m1.get("/orders/never-placed-here", wait_ms=300).status_code == 404
    assert gateway_for(M2).get(f"/orders/{ids[-1]}", wait_ms=0).status_code == 404
    for order_id in ids:
        assert m1.get(f"/orders/{order_id}", wait_ms=10000).status_code == 200


def test_malformed_requests_are_refused_naming_the_field_and_write_nothing(world, gateway_for):
    gw = gateway_for(M1)
    a1 = accounts_of(world, M1)[0].account_id
    good = {"account_id": a1, "instrument_id": "EQ000001", "side": "BUY", "quantity": 1}
    cases = [
        ({k: v for k, v in good.items() if k != "quantity"}, "quantity"),
        (dict(good, side="HOLD"), "side"),
        (dict(good, quantity=1.5), "quantity"),
        (dict(good, limit_price="1.0000001"), "limit_price"),
        (dict(good, limit_price="abc"), "limit_price"),
        (dict(good, colour="red"), "colour"),
        (dict(good, account_id=7), "account_id"),
    ]
    for body, field in cases:
        resp = gw.post("/orders", body)
        assert resp.status_code == 400, (body, resp.text)
        assert resp.json()["field"] == field and field in resp.json()["error"]
    not_json = gw.http.post(gw.url + "/orders", data=b"{oops", headers={"Content-Type": "application/json"}, timeout=10)
    assert not_json.status_code == 400 and "not JSON" in not_json.json()["error"]

    # one bad order fails the whole batch; the good one in it is never written
    good_id = f"batch-{uuid.uuid4().hex[:8]}"
    batch = {"orders": [dict(good, order_id=good_id), dict(good, side="SIDEWAYS")]}
    resp = gw.post("/orders:batch", batch)
    assert resp.status_code == 400 and resp.json()["field"] == "orders[1].side"
    assert gw.get(f"/orders/{good_id}", wait_ms=2000).status_code == 404

    ok = gw.post(
        "/orders:batch", {"orders": [dict(good, order_id=f"b1-{good_id}"), dict(good, order_id=f"b2-{good_id}")]}
    )
    assert ok.status_code == 202 and len(ok.json()["orders"]) == 2
    for o in ok.json()["orders"]:
        assert gw.get(o["result"], wait_ms=10000).json()["status"] == "ACCEPTED"


def test_one_request_places_an_order_and_answers_with_its_result(world, gateway_for):
    """POST /orders?wait_ms=N answers with the result itself (200, what GET /orders/{id} gives), a rejection
    too; a working order, whose result is not due, gets the plain 202 once the wait passes; a wait the gateway
    refuses is a 400 that writes nothing."""
    gw = gateway_for(M1)
    a1 = accounts_of(world, M1)[0].account_id
    good = {"account_id": a1, "instrument_id": "EQ000001", "side": "BUY", "quantity": 1}

    def place(wait, **fields):
        body = dict(good, order_id=f"one-{uuid.uuid4().hex[:10]}", **fields)
        return body["order_id"], gw.http.post(gw.url + "/orders", params={"wait_ms": wait}, json=body, timeout=40)

    for bad in ("-1", "30001", "1e3", "abc", "", "１"):
        order_id, resp = place(bad)
        assert resp.status_code == 400 and "wait_ms" in resp.json()["error"], (bad, resp.text)
        assert gw.get(f"/orders/{order_id}", wait_ms=500).status_code == 404, bad

    order_id, resp = place(10000)
    assert resp.status_code == 200, resp.text
    assert resp.json()["status"] == "ACCEPTED" and resp.json() == gw.get(f"/orders/{order_id}").json()
    half = (Decimal(resp.json()["fill_price"]) / 2).quantize(Decimal("0.01"))
    order_id, resp = place(10000, quantity=0)
    assert resp.status_code == 200 and resp.json()["reason"] == "INVALID_QUANTITY", resp.text

    order_id, resp = place(0)
    assert resp.status_code == 202 and resp.json()["order_id"] == order_id

    t0 = time.monotonic()
    # rests (a buy limit at half the price: within the erroneous-order band): no result within the wait
    order_id, resp = place(700, limit_price=str(half), time_in_force="GTC")
    assert resp.status_code == 202 and resp.json()["order_id"] == order_id, resp.text
    assert time.monotonic() - t0 >= 0.6
    cancelled = gw.http.post(f"{gw.url}/orders/{order_id}/cancel", params={"wait_ms": 20000}, timeout=40)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "CANCELLED", cancelled.text


def test_orders_through_the_gateway_end_with_the_right_results_and_positions(world, gateway_for):
    member = "M000003"
    gw = gateway_for(member)
    account = next(a for a in accounts_of(world, member) if a.short_allowed).account_id
    instrument = "EQ000007"
    before = {p["instrument_id"]: p for p in gw.get(f"/accounts/{account}/positions").json()["positions"]}
    start_qty = before.get(instrument, {"quantity": 0})["quantity"]
    if start_qty < 0:
        # earlier tests' generated orders may leave this account short: cover first, so the buy below
        # opens a position and realizes nothing
        cover = gw.order(account_id=account, instrument_id=instrument, side="BUY", quantity=-start_qty)
        assert cover["status"] == "ACCEPTED", cover
        start_qty = 0

    buy = gw.order(account_id=account, instrument_id=instrument, side="BUY", quantity=30)
    assert buy["status"] == "ACCEPTED" and Decimal(buy["realized_pnl"]) == 0
    assert buy["closed_quantity"] == 0 and buy["closed_avg_cost"] is None  # opening closes nothing
    # a sell limit at half the price: marketable, and inside the erroneous-order band (5x)
    half = (Decimal(buy["fill_price"]) / 2).quantize(Decimal("0.01"))
    sell = gw.order(account_id=account, instrument_id=instrument, side="SELL", quantity=10, limit_price=str(half))
    assert sell["status"] == "ACCEPTED"
    # the result is the fill's realized P&L record: what it closed, at what cost, realizing what
    assert sell["closed_quantity"] == 10
    # realized against the exact cost of the closed units; their average, rounded to the micro, states it
    # to within half a micro a unit
    stated = 10 * (Decimal(sell["fill_price"]) - Decimal(sell["closed_avg_cost"]))
    assert abs(Decimal(sell["realized_pnl"]) - stated) <= 10 * Decimal("0.0000005")
    rejected = gw.order(account_id=account, instrument_id=instrument, side="BUY", quantity=1, limit_price=str(half))
    assert rejected["status"] == "REJECTED" and rejected["reason"] == "LIMIT_NOT_MET"
    zero = gw.order(account_id=account, instrument_id=instrument, side="BUY", quantity=0)
    assert zero["reason"] == "INVALID_QUANTITY"

    positions = {p["instrument_id"]: p for p in gw.get(f"/accounts/{account}/positions").json()["positions"]}
    assert positions[instrument]["quantity"] == start_qty + 20
    risk = gw.get(f"/members/{member}/risk").json()
    assert Decimal(risk["available"]) == Decimal(risk["buying_power"]) - Decimal(risk["committed"]) - Decimal(
        risk["reserved"]
    )
    assert Decimal(risk["committed"]) > 0

    # options are priced from the underlying
    option = next(
        i
        for i in world.instruments
        if i.instrument_type == "OPTION" and i.maturity > world.as_of and i.underlying_id == instrument
    )
    opt = gw.order(account_id=account, instrument_id=option.instrument_id, side="BUY", quantity=1)
    assert opt["status"] == "ACCEPTED" and Decimal(opt["fill_price"]) >= 0


def test_every_order_produced_ends_as_exactly_one_result_or_dead_letter(stack, world):
    tag = f"rec{uuid.uuid4().hex[:6]}"
    gen = OrderGenerator(world, 3, run_tag=tag, today=world.as_of, positions=holdings(stack))
    orders = [gen.next() for _ in range(3000)]
    report = produce_orders(stack, iter(orders))
    assert report.produced == 3000
    # and records that are not orders at all
    junk = (f"not avro {tag}".encode(), b"\x00\x00\x00\x7f\xff" + tag.encode(), b"\x00" + tag.encode())
    producer = Producer({"bootstrap.servers": stack.kafka_bootstrap, "partitioner": "murmur2_random"})
    for record in junk:
        producer.produce("orders", record, b"M000001")
    assert producer.flush(10) == 0

    wanted = {result_key(o.key, o.order_id): o for o in orders}
    wait_drained(stack)
    results = read_topic(stack, "order-results", keys=lambda k: k in wanted)
    letters = read_topic(stack, "dlq.streams")
    rec = reconcile(wanted, results, [])
    assert not rec.duplicates and not rec.missing, rec.summary()
    assert rec.accepted + sum(rec.rejected.values()) == 3000
    junk_letters = [d for d in letters if d.value["source_topic"] == "orders" and d.value["record_value"] in junk]
    assert len(junk_letters) == 3  # dead-lettered once each, under exactly-once
    for d in junk_letters:
        assert d.value["error_class"].endswith("SerializationException") and d.value["message"]
    # each order reached the outcome its generator intended
    for m in results:
        r = m.value
        expected = wanted[m.key].expected
        assert (r["status"] if r["status"] == "ACCEPTED" else r["reason"]) == expected, (r, expected)


def test_a_reference_change_in_postgres_changes_validation_within_5_seconds(stack, world, gateway_for):
    member = "M000002"
    account = accounts_of(world, member)[0].account_id
    gw = gateway_for(member)
    assert gw.order(account_id=account, instrument_id="EQ000001", side="BUY", quantity=1)["status"] == "ACCEPTED"
    with psycopg.connect(stack.postgres_dsn(), autocommit=True) as conn:
        try:
            conn.execute("UPDATE accounts SET status = 'SUSPENDED' WHERE account_id = %s", (account,))
            changed = time.monotonic()
            while True:
                r = gw.order(account_id=account, instrument_id="EQ000001", side="BUY", quantity=1)
                if r["reason"] == "ACCOUNT_INACTIVE":
                    break
                assert time.monotonic() - changed < 5, "the suspension did not reach validation within 5 s"
                time.sleep(0.1)
        finally:
            conn.execute("UPDATE accounts SET status = 'ACTIVE' WHERE account_id = %s", (account,))
    deadline = time.monotonic() + 10
    while gw.order(account_id=account, instrument_id="EQ000001", side="BUY", quantity=1)["status"] != "ACCEPTED":
        assert time.monotonic() < deadline


def test_a_second_instance_answers_for_keys_the_first_holds_and_the_reverse(stack, stack_env, world, gateway_for):
    # the launcher's own second instance (BS_STREAMS_INSTANCES=2): its own process, state and gateway
    two = dict(stack_env, BS_STREAMS_INSTANCES="2")
    second_cfg = config.load(environ=two)
    second_url = second_cfg.gateway_urls[1]
    try:
        out = launcher(two, "up", "--no-install", "streams").stdout
        assert "streams-2" in out and "ready" in out, out
        state = Layout(second_cfg).data("streams-2") / "state"
        assert state.is_dir() and state != Layout(second_cfg).data("streams") / "state"
        deadline = time.monotonic() + 90
        while True:  # both RUNNING after the rebalance
            try:
                ok = gateway_for(M1, second_url).get("/health").status_code == 200
                ok = ok and gateway_for(M1).get("/health").status_code == 200
            except Exception:
                ok = False
            if ok:
                break
            assert time.monotonic() < deadline
            time.sleep(1)
        time.sleep(2)
        for member in sorted({a.member_id for a in world.accounts}):
            first, second = gateway_for(member), gateway_for(member, second_url)
            for path in (f"/members/{member}/risk",) + tuple(
                f"/accounts/{a.account_id}/positions" for a in accounts_of(world, member)
            ):
                a, b = first.get(path), second.get(path)
                assert a.status_code == b.status_code, (path, a.text, b.text)
                if a.status_code == 200:
                    assert a.json() == b.json(), path
            if accounts_of(world, member) and member != "M000006":
                placed = second.post(
                    "/orders",
                    {
                        "account_id": accounts_of(world, member)[0].account_id,
                        "instrument_id": "EQ000002",
                        "side": "BUY",
                        "quantity": 1,
                    },
                )
                assert placed.status_code == 202
                assert first.get(placed.json()["result"], wait_ms=10000).status_code == 200
                assert second.get(placed.json()["result"], wait_ms=10000).status_code == 200
    finally:
        # stopped by its pid file through the launcher; the first instance goes on
        down = launcher(two, "down", "streams-2").stdout
        assert "streams-2" in down, down
    deadline = time.monotonic() + 90
    while gateway_for(M1).get("/health").status_code != 200:  # the first takes every partition back
        assert time.monotonic() < deadline, "the first instance did not take the flow back"
        time.sleep(1)
