"""The P&L job on the real stack: positions from the order flow plus ticks give the expected marks and
unrealized P&L in Kafka and Postgres; a stop with a savepoint and a resume leave no gaps and no duplicates."""

from __future__ import annotations

import math
import time
import uuid
from collections import Counter
from decimal import Decimal

import psycopg

from brokerstream.clients.flinkjobs import PNL_JOB, Flink, deploy, stop
from brokerstream.gen.market_model import load as market_model
from brokerstream.gen.orders import OrderGenerator
from brokerstream.gen.produce import produce_orders, produce_prices
from brokerstream.ops.flowcheck import latest_positions, read_marks, read_topic, wait_drained

MODEL = market_model()  # the one the P&L job values options with
RATE = MODEL.rate

MICRO = Decimal("0.000001")


def black_scholes(call: bool, s: float, k: float, t: float, r: float, sigma: float) -> float:
    n = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))
    d1 = (math.log(s / k) + (r + sigma * sigma / 2) * t) / (sigma * math.sqrt(t))
    d2 = d1 - sigma * math.sqrt(t)
    if call:
        return s * n(d1) - k * math.exp(-r * t) * n(d2)
    return k * math.exp(-r * t) * n(-d2) - s * n(-d1)


def open_positions(stack, world, count=3000):
    """Orders through the real flow, so the job reads positions the streams app wrote."""
    gen = OrderGenerator(world, 77, run_tag=f"pnl{uuid.uuid4().hex[:6]}", today=world.as_of)
    assert produce_orders(stack, (gen.next() for _ in range(count))).produced == count
    wait_drained(stack)
    return {k: p for k, p in latest_positions(stack).items() if p["quantity"] != 0}


def wait_for_marks(
    stack, instruments: set[str], price_of, since_ms: int, timeout=90.0, ticked: bool = True
) -> dict[str, dict]:
    """The latest mark of each instrument whose underlying price is the one we ticked (and, with `ticked`,
    that a tick since `since_ms` caused)."""
    deadline = time.monotonic() + timeout
    while True:
        found = {}
        for m in read_marks(stack, instruments):
            v = m.value
            caused = not ticked or (
                v and v["first_tick_ts"] is not None and v["first_tick_ts"].timestamp() * 1000 >= since_ms
            )
            if v and v["underlying_price"] == price_of(v["underlying_id"]) and caused:
                found[m.key] = v
        if set(found) == instruments:
            return found
        assert time.monotonic() < deadline, (
            f"{len(instruments - set(found))} of {len(instruments)} instruments have no mark yet"
        )
        time.sleep(2)


def unrealized(position: dict, mark: Decimal) -> Decimal:
    """A position's P&L at its instrument's mark, as the views and the roll-ups compute it: at the exact
    cost of its open units (what the order flow books), not at the rounded average."""
    units = position["quantity"] * position["multiplier"]
    sign = 1 if position["quantity"] > 0 else -1
    return units * mark - sign * position["cost_basis"] * position["multiplier"]


