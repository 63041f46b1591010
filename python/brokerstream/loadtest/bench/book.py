"""Working orders under ticks, on the whole running stack: place N resting (GTC) orders across the
equities, let ticks flow, and measure how fast crossed orders trigger and fill.

    ./brokerstream bench book [--orders 100000] [--tick-rate 10000] [--duration 60] [--spread 0.02]
                              [--time-scale 50] [--warm-seconds 10]

1. every equity gets its opening price (as for the drain) and the bench reads the latest prices back;
2. N buy orders are written to the orders topic, keyed by member like the gateway writes them: half limit
buys below the price, half stop buys above it, each 0.1 % to `spread` away, on equities drawn by the same
popularity as ticks, quantity 1, round robin over the active accounts; the bench waits until the order
flow has decided them all (most rest, holding buying power; a few fill or are refused at once) and the
book task has taken in every entry;
3. ticks flow at `tick-rate` for `warm-seconds` and then `duration` seconds, a GBM walk from the latest
prices at `time-scale` market seconds per second (so prices travel far enough in a minute to cross
orders); every result of the bench's orders arriving meanwhile is a triggered order decided. Those whose
crossing tick came in the first `warm-seconds` are counted apart (the JIT compiles the tick and trigger
paths then: a run right after the streams app started had a tail several times longer in its first
seconds); the measured ones give triggers/s (their count over the duration) and tick -> fill, the result's
arrival (read_committed, so the commit is in it) less its record time, which is the crossing tick's (a
trigger and the result it leads to keep the tick's timestamp), also per 10 s of the run;
4. every order still working is cancelled, so the book is left as it was.

The rest of the stack runs as it is (P&L job, connectors, ClickHouse): the figure is the whole system's.
"""

from __future__ import annotations

import collections
import io
import math
import multiprocessing
import random
import time
from dataclasses import asdict, dataclass
from decimal import Decimal
from pathlib import Path

import fastavro
from confluent_kafka import Consumer, TopicPartition

from brokerstream.clients.schemas import load_schema
from brokerstream.common.config import Config
from brokerstream.gen import pgload, popularity
from brokerstream.gen.avro_binary import StringCache, encode_order
from brokerstream.gen.produce import produce_ticks, producer, schema_header
from brokerstream.gen.ticks import TickGenerator
from brokerstream.loadtest.bench.drain import open_prices
from brokerstream.loadtest.bench.stats import summary
from brokerstream.ops.flowcheck import read_topic, wait_drained


@dataclass
class BookResult:
    orders: int
    placed_per_second: float
    decided_at_once: dict
    resting: int
    tick_rate: float
    duration: float
    time_scale: float
    triggered: int
    triggers_per_second: float
    peak_triggers_per_second: int
    outcomes: dict
    tick_to_fill_ms: dict
    p99_by_10s_ms: list
    warm_seconds: float
    warm_triggered: int
    warm_tick_to_fill_ms: dict
    hops_ms: dict
    cancelled_after: int
    cancel_seconds: float

    def lines(self) -> list[str]:
        return [
            f"placed {self.orders:,} GTC buys at {self.placed_per_second:,.0f} orders/s (written and decided); "
            f"decided at once: {self.decided_at_once}; resting: {self.resting:,}",
            f"ticks {self.tick_rate:,.0f}/s for {self.warm_seconds:.0f} s of warm-up, then {self.duration:.0f} s "
            f"measured (GBM at {self.time_scale:g} market s per s)",
            f"warm-up: {self.warm_triggered:,} triggered, tick -> fill "
            + ", ".join(f"{k} {v:,.0f} ms" for k, v in self.warm_tick_to_fill_ms.items() if k in ("p50", "p99")),
            f"triggered and decided: {self.triggered:,} = {self.triggers_per_second:,.1f}/s "
            f"(peak {self.peak_triggers_per_second:,} in one second); outcomes {self.outcomes}",
            "tick -> fill (crossing tick's timestamp to the committed result): "
            + ", ".join(f"{k} {v:,.0f} ms" for k, v in self.tick_to_fill_ms.items() if k != "count"),
            "tick -> fill p99 per 10 s: " + ", ".join(f"{v:,.0f}" for v in self.p99_by_10s_ms) + " ms",
            *(
                f"  {hop}: p50 {v['p50']:,.0f} ms, p99 {v['p99']:,.0f} ms"
                for hop, v in self.hops_ms.items()
                if v.get("count")
            ),
            f"cleanup: {self.cancelled_after:,} still working cancelled in {self.cancel_seconds:.1f} s",
        ]


