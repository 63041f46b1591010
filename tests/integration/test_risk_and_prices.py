"""Risk and prices a member can trust, through the gateway on the real stack: each hostile sequence a member
or a feed can drive, on a member and equities of the test's own (so no other test's books move), ending in
what the broker must answer.

- a flip after a loss pays for its loss first (INSUFFICIENT_BUYING_POWER), and /risk counts reservations;
- a short whose price rises loses buying power at the P&L flow's marks until new exposure is refused;
- a price in doubt halts its equity (INSTRUMENT_HALTED, /instruments/{id}/status) until the feed confirms a
  level: a 95 % fall, a 1:20 reverse split, a spike that reverts; an operator halts and resumes (recorded);
- a tick stamped ahead locks nothing out; a price older than the bound fills nothing (STALE_PRICE);
- pre-trade controls: limits per order, REDUCING and HALTED members (recorded), an erroneous limit, the
  per-member rate (429 with Retry-After, nothing written);
- reference data no model can use is refused by Postgres.
"""

from __future__ import annotations

import time
from decimal import Decimal

import psycopg
import pytest
from confluent_kafka import Producer

from brokerstream.gen.avro_binary import StringCache, encode_tick
from brokerstream.gen.produce import schema_header
from brokerstream.ops import controls, keys
from brokerstream.ops.flowcheck import read_topic

from .conftest import GatewayClient, launcher

MICROS = 1_000_000


class Feed:
    """A feed of the test's own: ticks in sequence, stamped now unless told otherwise."""

    def __init__(self, stack):
        self.stack = stack
        self.header = schema_header(stack, "price-ticks", "PriceTick")
        self.producer = Producer({"bootstrap.servers": stack.kafka_bootstrap, "partitioner": "murmur2_random"})
        self.sequence = 0

    def tick(self, equity: str, price: str, event_ms: int | None = None) -> None:
        self.sequence += 1
        self.producer.produce(
            "price-ticks",
            encode_tick(
                self.header,
                StringCache(),
                equity,
                int(Decimal(price) * MICROS),
                event_ms if event_ms is not None else int(time.time() * 1000),
                self.sequence,
            ),
            equity.encode(),
        )
        assert self.producer.flush(10) == 0


def _until(what, check, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.3)


def _equity(stack, feed: Feed, equity: str, price: str, volatility: float = 0.3) -> None:
    """An equity of the test's own in Postgres (Debezium carries it to the flow), priced at `price`."""
    with psycopg.connect(stack.postgres_dsn()) as conn, conn.transaction():
        conn.execute(
            "INSERT INTO instruments (instrument_id, symbol, currency, exchange, name, instrument_type, status, "
            "multiplier) VALUES (%s, %s, 'USD', 'XNYS', %s, 'EQUITY', 'ACTIVE', 1) ON CONFLICT DO NOTHING",
            (equity, equity, equity),
        )
        conn.execute(
            "INSERT INTO equity_starts VALUES (%s, %s, %s) ON CONFLICT DO NOTHING", (equity, Decimal(price), volatility)
        )

    def priced():
        feed.tick(equity, price)
        time.sleep(0.5)
        latest = {m.key: m.value for m in read_topic(stack, "prices.latest", keys=lambda k: k == equity)}
        return equity in latest

    _until(f"{equity} priced", priced)


def _member(stack, member: str, cash: str, credit: str = "0", **limits) -> tuple[GatewayClient, str]:
    """A member of the test's own with one account (may short) holding `cash`; its gateway client."""
    account = f"{member}-A1"
    columns = {"trading_state": "ACTIVE", **limits}
    with psycopg.connect(stack.postgres_dsn()) as conn, conn.transaction():
        conn.execute(
            f"INSERT INTO members (member_id, name, status, credit_limit, {', '.join(columns)}) "
            f"VALUES (%s, %s, 'ACTIVE', %s, {', '.join(['%s'] * len(columns))})",
            (member, member, Decimal(credit), *columns.values()),
        )
        conn.execute("INSERT INTO accounts VALUES (%s, %s, 'ACTIVE', %s, true)", (account, member, Decimal(cash)))
    gw = GatewayClient(stack.gateway_url, keys.issue(stack, member, "risk tests").key)
    _until(f"{member} known to the gateway", lambda: gw.get(f"/members/{member}/risk").status_code == 200)
    return gw, account


def _latest(stack, equity: str) -> Decimal | None:
    latest = [m.value for m in read_topic(stack, "prices.latest", keys=lambda k: k == equity)]
    return latest[-1]["price"] if latest else None


def _risk(gw: GatewayClient, member: str) -> dict:
    resp = gw.get(f"/members/{member}/risk")
    assert resp.status_code == 200, resp.text
    return resp.json()


