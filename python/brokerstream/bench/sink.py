"""How far Postgres trails the order flow: the JDBC sinks under a steady order rate.

    ./brokerstream bench sink [--rate 5000] [--duration 30]

With the stack up (streams app and sinks running) and reference data loaded: give every equity an
opening price, produce orders at a steady rate, wait until the app and the sinks have caught up, then
ask Postgres. Each row's `synced_at` (set by a trigger when the sink writes it, on the database's
clock) against the flow's own timestamp: `processed_ts` of the order result, `updated_ts` of the
position. The positions table keeps one row per position, so its sample is each position's last update
in the run: the update that had to wait behind all the others.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg

from ..config import Config
from ..flowcheck import wait_drained
from ..gen import pgload
from ..gen.orders import OrderGenerator
from ..gen.produce import produce_orders
from .drain import open_prices
from .stats import summary


@dataclass
class SinkResult:
    rate: float
    achieved_rate: float
    orders: int
    results_lag_ms: dict
    positions_lag_ms: dict

    def lines(self) -> list[str]:
        r, p = self.results_lag_ms, self.positions_lag_ms
        return [f"{self.orders:,} orders at {self.achieved_rate:,.0f}/s (asked {self.rate:,.0f}/s)",
                f"order result -> Postgres: p50 {r['p50']:,.0f} ms  p95 {r['p95']:,.0f} ms  p99 {r['p99']:,.0f} ms"
                f"  max {r['max']:,.0f} ms  ({r['count']:,} rows)",
                f"position update -> Postgres: p50 {p['p50']:,.0f} ms  p95 {p['p95']:,.0f} ms  p99 {p['p99']:,.0f} ms"
                f"  max {p['max']:,.0f} ms  ({p['count']:,} rows)"]


def _lags(conn, sql: str, *params) -> list[float]:
    return [float(v) for (v,) in conn.execute(sql, params).fetchall()]


def run(cfg: Config, *, rate: float = 5000, duration: float = 30, seed: int = 31, progress=print) -> SinkResult:
    data = pgload.read(cfg)
    if not data.accounts:
        raise RuntimeError("no reference data: load it first, e.g. ./brokerstream refdata load --scale small")
    progress("[sink] opening prices")
    open_prices(cfg, data, seed)
    tag = f"sink{int(time.time())}"
    gen = OrderGenerator(data, seed, run_tag=tag)
    count = int(rate * duration)
    progress(f"[sink] {count:,} orders at {rate:,.0f}/s")
    started = time.time()
    report = produce_orders(cfg, (gen.next() for _ in range(count)), rate=rate, progress=progress)
    wait_drained(cfg, timeout=600)
    with psycopg.connect(cfg.postgres_dsn(), autocommit=True) as conn:
        deadline = time.monotonic() + 300
        while conn.execute("SELECT count(*) FROM order_results WHERE order_id LIKE %s",
                           (tag + "%",)).fetchone()[0] < report.produced:
            if time.monotonic() > deadline:
                raise TimeoutError("the order results did not all reach Postgres within 300 s")
            time.sleep(1)
        time.sleep(5)  # positions and results go through different sinks: let the last positions land
        results = _lags(conn, "SELECT extract(epoch FROM synced_at - processed_ts) * 1000 FROM order_results "
                              "WHERE order_id LIKE %s", tag + "%")
        positions = _lags(conn, "SELECT extract(epoch FROM synced_at - updated_ts) * 1000 FROM positions "
                                "WHERE updated_ts >= to_timestamp(%s)", started)
    return SinkResult(rate=rate, achieved_rate=report.rate, orders=report.produced,
                      results_lag_ms=summary(results), positions_lag_ms=summary(positions))


def write(result: SinkResult, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result.__dict__, indent=2))


# --- the Postgres sync alone ----------------------------------------------------------------------
@dataclass
class CeilingResult:
    connector: str
    rows: int
    seconds: float
    connect_cpu_s: float
    postgres_cpu_s: float
    settings: str

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds

    def lines(self) -> list[str]:
        return [f"{self.connector} alone ({self.settings}): {self.rows:,} rows in {self.seconds:.1f} s = "
                f"{self.rows_per_s:,.0f} rows/s",
                f"  Connect {self.connect_cpu_s / self.rows * 1e6:,.0f} us of CPU per row "
                f"({self.rows / max(self.connect_cpu_s, 1e-9):,.0f} rows per Connect core-second), "
                f"Postgres {self.postgres_cpu_s / self.rows * 1e6:,.0f} us per row"]


def ceiling(cfg: Config, *, orders: int = 100_000, seed: int = 37, progress=print) -> CeilingResult:
    """The order sync measured alone: its connector paused while `orders` orders are decided, then resumed;
    rows/s until Postgres holds every result, and the CPU Connect and Postgres spent on them."""
    from ..analytics.collector import process_usage
    from ..connectors import Connect, load_specs
    from ..launcher.layout import Layout
    connector = "sink-orders"
    data = pgload.read(cfg)
    if not data.accounts:
        raise RuntimeError("no reference data: load it first, e.g. ./brokerstream refdata load --scale small")
    progress("[sink] opening prices")
    open_prices(cfg, data, seed)
    connect = Connect(cfg.connect_url)
    connect.pause(connector)
    tag = f"ceil{int(time.time())}"
    gen = OrderGenerator(data, seed, run_tag=tag)
    try:
        progress(f"[sink] {orders:,} orders decided while {connector} is paused")
        report = produce_orders(cfg, (gen.next() for _ in range(orders)))
        wait_drained(cfg, timeout=600)
        time.sleep(3)
    except BaseException:
        connect.resume(connector)
        raise
    layout, procs = Layout(cfg), {}
    pids = {s: layout.pidfile(s).live_pid() for s in ("connect", "postgres")}
    cpu0 = {s: process_usage(procs, p)[0] for s, p in pids.items()}
    t0 = time.monotonic()
    connect.resume(connector)
    with psycopg.connect(cfg.postgres_dsn(), autocommit=True) as conn:
        deadline = t0 + 600
        while conn.execute("SELECT count(*) FROM order_results WHERE order_id LIKE %s",
                           (tag + "%",)).fetchone()[0] < report.produced:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{connector} did not write every result within 600 s")
            time.sleep(0.2)
    seconds = time.monotonic() - t0
    cpu = {s: process_usage(procs, p)[0] - cpu0[s] for s, p in pids.items()}
    spec = next(s for s in load_specs() if s.name == connector)
    url = spec.config["connection.url"]
    settings = (f"batch.size {spec.config.get('batch.size')}, "
                f"{'reWriteBatchedInserts' if 'reWriteBatchedInserts=true' in url else 'batched statements'}")
    return CeilingResult(connector, report.produced, seconds, cpu["connect"], cpu["postgres"], settings)
