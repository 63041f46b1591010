"""The cost of an order and of a tick, each alone, against the budget (loadtest/budget.yaml):

    ./brokerstream bench cost [--rate 1000] [--tick-rate 1000] [--seconds 30] [--positions 20000] [--repeats 1]
                         [--ticks-first]

Every service runs (P&L job, connectors) throughout. Three windows, each read at its edges (bench/cost.py):

1. idle: no orders, no ticks (what the stack spends doing nothing, subtracted from the others);
2. orders alone: --rate orders/s through the gateway for --seconds (the load client's POST and long poll,
   open loop), no ticks; the window closes once the Postgres sync has caught up, so an order's whole
   path is in it;
3. orders alone, one request each: the same, each order one POST /orders?wait_ms=N answered with its
   result (members who wait for the result anyway need no second request);
4. ticks alone: --positions open positions for the P&L job, ticks at --tick-rate for --seconds, no
   orders; closes once the P&L sync has caught up.

The load client's watchers (order-results and the P&L marks, read to count outcomes) wait up to
WATCH_WAIT_MS per fetch here, not the few milliseconds that time visibility in `bench gateway` and
`bench system`: what the broker spends on them is in its figure, and at short waits they were a fifth of
its requests at 1,000 orders/s.

With --repeats N each of the three loaded windows runs N times on the one stack (every order window, then
every tick window over the same open positions; --ticks-first the other way round, so the tick windows
revalue only what earlier runs left open and the --positions written for them), and a summary gives each
service's median and the windows' range, checked against the budget at the median: one window of a 2-core
stack can read several times another's.

Each window prints CPU microseconds per unit by service (above idle) and, of it, what the JVMs' JIT
compilers spent (a warm-up cost: a fresh stack compiles what the load runs), broker requests by API key,
records and bytes written by topic and Postgres rows by table; stored in ClickHouse (`cost_lines`).
"""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from brokerstream.common.config import ROOT, Config
from brokerstream.gen import pgload
from brokerstream.launcher.cpugroups import CpuGroups
from brokerstream.launcher.services import service_names
from brokerstream.loadtest.bench import cost
from brokerstream.metrics.collector import GROUPS

BUDGET_FILE = ROOT / "loadtest" / "budget.yaml"
# How long the load client's watchers wait per fetch in this bench (ms): see the module docstring.
WATCH_WAIT_MS = 500
SYNC_GROUPS = ["connect-sink-orders"]
ALL_GROUPS = list(GROUPS)


def load_budget(path: Path = BUDGET_FILE) -> dict:
    return yaml.safe_load(path.read_text())


@dataclass
class CostResult:
    run_id: str
    idle: cost.Cost
    orders: list[cost.Cost]
    ticks: list[cost.Cost]
    budget: dict
    started: dt.datetime
    settings: dict
    orders_one_request: list[cost.Cost] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [
            f"run {self.run_id}: every service on (P&L job, connectors)",
            f"idle: {self.idle.stack_cores:.2f} cores over {self.idle.seconds:.0f} s: "
            + ", ".join(
                f"{s} {c:.3f}" for s, c in sorted(self.idle.cpu_cores.items(), key=lambda kv: -kv[1]) if c >= 0.0005
            ),
        ]
        kinds = (
            (self.orders, self.budget.get("orders")),
            (self.orders_one_request, self.budget.get("orders")),
            (self.ticks, self.budget.get("ticks")),
        )
        for windows, budget in kinds:
            for c in windows:
                out += cost.lines(c, self.idle, budget)
        for windows, budget in kinds:
            out += cost.spread_lines(windows, self.idle, budget)
        for c in (self.idle, *self.orders, *self.orders_one_request, *self.ticks):
            problem = cost.check_adds_up(c)
            if problem:
                out.append(f"  check ({c.label}): {problem}")
        return out


def lowest(a: cost.Cost, b: cost.Cost) -> cost.Cost:
    """The idle stack: each service at the lower of its two idle readings."""
    cores = {s: min(a.cpu_cores.get(s, v), v) for s, v in b.cpu_cores.items()}
    groups = {g: min(a.group_cores.get(g, v), v) for g, v in b.group_cores.items()}
    jit = {s: min(a.jit_cores.get(s, v), v) for s, v in b.jit_cores.items()}
    return cost.Cost(
        "idle",
        "second",
        a.units + b.units,
        a.seconds + b.seconds,
        cores,
        {},
        groups,
        "no orders, no ticks; each service at the lower of two readings",
        jit,
    )