def _status(gw: GatewayClient, instrument: str) -> dict:
    resp = gw.get(f"/instruments/{instrument}/status")
    assert resp.status_code == 200, resp.text
    return resp.json()


@pytest.fixture(scope="module")
def feed(stack, world):
    return Feed(stack)


def test_a_flip_after_a_loss_pays_for_the_loss_first_and_risk_counts_reservations(stack, feed):
    _equity(stack, feed, "RK-FLIP", "100")
    gw, account = _member(stack, "RK-M1", "10000")
    buy = gw.order(account_id=account, instrument_id="RK-FLIP", side="BUY", quantity=90)
    assert buy["status"] == "ACCEPTED"
    feed.tick("RK-FLIP", "50")
    _until("the fall priced", lambda: _latest(stack, "RK-FLIP") == Decimal("50"))
    # closing 90 realizes -4,500: a short of 160 at 50 (8,000) is beyond the 5,500 left
    refused = gw.order(account_id=account, instrument_id="RK-FLIP", side="SELL", quantity=250)
    assert (refused["status"], refused["reason"]) == ("REJECTED", "INSUFFICIENT_BUYING_POWER"), refused
    assert "this fill realizes" in refused["reason_detail"]
    flip = gw.order(account_id=account, instrument_id="RK-FLIP", side="SELL", quantity=200)
    assert flip["status"] == "ACCEPTED" and Decimal(flip["realized_pnl"]) == Decimal("-4500")
    risk = _risk(gw, "RK-M1")
    assert Decimal(risk["committed"]) == Decimal("5500")
    assert Decimal(risk["available"]) <= 0
    # closing is never refused, whatever is left
    cover = gw.order(account_id=account, instrument_id="RK-FLIP", side="BUY", quantity=110)
    assert cover["status"] == "ACCEPTED"
    # a working order's reservation is out of what /risk calls available, as the decision counts it
    resp = gw.post(
        "/orders",
        {
            "account_id": account,
            "instrument_id": "RK-FLIP",
            "side": "BUY",
            "quantity": 10,
            "limit_price": "40",
            "time_in_force": "GTC",
        },
    )
    assert resp.status_code == 202, resp.text
    risk = _until("the reservation", lambda: (r := _risk(gw, "RK-M1")) and Decimal(r["reserved"]) > 0 and r)
    assert Decimal(risk["reserved"]) == Decimal("400")
    assert Decimal(risk["available"]) == Decimal(risk["buying_power"]) - Decimal(risk["committed"]) - Decimal("400")


def test_a_short_whose_price_rises_loses_buying_power_at_the_marks(stack, feed):
    _equity(stack, feed, "RK-SHORT", "100")
    _equity(stack, feed, "RK-OTHER", "100")
    gw, account = _member(stack, "RK-M2", "20000")
    short = gw.order(account_id=account, instrument_id="RK-SHORT", side="SELL", quantity=100)
    assert short["status"] == "ACCEPTED"
    probe = {"account_id": account, "instrument_id": "RK-OTHER", "side": "BUY", "quantity": 30}
    feed.tick("RK-SHORT", "180")  # within the band: the short has lost 8,000 at the mark
    risk = _until(
        "the P&L flow's loss in the member's risk",
        lambda: (r := _risk(gw, "RK-M2")) and Decimal(r["unrealized_loss"]) == Decimal("-8000") and r,
    )
    assert Decimal(risk["buying_power"]) == Decimal("12000") and risk["marks_as_of"]
    # committed 10,000 at cost + 3,000 more: beyond 20,000 - 8,000 lost
    refused = gw.order(**probe)
    assert (refused["status"], refused["reason"]) == ("REJECTED", "INSUFFICIENT_BUYING_POWER"), refused
    assert "lost at the marks" in refused["reason_detail"]
    feed.tick("RK-SHORT", "110")  # the loss shrinks to 1,000: the same order fits again
    _until("the loss shrinks", lambda: Decimal(_risk(gw, "RK-M2")["unrealized_loss"]) == Decimal("-1000"))
    assert gw.order(**probe)["status"] == "ACCEPTED"