def test_positions_and_a_burst_of_ticks_give_the_expected_unrealized_pnl(stack, world):
    assert Flink(stack.flink_url).live(PNL_JOB), "up deploys the P&L job"
    positions = open_positions(stack, world)
    underlyings = sorted({p["underlying_id"] for p in positions.values()})
    held = {p["instrument_id"] for p in positions.values()}
    starts = {e.instrument_id: e for e in world.equity_starts}
    instruments = {i.instrument_id: i for i in world.instruments}
    # a burst: many ticks per equity, the last one (a known price) is the one that must count
    burst = int(time.time() * 1000)
    for step in range(5):
        produce_prices(stack, {u: starts[u].start_price + 10_000 * step for u in underlyings})
    final = {u: starts[u].start_price + 40_000 for u in underlyings}
    sent = int(time.time() * 1000)
    produce_prices(stack, final, event_ts_ms=sent)
    price_of = lambda u: Decimal(final[u]) * MICRO

    # one mark per held instrument (the window may hold burst ticks too), however many positions hold it
    marks = wait_for_marks(stack, held, price_of, burst)
    options = 0
    for instrument_id, v in marks.items():
        inst = instruments[instrument_id]
        if inst.instrument_type == "EQUITY":
            assert v["mark_price"] == price_of(inst.instrument_id)
            continue
        options += 1
        years = MODEL.years_to_expiry(inst.maturity, round(v["window_end"].timestamp() * 1000))
        s, k = final[inst.underlying_id] / 1e6, inst.strike / 1e6
        if years == 0:
            expected = max(0.0, s - k if inst.option_type == "CALL" else k - s)
        elif inst.exercise_style == "EUROPEAN" or inst.option_type == "CALL":
            expected = black_scholes(
                inst.option_type == "CALL", s, k, years, RATE, starts[inst.underlying_id].volatility
            )
        else:  # an American put is worth at least the European one and its intrinsic value
            assert (
                float(v["mark_price"])
                >= max(k - s, black_scholes(False, s, k, years, RATE, starts[inst.underlying_id].volatility)) - 1e-6
            )
            continue
        assert abs(float(v["mark_price"]) - expected) < 1e-5, (instrument_id, v["mark_price"], expected)
    assert options > 0, "the workload holds options too"
    assert len(marks) < len(positions), "marks are per instrument, not per position"
    # one record per equity, and the latest of each carries every held instrument of it: the compacted
    # topic alone values every position
    latest = {m.key: m.value for m in read_topic(stack, "pnl.equity-marks", keys=lambda k: k in underlyings)}
    for u in underlyings:
        carried = {h["instrument_id"] for h in latest[u]["marks"]}
        assert carried >= {p["instrument_id"] for p in positions.values() if p["underlying_id"] == u}, u

    # roll-ups: each account's latest record is the sum of its positions at their instruments' latest marks
    # (a later window's option mark may move with time: both are read at the same moment)
    accounts = {p["account_id"] for p in positions.values()}
    deadline = time.monotonic() + 90
    while True:
        latest = {m.key: m.value for m in read_topic(stack, "pnl.accounts", keys=lambda k: k in accounts)}
        now = {m.key: m.value["mark_price"] for m in read_marks(stack, held)}
        by_account = Counter()
        for p in positions.values():
            by_account[p["account_id"]] += unrealized(p, now[p["instrument_id"]])
        if all(latest.get(a) and latest[a]["unrealized_pnl"] == by_account[a] for a in accounts):
            break
        assert time.monotonic() < deadline, "account roll-ups do not add up to their positions at their marks"
        time.sleep(1)

    # Postgres: each equity's latest marks record arrives through the sink (one row per equity, its marks
    # opened by the instrument_marks view) within the sink's fetch wait plus the sync; the views
    # give each position's P&L at it, exactly, and each account's as the sum (the positions themselves reach
    # Postgres through the order flow's sink, which may still be syncing them: waited for too)
    deadline = time.monotonic() + 60
    while True:
        wanted = {m.key: m.value["mark_price"] for m in read_marks(stack, held)}
        with psycopg.connect(stack.postgres_dsn()) as conn:
            synced = dict(
                conn.execute(
                    "SELECT instrument_id, mark_price FROM instrument_marks WHERE instrument_id = ANY(%s)",
                    (sorted(held),),
                ).fetchall()
            )
            rows = conn.execute(
                "SELECT account_id, instrument_id, mark_price, unrealized_pnl FROM pnl_positions "
                "WHERE account_id = ANY(%s)",
                (sorted(accounts),),
            ).fetchall()
            totals = dict(
                conn.execute(
                    "SELECT account_id, unrealized_pnl FROM pnl_accounts WHERE account_id = ANY(%s)",
                    (sorted(accounts),),
                ).fetchall()
            )
        view = {(a, i): (m, u) for a, i, m, u in rows}
        expected = {
            (p["account_id"], p["instrument_id"]): (
                wanted[p["instrument_id"]],
                unrealized(p, wanted[p["instrument_id"]]),
            )
            for p in positions.values()
            if p["instrument_id"] in wanted
        }
        if synced == wanted and all(view.get(key) == value for key, value in expected.items()):
            break
        missing = sum(synced.get(key) != value for key, value in wanted.items())
        off = sorted(key for key, value in expected.items() if view.get(key) != value)
        assert time.monotonic() < deadline, (
            f"{missing} of {len(wanted)} instruments' marks not in Postgres; "
            f"positions whose P&L the view does not give yet: {off[:5]}"
        )
        time.sleep(2)
    assert len(expected) == len(positions)
    expected_by_account = Counter()
    for key, (_, pnl) in expected.items():
        expected_by_account[key[0]] += pnl
    assert {a: totals[a] for a in accounts} == dict(expected_by_account)


def test_stop_with_savepoint_and_resume_leaves_no_gaps_and_no_duplicates(stack, world):
    positions = open_positions(stack, world, count=500)
    underlyings = sorted({p["underlying_id"] for p in positions.values()})
    held = {p["instrument_id"] for p in positions.values()}
    starts = {e.instrument_id: e.start_price for e in world.equity_starts}
    before = {u: starts[u] + 70_000 for u in underlyings}
    t1 = int(time.time() * 1000)
    produce_prices(stack, before, event_ts_ms=t1)
    wait_for_marks(stack, held, lambda u: Decimal(before[u]) * MICRO, t1)

    assert "savepoint" in stop(stack)
    assert Flink(stack.flink_url).live(PNL_JOB) is None
    during = {u: starts[u] + 90_000 for u in underlyings}  # ticked while the job is down
    t2 = int(time.time() * 1000)
    produce_prices(stack, during, event_ts_ms=t2)
    assert "resumed from" in deploy(stack)
    wait_for_marks(stack, held, lambda u: Decimal(during[u]) * MICRO, t2)  # no gap: the job read them on resume

    # no duplicates across a stop with a savepoint: an instrument is valued at most once per tick window, so
    # each (instrument, window) of the tick-driven marks appears once (a crash, unlike a stop, may write a
    # window's marks again after the restore: the marks are the latest value per key, at least once)
    windows = Counter(
        (m.key, m.value["window_end"])
        for m in read_marks(stack, held)
        if m.value and m.value["first_tick_ts"] is not None
    )
    assert windows and max(windows.values()) == 1