def _settle(cfg: Config, groups: list[str], timeout: float) -> None:
    from brokerstream.loadtest.bench.system import _wait_settled

    _wait_settled(cfg, groups, timeout, floor=200)


def _open_positions(cfg: Config, written: int = 0, timeout: float = 120) -> tuple[int, int]:
    """Open positions and the instruments they hold, as Postgres has them once the sync has the `written`
    bench positions open (waiting up to `timeout`): what the P&L job revalues. The consumer groups' lag
    cannot say so on a fresh stack: a group that never committed on the positions topic shows no lag there."""
    import psycopg

    from brokerstream.loadtest.bench.pnl import BENCH

    deadline = time.monotonic() + timeout
    with psycopg.connect(cfg.postgres_dsn(), autocommit=True) as conn:
        while True:
            bench = conn.execute(
                "SELECT count(*) FROM positions WHERE account_id LIKE %s AND quantity <> 0", (BENCH + "%",)
            ).fetchone()[0]
            if bench >= written or time.monotonic() >= deadline:
                break
            time.sleep(1)
        row = conn.execute(
            "SELECT count(*), count(DISTINCT instrument_id) FROM positions WHERE quantity <> 0"
        ).fetchone()
    return int(row[0]), int(row[1])


def _tick_process(cfg: Config, seed: int, rate: float, stop) -> None:
    from brokerstream.gen.produce import produce_ticks
    from brokerstream.gen.ticks import TickGenerator

    produce_ticks(
        cfg, TickGenerator(pgload.read(cfg), seed, rate=rate), duration=24 * 3600, stop=stop.is_set, snapshot=False
    )


def _orders_window(cfg, meter, client, mode, rate, seconds, settle, label, conditions) -> cost.Cost:
    """One window of orders alone through the gateway (`mode`: the load client's http or http1), read at
    its edges once every group has caught up."""
    a = meter.read()
    answer = client.step(mode, rate, seconds, "cost" + mode + uuid.uuid4().hex[:6], 30)
    _settle(cfg, ALL_GROUPS, settle)
    return cost.Cost.between(
        a, meter.read(), label=label, unit="order", units=answer["sent"], conditions=conditions(answer)
    )


def window_order(ticks_first: bool) -> tuple[str, str]:
    """Which kind of window runs first. Orders first (the default) warm the order path before it is read;
    ticks first read the tick windows before any order of this run opens a position, so they revalue what
    earlier runs left open and the --positions written for them, nearer the budget's stated count."""
    return ("ticks", "orders") if ticks_first else ("orders", "ticks")


def _of(n: int, repeats: int) -> str:
    """A window's place among its repeats, in its label: nothing when there is one."""
    return f" ({n} of {repeats})" if repeats > 1 else ""


def _ticks_window(cfg, meter, cpu, seed, tick_rate, seconds, warmup_seconds, settle, of, held_text) -> cost.Cost:
    """One window of ticks alone: the feed at `tick_rate`, read after the windows have warmed up and again
    once every group has caught up after the feed stopped."""
    ctx = multiprocessing.get_context("fork")
    stop = ctx.Event()
    proc = ctx.Process(target=_tick_process, args=(cfg, seed, tick_rate, stop), daemon=True)
    proc.start()
    cpu.place("clients", [proc.pid])
    try:
        time.sleep(max(10.0, warmup_seconds / 2))  # the generator and the windows warm up
        a = meter.read()
        time.sleep(seconds)
        b_ticks = meter.read().broker.get(("records", "price-ticks"), 0.0)
    finally:
        stop.set()
        proc.join(30)
    _settle(cfg, ALL_GROUPS, settle)
    b = meter.read()
    ticked = b_ticks - a.broker.get(("records", "price-ticks"), 0.0)
    return cost.Cost.between(
        a,
        b,
        label="ticks alone" + of,
        unit="tick",
        units=ticked,
        conditions=f"{held_text}, {tick_rate:,.0f} ticks/s for {seconds:.0f} s "
        "over every active equity, no orders, P&L sync caught up",
    )


