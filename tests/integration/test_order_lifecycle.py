"""The order lifecycle on the real stack, through the gateway: a stop order rests, is listed, amended and
cancelled (DELETE answers with the outcome that won); the account statement and the order's history come
back from Postgres; a kill -9 of the order flow while ticks cross working orders triggers nothing twice
and loses nothing; and a DAY order still working at its exchange's close expires."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import signal
import time
from decimal import Decimal

import pytest

from brokerstream.ops import statement
from brokerstream.ops.flowcheck import read_topic, result_key

from .conftest import launcher
from .test_connectors import wait_for
from .test_exactly_once import streams_pid
from .test_working_orders import _events, _tick

M1, M2 = "M000001", "M000002"
LIFECYCLE_EQUITY = "EQ000012"  # no other test ticks these two
RESTART_EQUITY = "EQ000013"


def _sequence() -> int:
    """Tick sequence numbers that only grow, also across runs on a kept stack."""
    return time.time_ns() // 1000


def _account(world, member: str) -> str:
    return next(a for a in world.accounts if a.member_id == member and a.status == "ACTIVE").account_id


def _place_buy(gw, account: str, instrument: str, quantity: int, **terms) -> str:
    """A working buy (its limit or stop and time in force in `terms`) through the gateway; its order id."""
    resp = gw.post(
        "/orders", {"account_id": account, "instrument_id": instrument, "side": "BUY", "quantity": quantity, **terms}
    )
    assert resp.status_code == 202, resp.text
    return resp.json()["order_id"]


def _held(gw, account: str, instrument: str) -> dict | None:
    return next(
        (p for p in gw.get(f"/accounts/{account}/positions").json()["positions"] if p["instrument_id"] == instrument),
        None,
    )


def _buy_to_long(gw, account: str, instrument: str, quantity: int) -> Decimal:
    """A market buy that leaves the account long by at least `quantity`: the load tests trade every account
    and instrument, so a position may start short; its fill price."""
    held = _held(gw, account, instrument)
    short = max(0, -held["quantity"]) if held else 0
    result = gw.order(account_id=account, instrument_id=instrument, side="BUY", quantity=quantity + short)
    assert result["status"] == "ACCEPTED", result
    return Decimal(result["fill_price"])


def _reserved_for_buy(gw, account: str, instrument: str, bought: int, quantity: int, level: Decimal) -> Decimal:
    """What a working buy of `quantity` at `level` reserves: what its fill would add to the committed value.
    The position keeps the exact cost of its open units, so that is quantity x level exactly."""
    held = _held(gw, account, instrument)
    assert held["quantity"] >= bought, held  # it bought this many just now and sells none
    return quantity * level


def _open(gw, member: str) -> dict[str, dict]:
    """The member's working orders, asked again while the flow answers 503 (its state restoring)."""
    deadline = time.monotonic() + 120
    while (resp := gw.get(f"/members/{member}/orders", status="OPEN")).status_code == 503:
        assert time.monotonic() < deadline, resp.text
        time.sleep(1)
    assert resp.status_code == 200, resp.text
    return {o["order_id"]: o for o in resp.json()["orders"]}


