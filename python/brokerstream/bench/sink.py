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
