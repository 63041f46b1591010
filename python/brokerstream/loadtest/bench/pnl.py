"""The P&L flow under load: open positions revalued as prices tick.

    ./brokerstream bench pnl [--positions 100000] [--option-share 0.3] [--tick-rate 10000]
                             [--duration 30] [--window-ms 1000]

With the stack up (the P&L job running) and reference data loaded: write open positions straight
into the positions topic (accounts BENCH-*, so they never collide with real ones; closed again at the
end), let the job read them, then send GBM ticks for every active equity at the given rate and measure
over `duration` seconds:
- from the job's own counters (Flink REST metrics, summed over subtasks): P&L calculations/s (one per
  instrument that ticked in a window, its positions and its options' positions included), positions
  revalued/s, option valuations/s, and positions revalued per second of revaluation work (capacity);
- tick -> P&L latency: each position record's Kafka timestamp (when the job wrote it) against the
  earliest tick it covers (first_tick_ts), sampled; and when it became visible to a read_committed
  consumer (the job's transactions commit on checkpoints).

A window shorter than the default (--window-ms) redeploys the job with it, through a savepoint, and
puts the default back afterwards.
"""

from __future__ import annotations

import io
import json
import random
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import fastavro
from confluent_kafka import Consumer, TopicPartition

from brokerstream.clients.flinkjobs import PNL_JOB, Flink, deploy, stop
from brokerstream.clients.kafka_clients import client_conf
from brokerstream.clients.schemas import load_schema
from brokerstream.common.config import Config
from brokerstream.common.topics import POSITIONS
from brokerstream.gen import pgload
from brokerstream.gen.produce import ProduceReport, _send, java_partition, produce_ticks, producer, schema_header
from brokerstream.gen.ticks import TickGenerator
from brokerstream.loadtest.bench.stats import summary

# The bench accounts and members are named with this prefix, so they never collide with real ones.
BENCH = "BENCH-"
METRICS = ["pnlCalculations", "positionsRevalued", "optionValuations", "revaluationNanos"]


@dataclass
class PnlResult:
    positions: int
    option_positions: int
    window_ms: int
    duration: float
    tick_rate: float
    pnl_calculations_per_s: float
    positions_revalued_per_s: float
    option_valuations_per_s: float
    revaluation_capacity_per_s: float
    tick_to_pnl_written_ms: dict
    tick_to_pnl_committed_ms: dict

    def lines(self) -> list[str]:
        w, c = self.tick_to_pnl_written_ms, self.tick_to_pnl_committed_ms
        return [
            f"{self.positions:,} open positions ({self.option_positions:,} in options), window {self.window_ms} ms, "
            f"ticks {self.tick_rate:,.0f}/s for {self.duration:.0f} s",
            f"P&L calculations: {self.pnl_calculations_per_s:,.0f}/s",
            f"positions revalued: {self.positions_revalued_per_s:,.0f}/s "
            f"(capacity {self.revaluation_capacity_per_s:,.0f}/s of revaluation work)",
            f"option valuations: {self.option_valuations_per_s:,.0f}/s",
            f"tick -> P&L written:   p50 {w['p50']:,.0f} ms  p99 {w['p99']:,.0f} ms  ({w['count']:,} samples)",
            f"tick -> P&L committed: p50 {c['p50']:,.0f} ms  p99 {c['p99']:,.0f} ms  ({c['count']:,} samples)",
        ]


def encode_position(schema, header: bytes, p: dict) -> bytes:
    buf = io.BytesIO()
    buf.write(header)
    fastavro.schemaless_writer(buf, schema, p)
    return buf.getvalue()


