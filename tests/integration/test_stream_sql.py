"""Stream SQL on the real stack: every Flink catalog query over a known small workload.

The workload is written after `since`, and every query runs with --since, so what earlier tests left
in the topics does not count; the expected rows come from the generator (what it injected) or from
reading the same topics back in Python, never from Flink.
"""

from __future__ import annotations

import re
import subprocess
import time
import uuid
from collections import Counter
from decimal import Decimal

import pytest

from brokerstream.clients.flinksql import SqlSession
from brokerstream.common.topics import POSITIONS
from brokerstream.gen.orders import FAULTS, OrderGenerator, OrderMix
from brokerstream.gen.produce import produce_orders, produce_prices
from brokerstream.ops import streamsql
from brokerstream.ops.flowcheck import holdings, read_topic, wait_drained

MICRO = Decimal("0.000001")


def rows_of(stack, name, since):
    result = streamsql.run(stack, name, since_ms=since, timeout=180)
    return [dict(zip(result.columns, row)) for row in result.rows]


@pytest.fixture(scope="module")
def workload(stack, world):
    """Orders with every fault injected at 2% (about one in six rejected), then ticks with known
    counts per equity, all written after `since`."""
    since = int(time.time() * 1000)
    time.sleep(0.05)
    mix = OrderMix(faults={f: 0.02 for f in FAULTS})
    gen = OrderGenerator(
        world, 23, mix, run_tag=f"sql{uuid.uuid4().hex[:6]}", today=world.as_of, positions=holdings(stack)
    )
    orders = [gen.next() for _ in range(1500)]
    assert produce_orders(stack, iter(orders)).produced == len(orders)
    wait_drained(stack)

    # Equity i ticks (i % 3) + 1 times, all at one event time, each tick 0.01 above the last.
    starts = {e.instrument_id: e.start_price for e in world.equity_starts}
    equities = sorted(starts)
    counts = {u: i % 3 + 1 for i, u in enumerate(equities)}
    event_ts = int(time.time() * 1000)
    for step in range(3):
        produce_prices(
            stack, {u: starts[u] + 10_000 * step for u in equities if counts[u] > step}, event_ts_ms=event_ts
        )
    return {"since": since, "orders": orders, "tick_counts": counts, "starts": starts, "event_ts": event_ts}


def test_open_orders_by_member_counts_what_each_member_placed_and_got_decided(stack, workload):
    placed = Counter(o.key for o in workload["orders"])
    rows = rows_of(stack, "open_orders_by_member", workload["since"])
    assert {r["member_id"]: (r["placed"], r["decided"], r["open_orders"]) for r in rows} == {
        m: (n, n, 0) for m, n in placed.items()
    }


def test_rejects_per_reason_per_minute_add_up_to_the_injected_faults(stack, workload):
    injected = Counter(o.expected for o in workload["orders"] if o.expected != "ACCEPTED")
    assert len(injected) >= 5, "the workload injects several kinds of fault"
    rows = rows_of(stack, "rejects_per_reason_per_minute", workload["since"])
    got = Counter()
    for r in rows:
        got[r["reason"]] += r["rejects"]
        start = r["window_start"]
        assert start.endswith(":00") and r["window_end"] > start, r
    assert got == injected


def test_top_positions_by_exposure_are_the_largest_open_positions_at_cost(stack, workload):
    latest = {}
    for m in read_topic(stack, POSITIONS):
        if m.timestamp_ms >= workload["since"] and m.value is not None:
            latest[m.key] = m.value  # partition order: a key's last record is its newest
    exposures = sorted(
        (
            (abs(p["quantity"]) * p["multiplier"] * p["avg_cost"], p["account_id"], p["instrument_id"], p)
            for p in latest.values()
            if p["quantity"] != 0
        ),
        key=lambda e: (-e[0], e[1], e[2]),
    )[:10]
    assert len(exposures) == 10
    rows = rows_of(stack, "top_positions_by_exposure", workload["since"])
    assert [
        (r["account_id"], r["instrument_id"], r["member_id"], r["quantity"], r["avg_cost"], r["exposure"]) for r in rows
    ] == [(a, i, p["member_id"], p["quantity"], p["avg_cost"], e) for e, a, i, p in exposures]