def test_a_stop_order_is_listed_amended_cancelled_and_its_statement_comes_from_postgres(stack, world, gateway_for):
    gw = gateway_for(M1)
    account = _account(world, M1)
    started = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=5)
    price = _buy_to_long(gw, account, LIFECYCLE_EQUITY, 2)
    stop = (price * Decimal("1.2")).quantize(Decimal("0.01"))
    order_id = _place_buy(gw, account, LIFECYCLE_EQUITY, 3, stop_price=str(stop), time_in_force="GTC")

    listed = wait_for(lambda: _open(gw, M1).get(order_id), timeout=30, what="the stop order to be listed")
    assert (listed["quantity"], Decimal(listed["stop_price"]), listed["limit_price"]) == (3, stop, None)
    assert Decimal(listed["reserved"]) == _reserved_for_buy(gw, account, LIFECYCLE_EQUITY, 2, 3, stop)
    assert listed["time_in_force"] == "GTC"
    # the list is the member's own; only OPEN is listed here
    assert gateway_for(M2).get(f"/members/{M1}/orders").status_code == 403
    assert gw.get(f"/members/{M1}/orders", status="FILLED").status_code == 400

    bad = gw.http.patch(f"{gw.url}/orders/{order_id}", json={"side": "SELL"}, timeout=30)
    assert bad.status_code == 400 and bad.json()["field"] == "side"
    new_stop = (stop * Decimal("1.05")).quantize(Decimal("0.01"))
    amended = gw.http.patch(
        f"{gw.url}/orders/{order_id}", json={"quantity": 5, "stop_price": str(new_stop)}, timeout=30
    )
    assert amended.status_code == 202 and amended.json()["status"] == "AMEND_REQUESTED", amended.text
    wait_for(lambda: _open(gw, M1).get(order_id, {}).get("quantity") == 5, timeout=30, what="the amend")
    assert Decimal(_open(gw, M1)[order_id]["stop_price"]) == new_stop
    _tick(stack, stop, _sequence(), LIFECYCLE_EQUITY)  # the old stop: no longer a trigger

    cancelled = gw.http.post(f"{gw.url}/orders/{order_id}/cancel", params={"wait_ms": 20000}, timeout=40)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "CANCELLED", cancelled.text
    again = gw.http.post(f"{gw.url}/orders/{order_id}/cancel", timeout=40)
    assert again.status_code == 409 and "CANCELLED" in again.json()["error"]
    assert order_id not in _open(gw, M1)
    assert [e["event"] for e in _events(stack, M1, order_id, 3)] == ["OPEN", "AMENDED", "CANCELLED"]

    # Postgres: the events and the outcome reach it through the sinks; the statement and history read them
    def synced():
        s = statement.statement(stack, account, started, dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=1))
        mine = [ln for ln in s.lines if ln["order_id"] == order_id]
        return s if len(mine) == 4 else None

    s = wait_for(synced, timeout=60, what="the order's events and result in Postgres")
    mine = [ln for ln in s.lines if ln["order_id"] == order_id]
    # the cancel's event and its result carry the same broker time, so only the first two are in a fixed order
    assert [ln["kind"] for ln in mine][:2] == ["OPEN", "AMENDED"]
    assert sorted(ln["kind"] for ln in mine[2:]) == ["CANCELLED", "CANCELLED"]
    fill = next(ln for ln in s.lines if ln["kind"] == "FILL" and ln["instrument_id"] == LIFECYCLE_EQUITY)
    assert fill["cash_movement"] == -2 * Decimal(fill["price"])  # a buy of 2 at its price, multiplier 1
    doc = json.loads(s.to_json())
    assert doc["account_id"] == account and doc["counts"]["FILL"] >= 1
    assert Decimal(doc["cash_movement"]) == s.cash_movement
    rows = list(csv.DictReader(io.StringIO(s.to_csv())))
    assert len(rows) == len(s.lines) and {r["kind"] for r in rows} >= {"FILL", "OPEN", "AMENDED", "CANCELLED"}

    steps = statement.history(stack, M1, order_id)
    assert [st["event"] for st in steps] == ["PLACED", "OPEN", "AMENDED", "CANCELLED", "CANCELLED"]  # event, then end
    assert steps[2]["quantity"] == 5 and Decimal(steps[2]["price"]) == new_stop
    # another member's order id names nothing of this member
    assert statement.history(stack, M2, order_id) == []


def test_kill_minus_nine_while_ticks_cross_working_orders_triggers_nothing_twice(stack, stack_env, world, gateway_for):
    gw = gateway_for(M1)
    account = _account(world, M1)
    price = Decimal(gw.order(account_id=account, instrument_id=RESTART_EQUITY, side="BUY", quantity=1)["fill_price"])
    limits = [(price * (Decimal("0.80") + Decimal("0.005") * i)).quantize(Decimal("0.01")) for i in range(30)]
    placed = {}
    for limit in limits:
        placed[_place_buy(gw, account, RESTART_EQUITY, 2, limit_price=str(limit), time_in_force="GTC")] = limit
    wait_for(lambda: set(placed) <= set(_open(gw, M1)), timeout=30, what="every order working")

    # ticks walk down through the limits; the flow dies in the middle and the rest arrive while it is down
    ticks = [(price * (Decimal("0.95") - Decimal("0.003") * i)).quantize(Decimal("0.000001")) for i in range(60)]
    for tick in ticks[:20]:
        _tick(stack, tick, _sequence(), RESTART_EQUITY)
        time.sleep(0.05)
    victim = streams_pid(stack_env)
    os.kill(victim, signal.SIGKILL)
    for tick in ticks[20:]:
        _tick(stack, tick, _sequence(), RESTART_EQUITY)
    launcher(stack_env, "up", "--no-install", "streams")
    assert streams_pid(stack_env) != victim

    keys = {result_key(M1, o) for o in placed}

    def all_results():
        found = [m.value for m in read_topic(stack, "order-results", keys=lambda k: k in keys)]
        return found if len(found) >= len(placed) else None

    results = wait_for(all_results, timeout=180, what="every working order's result")
    time.sleep(3)  # anything decided twice would show by now
    results = [m.value for m in read_topic(stack, "order-results", keys=lambda k: k in keys)]
    assert sorted(r["order_id"] for r in results) == sorted(placed), "one result per order, none twice"
    assert all(r["status"] == "ACCEPTED" for r in results), [r for r in results if r["status"] != "ACCEPTED"]
    assert all(Decimal(r["fill_price"]) <= placed[r["order_id"]] for r in results)
    events = [m.value for m in read_topic(stack, "order-events", keys=lambda k: k in keys)]
    triggered = [e["order_id"] for e in events if e["event"] == "TRIGGERED"]
    assert sorted(triggered) == sorted(placed), "each order triggered exactly once"
    # the book sent its triggers twice (in its transaction and at once, outside it), and a book task that
    # died before its commit sent some again after its restore: still one decision per order
    fast = [m.value["order_id"] for m in read_topic(stack, "order-triggers.fast") if m.value["order_id"] in placed]
    assert fast and set(fast) <= set(placed), "fast copies of the triggers were sent"
    assert not set(placed) & set(_open(gw, M1)), "nothing left working, so nothing left reserved"