@pytest.mark.parametrize(
    "equity, ticks, resumed_at",
    [
        ("RK-CRASH", ["1.31", "1.312", "1.309"], "1.309"),  # a 95 % fall
        ("RK-SPLIT", ["524.71", "525", "524.9"], "524.9"),  # a 1:20 reverse split
        ("RK-SPIKE", ["2623.55", "26.24", "26.23", "26.25"], "26.25"),  # a spike that reverts
    ],
)
def test_a_price_in_doubt_halts_its_equity_until_the_feed_confirms_a_level(stack, feed, equity, ticks, resumed_at):
    _equity(stack, feed, equity, "26.235526")
    gw, account = _member(stack, f"RK-H-{equity}", "1000000")
    order = {"account_id": account, "instrument_id": equity, "side": "BUY", "quantity": 1}
    feed.tick(equity, ticks[0])
    status = _until("the halt", lambda: (s := _status(gw, equity))["state"] == "HALTED" and s)
    assert status["reason"] == "PRICE_BAND" and Decimal(status["reference_price"]) == Decimal("26.235526")
    halted = gw.order(**order)
    assert (halted["status"], halted["reason"]) == ("REJECTED", "INSTRUMENT_HALTED"), halted
    for price in ticks[1:]:
        feed.tick(equity, price)
    _until("the resumption", lambda: _status(gw, equity)["state"] == "TRADING")
    filled = gw.order(**order)
    assert filled["status"] == "ACCEPTED" and Decimal(filled["fill_price"]) == Decimal(resumed_at), filled
    # the halt and the resumption are recorded in Postgres
    with psycopg.connect(stack.postgres_dsn()) as conn:
        recorded = _until(
            "the sync of the status changes",
            lambda: (
                conn.execute(
                    "SELECT state, reason FROM instrument_status_changes WHERE instrument_id = %s ORDER BY ts",
                    (equity,),
                ).fetchall()
                if len(
                    conn.execute(
                        "SELECT 1 FROM instrument_status_changes WHERE instrument_id = %s", (equity,)
                    ).fetchall()
                )
                >= 2
                else None
            ),
        )
    assert recorded == [("HALTED", "PRICE_BAND"), ("TRADING", "CONFIRMED")]


def test_an_operator_halts_and_resumes_an_equity_and_it_is_recorded(stack, stack_env, feed):
    _equity(stack, feed, "RK-OPS", "50")
    gw, account = _member(stack, "RK-M3", "1000000")
    launcher(stack_env, "prices", "halt", "RK-OPS", "--reason", "news pending", "--operator", "ops-1")
    status = _until("the operator's halt", lambda: (s := _status(gw, "RK-OPS"))["state"] == "HALTED" and s)
    assert (status["reason"], status["changed_by"], status["detail"]) == ("OPERATOR", "ops-1", "news pending")
    order = {"account_id": account, "instrument_id": "RK-OPS", "side": "BUY", "quantity": 1}
    assert gw.order(**order)["reason"] == "INSTRUMENT_HALTED"
    for price in ("51", "51.1", "51.2", "51.3"):  # agreeing ticks do not end an operator's halt
        feed.tick("RK-OPS", price)
    time.sleep(2)
    assert _status(gw, "RK-OPS")["state"] == "HALTED"
    launcher(stack_env, "prices", "resume", "RK-OPS", "--reason", "news out", "--operator", "ops-1")
    _until("the operator's resumption", lambda: _status(gw, "RK-OPS")["state"] == "TRADING")
    filled = gw.order(**order)
    assert Decimal(filled["fill_price"]) == Decimal("51.3"), filled  # the feed's last word while halted
    history = _until(
        "the recorded changes", lambda: len(rows := controls.status_history(stack, "RK-OPS")) >= 2 and rows
    )
    assert [(r[1], r[2], r[3]) for r in reversed(history)] == [
        ("HALTED", "OPERATOR", "ops-1"),
        ("TRADING", "OPERATOR", "ops-1"),
    ]


def test_a_tick_stamped_ahead_locks_nothing_out_and_an_old_price_fills_nothing(stack, feed):
    _equity(stack, feed, "RK-AHEAD", "20")
    gw, account = _member(stack, "RK-M4", "1000000")
    now = int(time.time() * 1000)
    feed.tick("RK-AHEAD", "20.5", now + 55_000)  # a feed clock almost a minute ahead
    feed.tick("RK-AHEAD", "20.7")  # the real ticks after it are in order
    _until(
        "the real tick accepted",
        lambda: any(
            m.value["price"] == Decimal("20.7")
            for m in read_topic(stack, "prices.latest", keys=lambda k: k == "RK-AHEAD")
        ),
    )
    assert not [
        d for d in read_topic(stack, "dlq.ticks") if d.key == "RK-AHEAD" and d.value["error_class"] == "OUT_OF_ORDER"
    ]
    # an equity whose only price was observed two hours ago (the test stack's bound is one hour)
    with psycopg.connect(stack.postgres_dsn()) as conn, conn.transaction():
        conn.execute(
            "INSERT INTO instruments (instrument_id, symbol, currency, exchange, name, instrument_type, status, "
            "multiplier) VALUES ('RK-OLD', 'RK-OLD', 'USD', 'XNYS', 'RK-OLD', 'EQUITY', 'ACTIVE', 1)"
        )
        conn.execute("INSERT INTO equity_starts VALUES ('RK-OLD', 10, 0.3)")

    def priced_two_hours_ago():
        feed.tick("RK-OLD", "10", now - 2 * 3600 * 1000)
        time.sleep(0.5)
        return any(True for _ in read_topic(stack, "prices.latest", keys=lambda k: k == "RK-OLD"))

    _until("the old price", priced_two_hours_ago)
    stale = gw.order(account_id=account, instrument_id="RK-OLD", side="BUY", quantity=1)
    assert (stale["status"], stale["reason"]) == ("REJECTED", "STALE_PRICE"), stale