def draw_positions(data, count: int, option_share: float, seed: int, *, close: bool = False) -> list[dict]:
    """`count` open positions over BENCH accounts (with close, the same positions closed): the same
    draws for a seed, whichever architecture they are written for."""
    from decimal import Decimal

    rng = random.Random(seed)
    equities = [i for i in data.instruments if i.instrument_type == "EQUITY" and i.status == "ACTIVE"]
    options = [i for i in data.instruments if i.instrument_type == "OPTION" and i.maturity and i.maturity >= data.as_of]
    starts = {e.instrument_id: e.start_price for e in data.equity_starts}
    # about 200 positions an account; more accounts where few instruments could not give that many
    # distinct keys (the draw below would never end)
    per_account = min(200, len(equities) // 2, len(options) // 2) if options else len(equities) // 2
    if per_account < 1:
        raise ValueError("no active instruments to hold positions in: load reference data first")
    accounts = [(f"{BENCH}A{n:05d}", f"{BENCH}M{n % 20:03d}") for n in range(max(1, -(-count // per_account)))]
    out, seen, now = [], set(), int(time.time() * 1000)
    while len(seen) < count:
        account, member = rng.choice(accounts)
        is_option = bool(options) and rng.random() < option_share
        inst = rng.choice(options if is_option else equities)
        key = f"{account}|{inst.instrument_id}"
        if key in seen:
            continue
        seen.add(key)
        underlying = inst.underlying_id or inst.instrument_id
        cost = (inst.strike // 20 if is_option else starts[underlying]) or 1
        # drawn whether closing or not, so that closing walks through the same keys
        quantity = rng.choice([-1, 1]) * rng.randint(1, 50)
        out.append(
            {
                "account_id": account,
                "member_id": member,
                "instrument_id": inst.instrument_id,
                "underlying_id": underlying,
                "multiplier": inst.multiplier,
                "quantity": 0 if close else quantity,
                "avg_cost": Decimal(0 if close else cost).scaleb(-6).quantize(Decimal("0.000001")),
                "realized_pnl": Decimal("0.000000"),
                "version": 2 if close else 1,
                "updated_ts": now,
                "cash": Decimal("0.000000"),
                "cost_basis": Decimal(0 if close else cost * abs(quantity)).scaleb(-6).quantize(Decimal("0.000001")),
            }
        )
    return out


def write_positions(
    cfg: Config, data, count: int, option_share: float, seed: int, *, close: bool = False
) -> tuple[int, int]:
    """`count` open positions over BENCH accounts into the positions topic, where the P&L job reads
    them (or, with close, the same positions closed). Returns (positions, in options).

    The positions topic is the order flow's positions store's changelog: each goes to its member's
    partition, where a restoring member task would look for it (a BENCH member places no orders)."""
    schema = fastavro.parse_schema(load_schema("Position"))
    header = schema_header(cfg, POSITIONS, "Position")
    p = producer(cfg, **{"linger.ms": 20})
    report = ProduceReport()
    records = draw_positions(data, count, option_share, seed, close=close)
    partitions = len(p.list_topics(POSITIONS, timeout=30).topics[POSITIONS].partitions)
    for n, record in enumerate(records, 1):
        key = f"{record['account_id']}|{record['instrument_id']}"
        part = java_partition(record["member_id"].encode(), partitions)
        _send(p, POSITIONS, encode_position(schema, header, record), key.encode(), report, part)
        if n % 5000 == 0:
            p.poll(0)
    if p.flush(60):
        raise RuntimeError("positions not delivered within 60 s")
    return len(records), sum(r["underlying_id"] != r["instrument_id"] for r in records)


def retry_deadlocks(work, attempts: int = 6, pause_s: float = 0.2):
    """Runs work(); when Postgres aborts it as a deadlock's victim, runs it again, up to `attempts`
    times in all (the other transaction has gone on by then)."""
    import psycopg

    for attempt in range(1, attempts + 1):
        try:
            return work()
        except psycopg.errors.DeadlockDetected:
            if attempt == attempts:
                raise
            time.sleep(pause_s * attempt)


def _delete(conn, schema: str, table: str, keys: list[tuple[str, str]]) -> None:
    with conn.transaction(), conn.cursor() as cur:
        cur.executemany(f"DELETE FROM {schema}.{table} WHERE account_id = %s AND instrument_id = %s", keys)


def write_positions_sql(
    cfg: Config, data, count: int, option_share: float, seed: int, schema: str, *, close: bool = False
) -> tuple[int, int]:
    """The same positions in the baseline's own table (its price threads mark what is there); with
    close, deleted again. BENCH members have no orders, so the risk check never meets them."""
    import psycopg

    records = draw_positions(data, count, option_share, seed)
    if close:
        # The baseline's price threads may still be working through a tick backlog, marking these very
        # rows: positions go first (a price thread marks only what is in mono_positions), then marks in
        # short key-ordered transactions, each retried when Postgres picks it as a deadlock's victim.
        keys = sorted((r["account_id"], r["instrument_id"]) for r in records)
        with psycopg.connect(cfg.postgres_dsn(), autocommit=True) as conn:
            for table in ("mono_positions", "mono_marks"):
                for i in range(0, len(keys), 1000):
                    batch = keys[i : i + 1000]
                    retry_deadlocks(lambda t=table, b=batch: _delete(conn, schema, t, b))
        return len(records), sum(r["underlying_id"] != r["instrument_id"] for r in records)
    with psycopg.connect(cfg.postgres_dsn()) as conn, conn.cursor() as cur:
        cur.executemany(
            f"INSERT INTO {schema}.mono_positions (account_id, instrument_id, member_id, underlying_id, "
            "multiplier, quantity, avg_cost, realized_pnl, version) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (account_id, instrument_id) DO UPDATE SET quantity = EXCLUDED.quantity, "
            "avg_cost = EXCLUDED.avg_cost, realized_pnl = EXCLUDED.realized_pnl, version = EXCLUDED.version",
            [
                (
                    r["account_id"],
                    r["instrument_id"],
                    r["member_id"],
                    r["underlying_id"],
                    r["multiplier"],
                    r["quantity"],
                    r["avg_cost"],
                    r["realized_pnl"],
                    r["version"],
                )
                for r in records
            ],
        )
    return len(records), sum(r["underlying_id"] != r["instrument_id"] for r in records)


MARKS = "pnl.equity-marks"


class LatencySampler(threading.Thread):
    """Reads pnl.equity-marks from its end; for 1 in `every` records decodes first_tick_ts (a window writes
    one record per equity whose held instruments' marks moved, not one per position or instrument: every
    record can be read)."""

    def __init__(self, cfg: Config, isolation: str, every: int = 1):
        super().__init__(daemon=True)
        self.cfg, self.isolation, self.every = cfg, isolation, every
        self.samples: list[float] = []
        self.stopped = threading.Event()
        self.measuring = threading.Event()
        self.schema = fastavro.parse_schema(load_schema("EquityMarks"))

    def run(self) -> None:
        c = Consumer(
            client_conf(
                self.cfg,
                **{
                    "group.id": f"bench-pnl-{uuid.uuid4().hex}",
                    "isolation.level": self.isolation,
                    "enable.auto.commit": False,
                },
            )
        )
        meta = c.list_topics(MARKS, timeout=10).topics[MARKS]
        parts = [
            TopicPartition(MARKS, p, c.get_watermark_offsets(TopicPartition(MARKS, p))[1]) for p in meta.partitions
        ]
        c.assign(parts)
        n = 0
        while not self.stopped.is_set():
            for msg in c.consume(2000, 0.2):
                if msg.error() or msg.value() is None:
                    continue
                n += 1
                if n % self.every or not self.measuring.is_set():
                    continue
                now = time.time() * 1000
                v = fastavro.schemaless_reader(io.BytesIO(msg.value()[5:]), self.schema)
                if v["first_tick_ts"] is None:
                    continue
                first = v["first_tick_ts"].timestamp() * 1000
                written = msg.timestamp()[1]
                self.samples.append((written - first) if self.isolation == "read_uncommitted" else (now - first))
        c.close()


def _counters(flink: Flink, job_id: str, timeout: float = 30.0) -> dict[str, float]:
    """The job's counters; the REST API lists them only once its metric fetcher has seen them."""
    deadline = time.monotonic() + timeout
    while True:
        got = flink.metric_sum(job_id, "revalue", METRICS)
        if set(got) >= set(METRICS) or time.monotonic() > deadline:
            missing = set(METRICS) - set(got)
            if missing:
                raise RuntimeError(f"the P&L job reports no {', '.join(sorted(missing))} metrics")
            return got
        time.sleep(1)


def _fresh_counters(flink: Flink, job_id: str, timeout: float = 30.0) -> tuple[dict[str, float], float]:
    """The counters just after the JobManager refreshed them, and when that was seen.

    The REST API serves counters its metric fetcher cached (refreshed every 10 s by default), so two
    plain reads some seconds apart can return the same snapshot and show no work at all. A read that
    differs from the one before it is fresh to within the polling interval."""
    first = _counters(flink, job_id)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = _counters(flink, job_id)
        if now != first:
            return now, time.monotonic()
    raise RuntimeError(f"the P&L job's counters did not move in {timeout:.0f} s: is it revaluing the ticks?")


def run(
    cfg: Config,
    *,
    positions: int = 100_000,
    option_share: float = 0.3,
    tick_rate: float = 10_000,
    duration: float = 30,
    window_ms: int | None = None,
    seed: int = 41,
    progress=print,
) -> PnlResult:
    data = pgload.read(cfg)
    if not data.accounts:
        raise RuntimeError("no reference data: load it first, e.g. ./brokerstream refdata load --scale small")
    flink = Flink(cfg.flink_url)
    redeploy = window_ms is not None
    if redeploy:
        progress(f"[pnl] redeploying the job with a {window_ms} ms window")
        stop(cfg)
        deploy(cfg.with_overrides(BS_PNL_WINDOW_MS=str(window_ms)))
    job = flink.live(PNL_JOB)
    if not job:
        raise RuntimeError(f"{PNL_JOB} is not running: ./brokerstream up (or flink deploy)")
    try:
        progress(f"[pnl] writing {positions:,} open positions")
        count, in_options = write_positions(cfg, data, positions, option_share, seed)
        # let the job take them in, with every equity's opening price
        produce_ticks(cfg, TickGenerator(data, seed), duration=0)
        time.sleep(5)
        samplers = [LatencySampler(cfg, "read_uncommitted"), LatencySampler(cfg, "read_committed")]
        for s in samplers:
            s.start()
        ticks_done = threading.Event()
        tick_report: list = []
        ticker = threading.Thread(
            target=lambda: tick_report.append(
                produce_ticks(
                    cfg,
                    TickGenerator(data, seed + 1, rate=tick_rate),
                    duration=duration + 40,
                    snapshot=False,
                    stop=ticks_done.is_set,
                )
            ),
            daemon=True,
        )
        ticker.start()
        time.sleep(5)  # warm-up
        progress(f"[pnl] measuring for {duration:.0f} s")
        for s in samplers:
            s.measuring.set()
        before, t0 = _fresh_counters(flink, job.job_id)
        time.sleep(duration)
        after, t1 = _fresh_counters(flink, job.job_id)
        elapsed = t1 - t0
        for s in samplers:
            s.measuring.clear()
        ticks_done.set()
        ticker.join(30)
        time.sleep(1)
        for s in samplers:
            s.stopped.set()
            s.join(10)
        delta = {k: after[k] - before[k] for k in METRICS}
        busy = delta["revaluationNanos"] / 1e9
        return PnlResult(
            positions=count,
            option_positions=in_options,
            window_ms=window_ms or int(cfg.get("BS_PNL_WINDOW_MS") or 1000),
            duration=elapsed,
            tick_rate=tick_report[0].rate if tick_report else float("nan"),
            pnl_calculations_per_s=delta["pnlCalculations"] / elapsed,
            positions_revalued_per_s=delta["positionsRevalued"] / elapsed,
            option_valuations_per_s=delta["optionValuations"] / elapsed,
            revaluation_capacity_per_s=delta["positionsRevalued"] / busy if busy else float("nan"),
            tick_to_pnl_written_ms=summary(samplers[0].samples),
            tick_to_pnl_committed_ms=summary(samplers[1].samples),
        )
    finally:
        progress("[pnl] closing the bench positions")
        write_positions(cfg, data, positions, option_share, seed, close=True)
        if redeploy:
            stop(cfg)
            deploy(cfg)


def write(result: PnlResult, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result.__dict__, indent=2))