def _near_close(seconds: float) -> tuple[dt.datetime, str] | None:
    """A close `seconds` from now as `HH:MM:SS@zone`, in a zone where that moment falls on a weekday (the
    calendar closes Monday to Friday); None in the hours of Sunday when no such zone exists."""
    at = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=seconds)).replace(microsecond=0)
    for zone, hours in (("UTC", 0), ("Etc/GMT+12", -12), ("Etc/GMT-14", 14)):
        local = at + dt.timedelta(hours=hours)
        if local.weekday() < 5:
            return at, f"{local:%H:%M:%S}@{zone}"
    return None


def test_a_day_order_still_working_at_its_exchanges_close_expires_and_releases_what_it_held(
    stack, stack_env, world, gateway_for
):
    equity = next(
        i.instrument_id
        for i in world.instruments
        if i.instrument_type == "EQUITY"
        and i.status == "ACTIVE"
        and i.exchange == "XNAS"
        and i.instrument_id
        not in {
            "EQ000001",
            "EQ000002",
            "EQ000003",
            "EQ000004",
            "EQ000005",
            "EQ000007",
            "EQ000011",
            LIFECYCLE_EQUITY,
            RESTART_EQUITY,
        }
    )
    near = _near_close(55)
    if near is None:
        pytest.skip("no time zone is on a weekday now, and the calendar closes on weekdays only")
    close_at, close = near
    # the order flow restarted with its Nasdaq close a minute away; every other exchange as configured
    env = dict(
        stack_env, BROKER_ORDERS_MARKET_CLOSE=f"XNYS=16:00@America/New_York,XNAS={close},XCBO=16:15@America/New_York"
    )
    launcher(env, "down", "streams")
    try:
        launcher(env, "up", "--no-install", "streams")
        gw = gateway_for(M2)
        account = _account(world, M2)
        price = _buy_to_long(gw, account, equity, 1)
        limit = (price * Decimal("0.5")).quantize(Decimal("0.01"))
        order_id = _place_buy(gw, account, equity, 4, limit_price=str(limit), time_in_force="DAY")
        assert dt.datetime.now(dt.timezone.utc) < close_at, "placed after the close: the restart took too long"
        listed = wait_for(lambda: _open(gw, M2).get(order_id), timeout=30, what="the DAY order to be listed")
        assert listed["time_in_force"] == "DAY"
        assert Decimal(listed["reserved"]) == _reserved_for_buy(gw, account, equity, 1, 4, limit)
        assert dt.datetime.fromisoformat(listed["expires_ts"].replace("Z", "+00:00")) == close_at

        def expired():
            r = gw.get(f"/orders/{order_id}", wait_ms=5000)
            return r.json() if r.status_code == 200 and r.json().get("status") == "EXPIRED" else None

        result = wait_for(
            expired,
            timeout=(close_at - dt.datetime.now(dt.timezone.utc)).total_seconds() + 60,
            what="the DAY order to expire at the close",
        )
        assert result["fill_price"] is None, result
        assert dt.datetime.now(dt.timezone.utc) >= close_at
        assert order_id not in _open(gw, M2), "off the member's working orders, its reservation released"
        assert [e["event"] for e in _events(stack, M2, order_id, 2)] == ["OPEN", "EXPIRED"]
        # Postgres: its expiry event and its result, through the sinks (the same broker time, so either order)
        steps = wait_for(
            lambda: (s := statement.history(stack, M2, order_id)) and len(s) == 4 and s,
            timeout=60,
            what="the expiry in Postgres",
        )
        assert [st["event"] for st in steps] == ["PLACED", "OPEN", "EXPIRED", "EXPIRED"]
    finally:
        launcher(stack_env, "down", "streams")
        launcher(stack_env, "up", "--no-install", "streams")