def _tick_process(cfg: Config, seed: int, rate: float, time_scale: float, prices: dict, seconds: float, out) -> None:
    data = pgload.read(cfg)
    gen = TickGenerator(data, seed, rate=rate, time_scale=time_scale)
    for e in gen.equities:  # walk on from where the app's prices are, not from the reference start prices
        if e.instrument_id in prices:
            e.price = prices[e.instrument_id]
            e.sequence = time.time_ns() // 1000  # above any sequence an earlier feed used
    report = produce_ticks(cfg, gen, duration=seconds, snapshot=False)
    out.put(report.rate)


def _orders_group(cfg: Config) -> str:
    return "brokerstream-orders"


def run(
    cfg: Config,
    *,
    orders: int = 100_000,
    tick_rate: float = 10_000,
    duration: float = 60.0,
    spread: float = 0.02,
    time_scale: float = 50.0,
    warm_seconds: float = 10.0,
    seed: int = 31,
    progress=print,
) -> BookResult:
    data = pgload.read(cfg)
    if not data.accounts:
        raise RuntimeError("no reference data: load it first, e.g. ./brokerstream refdata load --scale small")
    progress("[book] opening prices")
    open_prices(cfg, data, seed)
    latest = {m.key: m.value["price"] for m in read_topic(cfg, "prices.latest")}
    active_members = {m.member_id for m in data.members if m.status == "ACTIVE"}
    accounts = [a for a in data.accounts if a.status == "ACTIVE" and a.member_id in active_members]
    starts = {s.instrument_id for s in data.equity_starts}
    equities = [
        i.instrument_id
        for i in data.instruments
        if i.instrument_type == "EQUITY"
        and i.status == "ACTIVE"
        and i.instrument_id in starts
        and i.instrument_id in latest
    ]
    ranked = popularity.ranked(equities, seed)
    weights = popularity.zipf_weights(len(ranked), 1.1)
    rng = random.Random(seed)
    tag = f"book{int(time.time())}"

    progress(f"[book] placing {orders:,} working orders on {len(ranked)} equities")
    header = schema_header(cfg, "orders", "Order")
    strings = StringCache()
    p = producer(cfg, **{"linger.ms": 20})
    ids: list[tuple[str, str]] = []
    t0 = time.monotonic()
    picks = rng.choices(ranked, weights, k=orders)
    for n, equity in enumerate(picks):
        account = accounts[n % len(accounts)]
        price = latest[equity]
        away = Decimal(str(rng.uniform(0.001, spread)))
        stop = n % 2 == 1
        level = int((price * (1 + away if stop else 1 - away)).quantize(Decimal("0.01")) * 1_000_000)
        order_id = f"{tag}-{n}"
        value = encode_order(
            header,
            strings,
            order_id,
            account.account_id,
            equity,
            "BUY",
            1,
            None if stop else level,
            False,
            int(time.time() * 1000),
            None,
            "GTC",
            level if stop else None,
        )
        while True:
            try:
                p.produce("orders", value, account.member_id.encode())
                break
            except BufferError:
                p.poll(0.05)
        ids.append((account.member_id, order_id))
        if n % 10_000 == 0:
            p.poll(0)
    p.flush(60)
    wait_drained(cfg, group=_orders_group(cfg), timeout=1800)
    placed_rate = orders / (time.monotonic() - t0)
    # Decided is not yet on the book: the book task may still be taking in the entries the member tasks
    # wrote. Ticks start once it has, so the figure is the book's steady state, not its ingestion backlog.
    wait_drained(cfg, group=_orders_group(cfg), topic="orders.resting", timeout=1800, transactional=True)
    booked = time.monotonic() - t0
    prefix = tag + "-"
    mine = lambda k: k is not None and k.partition("|")[2].startswith(prefix)
    at_once = collections.Counter(
        m.value["status"] if m.value["status"] == "ACCEPTED" else m.value["reason"]
        for m in read_topic(cfg, "order-results", keys=mine)
    )
    resting = orders - sum(at_once.values())
    progress(
        f"[book] {resting:,} resting ({placed_rate:,.0f} orders/s placed, all on the book after "
        f"{booked:.1f} s); ticks for {warm_seconds:.0f} + {duration:.0f} s"
    )

    # Results from here on are triggered orders being decided.
    consumer = Consumer(
        {
            "bootstrap.servers": cfg.kafka_bootstrap,
            "group.id": f"{tag}-watch",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    parts = consumer.list_topics("order-results", timeout=10).topics["order-results"].partitions
    ends = [
        TopicPartition("order-results", q, consumer.get_watermark_offsets(TopicPartition("order-results", q))[1])
        for q in parts
    ]
    consumer.assign(ends)
    ctx = multiprocessing.get_context("fork")
    rates = ctx.Queue()
    ticks = ctx.Process(
        target=_tick_process,
        daemon=True,
        args=(
            cfg,
            seed,
            tick_rate,
            time_scale,
            {k: float(v) for k, v in latest.items()},
            warm_seconds + duration,
            rates,
        ),
    )
    latencies, per_second, outcomes = [], collections.Counter(), collections.Counter()
    warm, windows = [], collections.defaultdict(list)
    seen: dict[str, tuple[float, int, int]] = {}  # order id -> (arrival ms, tick ms, decided ms)
    result_schema = fastavro.parse_schema(load_schema("OrderResult"))
    start = time.time()
    ticks.start()
    measured_from = (start + warm_seconds) * 1000
    last_window = max(0, math.ceil(duration / 10) - 1)  # the last ticks of the run land in the last window
    end = start + warm_seconds + duration + 5  # what the last ticks trigger
    while time.time() < end:
        # consume() returns at its timeout when fewer records came: a short one, or it is in the latency
        for msg in consumer.consume(1000, 0.005):
            if msg.error() or not mine(msg.key().decode() if msg.key() else None):
                continue
            now_ms = time.time() * 1000
            tick_ms = msg.timestamp()[1]
            if tick_ms < measured_from:
                warm.append(now_ms - tick_ms)
                continue
            latencies.append(now_ms - tick_ms)
            windows[min(int((tick_ms - measured_from) // 10_000), last_window)].append(now_ms - tick_ms)
            per_second[int(now_ms // 1000)] += 1
            r = fastavro.schemaless_reader(io.BytesIO(msg.value()[5:]), result_schema)
            outcomes[r["status"]] += 1
            seen[r["order_id"]] = (now_ms, msg.timestamp()[1], _ms(r["processed_ts"]))
    consumer.close()
    tick_rate_seen = rates.get(timeout=60)
    ticks.join(10)

    # Where the time goes, hop by hop: the book task's own clock when it triggered (triggered_ts), the member
    # task's when it decided (processed_ts), and the result's arrival here.
    triggered = {}
    for m in read_topic(cfg, "order-triggers"):
        if m.value["order_id"] in seen:
            triggered[m.value["order_id"]] = _ms(m.value["triggered_ts"])
    hops = {"tick -> book": [], "book -> decided": [], "decided -> visible": []}
    for order_id, (arrival, tick_ms, decided) in seen.items():
        if order_id in triggered:
            hops["tick -> book"].append(triggered[order_id] - tick_ms)
            hops["book -> decided"].append(decided - triggered[order_id])
        hops["decided -> visible"].append(arrival - decided)

    progress("[book] cancelling what still works")
    still = resting - len(latencies) - len(warm)
    t1 = time.monotonic()
    _cancel_all(cfg, ids)
    wait_drained(cfg, group=_orders_group(cfg), topic="order-commands", timeout=1800)
    return BookResult(
        orders=orders,
        placed_per_second=placed_rate,
        decided_at_once=dict(at_once),
        resting=resting,
        tick_rate=tick_rate_seen,
        duration=duration,
        time_scale=time_scale,
        triggered=len(latencies),
        triggers_per_second=len(latencies) / duration,
        peak_triggers_per_second=max(per_second.values(), default=0),
        outcomes=dict(outcomes),
        tick_to_fill_ms=summary(latencies),
        p99_by_10s_ms=[summary(windows[w])["p99"] for w in sorted(windows) if windows[w]],
        warm_seconds=warm_seconds,
        warm_triggered=len(warm),
        warm_tick_to_fill_ms=summary(warm),
        hops_ms={k: summary(v) for k, v in hops.items()},
        cancelled_after=still,
        cancel_seconds=time.monotonic() - t1,
    )


def _ms(ts) -> int:
    return int(ts.timestamp() * 1000)


def _cancel_all(cfg: Config, ids: list[tuple[str, str]]) -> None:
    """A cancel for every order of the run: one still working is taken off (CANCELLED), one that ended gets
    CANCEL_REJECTED and changes nothing."""
    schema = fastavro.parse_schema(load_schema("OrderCommand"))
    header = schema_header(cfg, "order-commands", "OrderCommand")
    p = producer(cfg, **{"linger.ms": 20})
    now = int(time.time() * 1000)
    for member, order_id in ids:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, schema, {"order_id": order_id, "action": "CANCEL", "client_ts": now})
        while True:
            try:
                p.produce("order-commands", header + out.getvalue(), member.encode())
                break
            except BufferError:
                p.poll(0.05)
    p.flush(60)


def write(result: BookResult, path: Path) -> None:
    import json

    path.write_text(json.dumps(asdict(result), indent=2))