def run(
    cfg: Config,
    *,
    rate: float = 1000,
    tick_rate: float = 1000,
    seconds: float = 30,
    positions: int = 20_000,
    idle_seconds: float = 20,
    warmup_seconds: float = 20,
    settle: float = 120,
    seed: int = 29,
    repeats: int = 1,
    ticks_first: bool = False,
    budget: dict | None = None,
    progress=print,
) -> CostResult:
    from brokerstream.clients.flinkjobs import PNL_JOB, Flink
    from brokerstream.loadtest.bench.drain import open_prices
    from brokerstream.loadtest.bench.pnl import write_positions
    from brokerstream.loadtest.bench.system import LoadClient, plan, wait_for_reference_data

    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, not {repeats}")
    budget = budget if budget is not None else load_budget()
    data = pgload.read(cfg)
    if not data.accounts:
        raise RuntimeError("no reference data: load it first, e.g. ./brokerstream refdata load --scale small")
    if not Flink(cfg.flink_url).live(PNL_JOB):
        raise RuntimeError(f"{PNL_JOB} is not running: costs are measured with every service on (./brokerstream up)")
    meter = cost.Meter(cfg, service_names(cfg))
    cpu = CpuGroups.of(cfg)
    run_id = f"{dt.datetime.now(dt.timezone.utc):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"
    started = dt.datetime.now(dt.timezone.utc)
    progress("[cost] opening prices")
    open_prices(cfg, data, seed)
    wait_for_reference_data(cfg, data, progress)
    _settle(cfg, ALL_GROUPS, settle)

    progress(f"[cost] idle: {idle_seconds:.0f} s, no orders, no ticks")
    a = meter.read()
    time.sleep(idle_seconds)
    idle = cost.Cost.between(
        a, meter.read(), label="idle", unit="second", units=idle_seconds, conditions="no orders, no ticks"
    )

    orders: list[cost.Cost] = []
    one_request: list[cost.Cost] = []
    ticks: list[cost.Cost] = []

    def order_windows() -> None:
        client = None
        try:
            if rate > 0:
                # the watchers count outcomes here and time nothing: long fetch waits (module docstring)
                client = LoadClient(
                    cfg, {**plan(cfg, data, seed=seed, trace_one_in=100), "watch_wait_ms": WATCH_WAIT_MS}, cpu
                )
                # a just-started JVM compiles its hot paths over the first tens of thousands of orders
                progress(f"[cost] warm-up: {warmup_seconds:.0f} s through the gateway at {rate:,.0f} orders/s")
                client.step("http", rate, warmup_seconds, "costw" + uuid.uuid4().hex[:6], 30)
                _settle(cfg, ["brokerstream-orders", *SYNC_GROUPS], settle)
                for n in range(1, repeats + 1):
                    of = _of(n, repeats)
                    progress(
                        f"[cost] orders alone{of}: {rate:,.0f}/s through the gateway for {seconds:.0f} s, no ticks"
                    )
                    orders.append(
                        _orders_window(
                            cfg,
                            meter,
                            client,
                            "http",
                            rate,
                            seconds,
                            settle,
                            "orders alone" + of,
                            lambda answer: (
                                f"{rate:,.0f}/s through the gateway for {seconds:.0f} s "
                                f"(accept p99 {answer['accept_ms'].get('p99', float('nan')):.0f} ms), no ticks, "
                                "Postgres sync caught up, the load client's watchers waiting "
                                f"{WATCH_WAIT_MS} ms a fetch"
                            ),
                        )
                    )
                    progress(
                        f"[cost] orders alone, one request each{of}: {rate:,.0f}/s, POST /orders?wait_ms "
                        f"for {seconds:.0f} s"
                    )
                    one_request.append(
                        _orders_window(
                            cfg,
                            meter,
                            client,
                            "http1",
                            rate,
                            seconds,
                            settle,
                            "orders alone, one request each" + of,
                            lambda answer: (
                                f"{rate:,.0f}/s through the gateway for {seconds:.0f} s, each a POST that waits for "
                                f"its result (visible p99 {answer['visible_ms'].get('p99', float('nan')):.0f} ms), "
                                f"no ticks, Postgres sync caught up, the load client's watchers waiting "
                                f"{WATCH_WAIT_MS} ms a fetch"
                            ),
                        )
                    )
        finally:
            if client:
                client.close()

    def tick_windows() -> None:
        if tick_rate > 0:
            opened = write_positions(cfg, data, positions, 0.3, seed)[0] if positions else 0
            _settle(cfg, ["brokerstream-pnl", "connect-sink-orders", "connect-sink-marks"], settle)
            # a window revalues every position of a ticked equity: the cost per tick grows with what is open,
            # and the orders of earlier windows and runs left theirs open beside the ones written here; the
            # tick windows run back to back, so all of them revalue the same positions
            held, instruments = _open_positions(cfg, opened)
            held_text = f"{held:,} open positions over {instruments:,} instruments ({opened:,} written for this window)"
            for n in range(1, repeats + 1):
                of = _of(n, repeats)
                progress(f"[cost] ticks alone{of}: {held_text}, {tick_rate:,.0f} ticks/s for {seconds:.0f} s")
                ticks.append(
                    _ticks_window(cfg, meter, cpu, seed, tick_rate, seconds, warmup_seconds, settle, of, held_text)
                )
            if positions:
                write_positions(cfg, data, positions, 0.3, seed, close=True)

    for kind in window_order(ticks_first):
        (tick_windows if kind == "ticks" else order_windows)()

    # Idle again at the end: right after a start the stack is not idle (compilation, log cleaning, restores),
    # and what it spends then is no order's or tick's. Each service's idle is the lower of the two. Only once
    # every group has taken in what the last window and the closing of the bench's positions wrote: the P&L
    # job and the sinks still at it would read as idle, and every figure above idle would read too low.
    _settle(cfg, ALL_GROUPS, settle)
    progress(f"[cost] idle again: {idle_seconds:.0f} s")
    a = meter.read()
    time.sleep(idle_seconds)
    idle = lowest(
        idle,
        cost.Cost.between(
            a, meter.read(), label="idle", unit="second", units=idle_seconds, conditions="no orders, no ticks"
        ),
    )
    return CostResult(
        run_id,
        idle,
        orders,
        ticks,
        budget,
        started,
        {
            "rate": rate,
            "tick_rate": tick_rate,
            "seconds": seconds,
            "positions": positions,
            "idle_seconds": idle_seconds,
            "warmup_seconds": warmup_seconds,
            "seed": seed,
            "repeats": repeats,
            "ticks_first": ticks_first,
        },
        one_request,
    )