def test_pre_trade_controls_refuse_at_their_edges_and_every_change_of_state_is_recorded(stack, stack_env, feed):
    _equity(stack, feed, "RK-PTC", "100")
    gw, account = _member(stack, "RK-M5", "1000000", max_order_quantity=10, max_order_notional=Decimal("500"))
    order = {"account_id": account, "instrument_id": "RK-PTC", "side": "BUY"}
    assert gw.order(**order, quantity=5)["status"] == "ACCEPTED"  # 500: at the notional
    too_big = gw.order(**order, quantity=11)
    assert too_big["reason"] == "ORDER_TOO_LARGE" and "limit of 10" in too_big["reason_detail"]
    assert gw.order(**order, quantity=6)["reason"] == "ORDER_TOO_LARGE"  # 600 beyond 500
    assert gw.order(**order, quantity=1, limit_price="500.000001")["reason"] == "PRICE_OUT_OF_BAND"
    assert gw.order(**order, quantity=1, limit_price="500")["status"] == "ACCEPTED"

    launcher(stack_env, "members", "state", "RK-M5", "REDUCING", "--reason", "margin call", "--operator", "risk-1")
    reduce_only = _until(
        "REDUCING reaches the flow", lambda: (r := gw.order(**order, quantity=1))["status"] == "REJECTED" and r
    )
    assert reduce_only["reason"] == "REDUCE_ONLY"
    assert gw.order(account_id=account, instrument_id="RK-PTC", side="SELL", quantity=1)["status"] == "ACCEPTED"
    assert _risk(gw, "RK-M5")["trading_state"] == "REDUCING"
    launcher(stack_env, "members", "state", "RK-M5", "HALTED", "--operator", "risk-1")
    halted = _until(
        "HALTED reaches the flow",
        lambda: (
            (r := gw.order(account_id=account, instrument_id="RK-PTC", side="SELL", quantity=1))["reason"]
            == "MEMBER_HALTED"
            and r
        ),
    )
    assert halted["status"] == "REJECTED"
    with psycopg.connect(stack.postgres_dsn()) as conn:
        changes = conn.execute(
            "SELECT from_state, to_state, operator, reason FROM member_state_changes WHERE member_id = 'RK-M5' "
            "ORDER BY changed_at"
        ).fetchall()
    assert changes == [
        (None, "ACTIVE", changes[0][2], None),
        ("ACTIVE", "REDUCING", "risk-1", "margin call"),
        ("REDUCING", "HALTED", "risk-1", None),
    ]


def test_a_member_beyond_its_rate_is_answered_429_and_nothing_is_written(stack, feed):
    _equity(stack, feed, "RK-RATE", "10")
    gw, account = _member(stack, "RK-M6", "1000000", max_orders_per_second=5)
    answers = []
    for n in range(12):
        resp = gw.post(
            "/orders",
            {"order_id": f"rate-{n}", "account_id": account, "instrument_id": "RK-RATE", "side": "BUY", "quantity": 1},
        )
        answers.append((f"rate-{n}", resp.status_code, resp.headers.get("Retry-After")))
    refused = [a for a in answers if a[1] == 429]
    assert refused and all(r[2] and int(r[2]) >= 1 for r in refused), answers
    assert len([a for a in answers if a[1] == 202]) <= 6  # a second's worth, and what refilled meanwhile
    time.sleep(3)
    written = {m.value["order_id"] for m in read_topic(stack, "orders", keys=lambda k: k == "RK-M6")}
    assert not written & {r[0] for r in refused}
    # another member is not slowed by it
    other, other_account = _member(stack, "RK-M7", "1000000")
    ok = other.post("/orders", {"account_id": other_account, "instrument_id": "RK-RATE", "side": "BUY", "quantity": 1})
    assert ok.status_code == 202


@pytest.mark.parametrize("volatility", ["'NaN'", "'Infinity'", "0", "10.5"])
def test_postgres_refuses_a_volatility_no_model_can_use(stack, world, volatility):
    equity = next(s.instrument_id for s in world.equity_starts)
    with psycopg.connect(stack.postgres_dsn()) as conn:
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(
                f"UPDATE equity_starts SET volatility = {volatility}::double precision WHERE instrument_id = %s",
                (equity,),
            )
