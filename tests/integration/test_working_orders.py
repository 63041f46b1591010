"""Working (GTC) orders on the real stack: one rests and fills when a tick crosses its limit, one is
cancelled, a cancel after the fill is refused, and each ends with exactly one result."""

from __future__ import annotations

import time
from decimal import Decimal

from confluent_kafka import Producer

from brokerstream.gen.avro_binary import StringCache, encode_tick
from brokerstream.gen.produce import command_value, schema_header
from brokerstream.ops.flowcheck import read_topic, result_key

M1 = "M000001"
EQUITY = "EQ000011"  # no other test ticks it


def _cancel(stack, member: str, order_id: str) -> None:
    # partitioned as Java clients do (murmur2), like the member's orders: the same task must see both
    p = Producer({"bootstrap.servers": stack.kafka_bootstrap, "partitioner": "murmur2_random"})
    p.produce("order-commands", command_value(stack, order_id), member.encode())
    assert p.flush(10) == 0


def _tick(stack, price: Decimal, sequence: int, equity: str = EQUITY) -> None:
    p = Producer({"bootstrap.servers": stack.kafka_bootstrap, "partitioner": "murmur2_random"})
    p.produce(
        "price-ticks",
        encode_tick(
            schema_header(stack, "price-ticks", "PriceTick"),
            StringCache(),
            equity,
            int(price * 1_000_000),
            int(time.time() * 1000),
            sequence,
        ),
        equity.encode(),
    )
    assert p.flush(10) == 0


def _events(stack, member: str, order_id: str, count: int) -> list[dict]:
    key = result_key(member, order_id)
    deadline = time.monotonic() + 30
    while True:
        found = [m.value for m in read_topic(stack, "order-events", keys=lambda k: k == key)]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def test_a_gtc_order_rests_fills_when_a_tick_crosses_and_a_cancel_races_it_once(stack, world, gateway_for):
    gw = gateway_for(M1)
    account = next(a for a in world.accounts if a.member_id == M1 and a.status == "ACTIVE").account_id
    price = Decimal(gw.order(account_id=account, instrument_id=EQUITY, side="BUY", quantity=1)["fill_price"])
    fills_at, cancelled_at = (
        (price * Decimal("0.9")).quantize(Decimal("0.01")),
        (price * Decimal("0.5")).quantize(Decimal("0.01")),
    )

    placed = {}
    for name, limit in (("fills", fills_at), ("cancelled", cancelled_at)):
        resp = gw.post(
            "/orders",
            {
                "account_id": account,
                "instrument_id": EQUITY,
                "side": "BUY",
                "quantity": 3,
                "limit_price": str(limit),
                "time_in_force": "GTC",
            },
        )
        assert resp.status_code == 202, resp.text
        placed[name] = resp.json()["order_id"]
    assert [e["event"] for e in _events(stack, M1, placed["fills"], 1)] == ["OPEN"]
    assert gw.get(f"/orders/{placed['fills']}", wait_ms=1000).status_code == 202  # working: no result yet

    crossing = (fills_at * Decimal("0.98")).quantize(Decimal("0.000001"))
    _tick(stack, crossing, 10**9)
    filled = gw.get(f"/orders/{placed['fills']}", wait_ms=30000)
    assert filled.status_code == 200, filled.text
    assert filled.json()["status"] == "ACCEPTED" and Decimal(filled.json()["fill_price"]) == crossing

    _cancel(stack, M1, placed["cancelled"])
    cancelled = gw.get(f"/orders/{placed['cancelled']}", wait_ms=30000)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "CANCELLED", cancelled.text
    _cancel(stack, M1, placed["fills"])  # too late: it filled
    events = _events(stack, M1, placed["fills"], 3)
    assert [e["event"] for e in events] == ["OPEN", "TRIGGERED", "CANCEL_REJECTED"]
    assert "not working" in events[-1]["detail"]

    # a tick through the cancelled order's limit books nothing; each order has exactly one result
    _tick(stack, (cancelled_at * Decimal("0.9")).quantize(Decimal("0.000001")), 10**9 + 1)
    time.sleep(3)
    keys = {result_key(M1, o) for o in placed.values()}
    results = [m.value for m in read_topic(stack, "order-results", keys=lambda k: k in keys)]
    assert sorted(r["status"] for r in results) == ["ACCEPTED", "CANCELLED"]