def windows(result: CostResult) -> list[tuple[int, str, cost.Cost]]:
    """Each measured window with its step in `cost_lines` and its phase: the idle stack is step 1, the first
    window of each kind steps 2 (orders), 3 (ticks) and 4 (orders, one request each), and each repeat the
    next three."""
    out = []
    for first, phase, costs in (
        (2, "orders", result.orders),
        (3, "ticks", result.ticks),
        (4, "orders-one-request", result.orders_one_request),
    ):
        out += [(first + 3 * n, phase, c) for n, c in enumerate(costs)]
    return sorted(out, key=lambda w: w[0])


def store(cfg: Config, result: CostResult) -> None:
    from dataclasses import asdict

    from brokerstream.metrics import store as chstore
    from brokerstream.metrics.runs import new_record

    record = new_record(cfg, "cost", "windows", json.dumps(result.settings), result.settings["seed"], 1)
    record.run_id, record.started, record.ended = result.run_id, result.started, dt.datetime.now(dt.timezone.utc)
    client = chstore.connect(cfg)
    try:
        chstore.apply_ddl(client)
        client.insert("runs", [list(asdict(record).values())], column_names=list(asdict(record)))
        rows = cost.rows(result.run_id, 1, "idle", result.idle)
        for step, phase, c in windows(result):
            rows += cost.rows(result.run_id, step, phase, c, result.idle)
        client.insert("cost_lines", rows, column_names=cost.COST_COLUMNS)
    finally:
        client.close()