def test_realized_pnl_by_account_adds_up_the_closing_fills_results(stack, workload):
    realized: dict[str, tuple[int, int, Decimal]] = {}
    for m in read_topic(stack, "order-results"):
        r = m.value
        if m.timestamp_ms >= workload["since"] and r is not None and r["closed_quantity"] > 0:
            n, closed, pnl = realized.get(r["account_id"], (0, 0, Decimal(0)))
            realized[r["account_id"]] = (n + 1, closed + r["closed_quantity"], pnl + r["realized_pnl"])
    assert realized, "the workload sells what the accounts hold: some fills close"
    rows = rows_of(stack, "realized_pnl_by_account", workload["since"])
    assert {
        r["account_id"]: (r["closing_fills"], r["closed_quantity"], Decimal(r["realized_pnl"])) for r in rows
    } == realized


def test_tick_rates_per_instrument_count_the_ticks_sent(stack, workload):
    rows = rows_of(stack, "tick_rates_per_instrument", workload["since"])
    minute = workload["event_ts"] // 60_000 * 60_000
    got = {r["instrument_id"]: r for r in rows}
    assert set(got) == set(workload["tick_counts"])
    for instrument, n in workload["tick_counts"].items():
        r = got[instrument]
        start = workload["starts"][instrument]
        assert r["ticks"] == n
        assert abs(float(r["ticks_per_s"]) - n / 60) < 1e-9
        assert r["low"] == start * MICRO and r["high"] == (start + 10_000 * (n - 1)) * MICRO
        assert r["window_start"].startswith(time.strftime("%Y-%m-%dT%H:%M", time.gmtime(minute / 1000)))


def latest_member_pnl(stack, since):
    out = {}
    for m in read_topic(stack, "pnl.members"):
        if m.timestamp_ms >= since and m.value is not None:
            out[m.key] = m.value
    return out


def test_pnl_by_member_is_each_members_latest_record_from_the_pnl_job(stack, workload):
    # The ticks make the job revalue every member's positions; wait until its output settles.
    deadline = time.monotonic() + 90
    previous = None
    while True:
        latest = latest_member_pnl(stack, workload["since"])
        # settled when the values stop moving: a member holding positions is sent again every few seconds
        # (rollup.refresh-ms), with a new computed_ts and the same figures
        figures = {
            k: (v["unrealized_pnl"], v["market_value"], v["cost_basis"], v["positions"]) for k, v in latest.items()
        }
        if latest and figures == previous:
            break
        assert time.monotonic() < deadline, "the P&L job wrote nothing (or never settled) after the ticks"
        previous = figures
        time.sleep(4)
    rows = rows_of(stack, "pnl_by_member", workload["since"])
    assert {r["member_id"] for r in rows} == set(latest)
    for r in rows:
        v = latest[r["member_id"]]
        assert (r["unrealized_pnl"], r["market_value"], r["cost_basis"], r["positions"]) == (
            v["unrealized_pnl"],
            v["market_value"],
            v["cost_basis"],
            v["positions"],
        )
        assert r["unrealized_pnl"] == r["market_value"] - r["cost_basis"]
    assert any(r["positions"] > 0 for r in rows)


def test_every_catalog_query_also_plans_as_a_live_streaming_query(stack):
    with SqlSession(stack.sql_gateway_url, dict(streamsql.STREAMING_SETTINGS)) as sql:
        for statement in streamsql.session_statements(stack, bounded=False):
            sql.execute(statement)
        for query in streamsql.parse_catalog(streamsql.FLINK_CATALOG):
            plan = sql.execute(f"EXPLAIN SELECT * FROM {query.name}").rows
            assert plan and "TableSourceScan" in str(plan), query.name


def test_the_sql_client_opens_with_the_catalog_loaded(stack, tmp_path):
    script = tmp_path / "show.sql"
    script.write_text("SHOW VIEWS;\n")
    argv, env = streamsql.client_argv(stack)
    proc = subprocess.run(argv + ["-f", str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    for query in streamsql.parse_catalog(streamsql.FLINK_CATALOG):
        assert re.search(rf"\|\s+{query.name} \|", proc.stdout), query.name
