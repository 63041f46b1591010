"""How far Postgres trails the order flow: the JDBC sinks under a steady order rate.

    ./brokerstream bench sink [--rate 5000] [--duration 30]

With the stack up (streams app and sinks running) and reference data loaded: give every equity an
opening price, produce orders at a steady rate, wait until the app and the sinks have caught up, then
ask Postgres. Each row's `synced_at` (set by the sink's upsert when it writes the row, on the database's
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

from brokerstream.common.config import Config
from brokerstream.gen import pgload
from brokerstream.gen.orders import OrderGenerator
from brokerstream.gen.produce import produce_orders
from brokerstream.loadtest.bench.drain import open_prices
from brokerstream.loadtest.bench.stats import summary
from brokerstream.ops.flowcheck import wait_drained


@dataclass
class SinkResult:
    rate: float
    achieved_rate: float
    orders: int
    results_lag_ms: dict
    positions_lag_ms: dict

    def lines(self) -> list[str]:
        r, p = self.results_lag_ms, self.positions_lag_ms
        return [
            f"{self.orders:,} orders at {self.achieved_rate:,.0f}/s (asked {self.rate:,.0f}/s)",
            f"order result -> Postgres: p50 {r['p50']:,.0f} ms  p95 {r['p95']:,.0f} ms  p99 {r['p99']:,.0f} ms"
            f"  max {r['max']:,.0f} ms  ({r['count']:,} rows)",
            f"position update -> Postgres: p50 {p['p50']:,.0f} ms  p95 {p['p95']:,.0f} ms  p99 {p['p99']:,.0f} ms"
            f"  max {p['max']:,.0f} ms  ({p['count']:,} rows)",
        ]


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
        while (
            conn.execute("SELECT count(*) FROM order_results WHERE order_id LIKE %s", (tag + "%",)).fetchone()[0]
            < report.produced
        ):
            if time.monotonic() > deadline:
                raise TimeoutError("the order results did not all reach Postgres within 300 s")
            time.sleep(1)
        time.sleep(5)  # positions and results go through different sinks: let the last positions land
        results = _lags(
            conn,
            "SELECT extract(epoch FROM synced_at - processed_ts) * 1000 FROM order_results WHERE order_id LIKE %s",
            tag + "%",
        )
        positions = _lags(
            conn,
            "SELECT extract(epoch FROM synced_at - updated_ts) * 1000 FROM positions "
            "WHERE updated_ts >= to_timestamp(%s)",
            started,
        )
    return SinkResult(
        rate=rate,
        achieved_rate=report.rate,
        orders=report.produced,
        results_lag_ms=summary(results),
        positions_lag_ms=summary(positions),
    )


def write(result: SinkResult, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result.__dict__, indent=2))


# --- the Postgres sync alone ----------------------------------------------------------------------
# The same topic (order results, a row each, closing fills with their realized P&L) through each sink, one at
# a time.
CEILING_TOPICS = "order-results"
CEILING_KEY = "member_id,order_id,ingest_ts"


def ceiling_specs(spec_of_sink_orders: dict) -> dict[str, dict]:
    """Temporary connectors for the ceiling: Debezium's JDBC sink as the flow used it (an upsert per record,
    batched) and ours (a COPY and one upsert per batch), both on the same topics, from their ends."""
    from brokerstream.clients.connectors import ConnectorSpec

    common = {
        k: v
        for k, v in spec_of_sink_orders.items()
        if k.startswith(("connection.", "errors.", "consumer.override.", "key.converter"))
    }
    common.update({"topics": CEILING_TOPICS, "tasks.max": "1", "consumer.override.auto.offset.reset": "latest"})
    debezium = {
        **common,
        "connector.class": "io.debezium.connector.jdbc.JdbcSinkConnector",
        "insert.mode": "upsert",
        "delete.enabled": "false",
        "schema.evolution": "none",
        "primary.key.mode": "record_value",
        "primary.key.fields": CEILING_KEY,
        "batch.size": "5000",
        "use.time.zone": "UTC",
        "collection.name.format": "${topic}",
        "transforms": "toTable",
        "transforms.toTable.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.toTable.regex": "([a-z]+)[.-]([a-z]+)",
        "transforms.toTable.replacement": "$1_$2",
    }
    ours = {
        **common,
        "connector.class": "io.brokerstream.connect.postgres.PostgresSinkConnector",
        "table.order-results": "order_results",
        "key.order_results": CEILING_KEY,
    }
    return {
        "debezium-jdbc": ConnectorSpec("ceiling-debezium-jdbc", debezium, Path("-")),
        "brokerstream-postgres": ConnectorSpec("ceiling-brokerstream-postgres", ours, Path("-")),
    }


@dataclass
class CeilingResult:
    sink: str
    rows: int
    seconds: float
    connect_cpu_s: float
    postgres_cpu_s: float

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds

    def line(self) -> str:
        return (
            f"{self.sink:<22} {self.rows:>8,} rows in {self.seconds:5.1f} s = {self.rows_per_s:>7,.0f} rows/s; "
            f"Connect {self.connect_cpu_s / self.rows * 1e6:>4,.0f} us/row "
            f"({self.rows / max(self.connect_cpu_s, 1e-9):>7,.0f} rows per Connect core-second), "
            f"Postgres {self.postgres_cpu_s / self.rows * 1e6:>3,.0f} us/row"
        )


def ceiling(cfg: Config, *, orders: int = 100_000, seed: int = 37, progress=print) -> list[CeilingResult]:
    """Each sink measured alone on the same work: the deployed sink-orders is paused; per sink, a temporary
    connector waits at the end of the topic while `orders` orders are decided, then runs; rows/s until
    Postgres holds every one of its results, and the CPU Connect and Postgres spent meanwhile."""
    from brokerstream.clients.connectors import Connect, load_specs, wait_running
    from brokerstream.launcher.layout import Layout
    from brokerstream.metrics.collector import process_usage

    data = pgload.read(cfg)
    if not data.accounts:
        raise RuntimeError("no reference data: load it first, e.g. ./brokerstream refdata load --scale small")
    progress("[sink] opening prices")
    open_prices(cfg, data, seed)
    connect = Connect(cfg.connect_url, patience=60)
    deployed = next(s for s in load_specs() if s.name == "sink-orders")
    layout, procs = Layout(cfg), {}
    pids = {s: layout.pidfile(s).live_pid() for s in ("connect", "postgres")}
    out = []
    connect.pause(deployed.name)
    try:
        for n, (sink, spec) in enumerate(ceiling_specs(deployed.config).items()):
            connect.put_config(spec)
            wait_running(connect, [spec.name], 60)
            time.sleep(5)  # its consumer has taken the topics' ends
            connect.pause(spec.name)
            tag = f"ceil{int(time.time())}{n}"
            gen = OrderGenerator(data, seed + n, run_tag=tag)
            progress(f"[sink] {sink}: {orders:,} orders decided while it waits")
            report = produce_orders(cfg, (gen.next() for _ in range(orders)))
            wait_drained(cfg, timeout=600)
            time.sleep(3)
            cpu0 = {s: process_usage(procs, p)[0] for s, p in pids.items()}
            t0 = time.monotonic()
            connect.resume(spec.name)
            with psycopg.connect(cfg.postgres_dsn(), autocommit=True) as conn:
                while (
                    conn.execute("SELECT count(*) FROM order_results WHERE order_id LIKE %s", (tag + "%",)).fetchone()[
                        0
                    ]
                    < report.produced
                ):
                    if time.monotonic() > t0 + 600:
                        raise TimeoutError(f"{sink} did not write every result within 600 s")
                    time.sleep(0.2)
            seconds = time.monotonic() - t0
            cpu = {s: process_usage(procs, p)[0] - cpu0[s] for s, p in pids.items()}
            out.append(CeilingResult(sink, report.produced, seconds, cpu["connect"], cpu["postgres"]))
            connect.delete(spec.name)
    finally:
        for spec in ceiling_specs(deployed.config).values():
            if spec.name in connect.names():
                connect.delete(spec.name)
        connect.resume(deployed.name)
    return out
