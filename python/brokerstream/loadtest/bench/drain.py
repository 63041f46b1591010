"""The standard experiment: prefill the orders topic, then let the order flow drain it while price
ticks flow, and measure.

    ./brokerstream bench drain [--orders 1000000] [--warmup 50000] [--tick-rate 10000] [--profile]
                               [--architecture streams|baseline]

The architecture decides which order flow drains: the streams app (the default) or the baseline
monolith (baseline/); the other is stopped for the run and what was running is restored after. The
rest of the stack runs either way (the P&L job, connectors), so both are measured on the same stack.

1. with the order flow running, give every equity an opening price and wait until the app has
folded them into prices.latest (else the first orders meet no price); 2. stop the app; 3. prefill
warm-up orders, then the measured orders; 4. start GBM ticks in a separate process and the app, and
wait until the app has committed the orders topic to its end; 5. read the measured orders' results.

Throughput is measured orders / (last - first processed_ts) of their results; latency is processed_ts
- client_ts per order, which in a prefilled run is mostly the time an order waited in the topic. Beside the
throughput, what the stack spent per order while it drained (`bench/cost.py`'s meter, read once the app is up
and once it has caught up, divided by the orders decided in between, warm-up ones included): CPU per service,
broker requests and records per order, the ticks' share included (they flow throughout).
"""

from __future__ import annotations

import collections
import io
import json
import multiprocessing
import time
from dataclasses import dataclass, field
from pathlib import Path

import fastavro

from brokerstream.clients.schemas import load_schema
from brokerstream.common.config import Config
from brokerstream.gen import pgload
from brokerstream.gen.orders import OrderGenerator
from brokerstream.gen.produce import prefill, produce_ticks
from brokerstream.gen.ticks import TickGenerator
from brokerstream.launcher.provision import default_stack
from brokerstream.launcher.services import service_names
from brokerstream.loadtest.bench import architectures
from brokerstream.loadtest.bench.cost import Cost, Meter
from brokerstream.loadtest.bench.stats import summary
from brokerstream.ops.flowcheck import read_topic, wait_drained


@dataclass
class DrainResult:
    orders: int
    warmup: int
    prefill_rate: float
    restart_seconds: float
    drain_seconds: float
    throughput: float
    latency_ms: dict
    outcomes: dict
    ticks_per_second: float
    architecture: str = "streams"
    revalued_per_second: float = float("nan")
    profile: list = field(default_factory=list)
    # while it drained, per order decided (ticks included): service -> CPU us; and the stack's requests
    # and records per order
    cpu_us_per_order: dict = field(default_factory=dict)
    jit_us_per_order: dict = field(default_factory=dict)  # of cpu_us_per_order, the JVMs' JIT compilers
    requests_per_order: float = float("nan")
    records_per_order: float = float("nan")

    @property
    def stack_us_per_order(self) -> float:
        return sum(self.cpu_us_per_order.values()) if self.cpu_us_per_order else float("nan")

    def lines(self) -> list[str]:
        out = [
            f"architecture: {self.architecture}",
            f"prefill: {self.orders + self.warmup:,} orders at {self.prefill_rate:,.0f}/s",
            f"{self.architecture} restart to running: {self.restart_seconds:.1f} s",
            f"drain: {self.orders:,} orders at {self.throughput:,.0f} orders/s "
            f"(group caught up {self.drain_seconds:.1f} s after start)",
            f"order timestamp -> result: p50 {self.latency_ms['p50']:,.0f} ms, p99 {self.latency_ms['p99']:,.0f} ms",
            f"ticks during the drain: {self.ticks_per_second:,.0f}/s",
            f"P&L calculations (positions revalued) during the drain: {self.revalued_per_second:,.0f}/s",
            f"outcomes: {json.dumps(self.outcomes)}",
        ]
        if self.cpu_us_per_order:
            by_service = sorted(self.cpu_us_per_order.items(), key=lambda kv: -kv[1])
            out.append(
                f"CPU per order while draining (ticks included): {self.stack_us_per_order:,.0f} us: "
                + ", ".join(f"{name} {us:,.0f}" for name, us in by_service if us >= 0.5)
            )
            jit = sum(self.jit_us_per_order.values())
            if jit >= 0.5:
                out.append(f"  of which the JVMs' JIT compilers {jit:,.0f} us (warm-up, not per order)")
            out.append(
                f"broker requests per order {self.requests_per_order:.2f}, "
                f"records written to Kafka per order {self.records_per_order:.1f}"
            )
        if self.profile:
            out.append("stream threads' time (JFR samples):")
            out += [f"  {share:5.1f} %  {name}" for name, share in self.profile]
        return out


def _tick_process(cfg: Config, seed: int, rate: float, stop, out) -> None:
    data = pgload.read(cfg)
    report = produce_ticks(
        cfg, TickGenerator(data, seed, rate=rate), duration=24 * 3600, stop=stop.is_set, snapshot=False
    )
    out.put(report.rate)


def open_prices(cfg: Config, data, seed: int, timeout: float = 120.0, resend_every: float = 5.0, priced=None) -> None:
    """Every active equity's opening price, accepted by the running app and folded into prices.latest
    (or, with `priced`, wherever that function of the config finds the equities priced).

    The snapshot is sent again until every equity has a price: a tick for an instrument the order flow
    does not know yet (reference data just loaded, still on its way through Debezium) is refused as
    UNKNOWN_INSTRUMENT, as it should be."""
    equities = {i.instrument_id for i in data.instruments if i.instrument_type == "EQUITY" and i.status == "ACTIVE"}
    deadline = time.monotonic() + timeout
    while True:
        produce_ticks(cfg, TickGenerator(data, seed), duration=0)
        resend = time.monotonic() + resend_every
        while time.monotonic() < resend:
            seen = priced(cfg) if priced else {m.key for m in read_topic(cfg, "prices.latest", decode=False)}
            if seen >= equities:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(
                    "the order flow did not accept the opening prices "
                    "(are the equities in its reference data? see dlq.ticks)"
                )
            time.sleep(0.5)


def run(
    cfg: Config,
    *,
    orders: int = 1_000_000,
    warmup: int = 50_000,
    tick_rate: float = 10_000,
    seed: int = 23,
    profile: bool = False,
    timeout: float = 3600,
    architecture: str = "streams",
    progress=print,
) -> DrainResult:
    data = pgload.read(cfg)
    if not data.accounts:
        raise RuntimeError("no reference data: load it first, e.g. ./brokerstream refdata load --scale small")
    arch = architectures.of(architecture)
    if profile and arch.name != "streams":
        raise ValueError("--profile records the streams app: use it with --architecture streams")
    jfr = cfg.data_dir / "streams" / "drain.jfr"
    plain = default_stack(cfg)  # the app as it normally runs, to leave it running at the end
    was_running = arch.running_apps(plain)
    if profile:
        jfr.unlink(missing_ok=True)
        cfg = cfg.with_overrides(
            BS_STREAMS_JAVA_OPTS=f"-XX:StartFlightRecording=filename={jfr},settings=profile,"
            f"dumponexit=true -XX:FlightRecorderOptions=stackdepth=512"
        )
    stack = default_stack(cfg)
    try:
        arch.prepare(stack)
        if not stack.up([arch.app]):
            raise RuntimeError(f"{arch.app} did not start")
        progress("[drain] opening prices")
        open_prices(cfg, data, seed, priced=arch.priced(cfg))
        stack.down([arch.app])

        tag = f"drain{int(time.time())}"
        # The generator starts from nothing held: reading a long-lived stack's positions back would
        # take longer than the run. A few sells it means as faults may then be covered and accepted.
        make = lambda t: lambda shard: OrderGenerator(data, seed, run_tag=t, shard=shard)
        progress(f"[drain] prefilling {warmup:,} warm-up and {orders:,} measured orders")
        warm = prefill(cfg, make(tag + "w"), warmup, workers=2) if warmup else None
        measured = prefill(cfg, make(tag), orders, workers=2)
        prefill_rate = (orders + warmup) / (measured.seconds + (warm.seconds if warm else 0))

        # Ticks flow during the drain (not the prefill, which they would slow down).
        ctx = multiprocessing.get_context("fork")
        tick_rates, stop_ticks = ctx.Queue(), ctx.Event()
        ticks = ctx.Process(target=_tick_process, args=(cfg, seed, tick_rate, stop_ticks, tick_rates), daemon=True)
        ticks.start()

        progress(f"[drain] starting {'the streams app' if arch.app == 'streams' else 'the baseline'}")
        revalued_before = arch.revalued(cfg)
        t0 = time.monotonic()
        if not stack.up([arch.app]):
            raise RuntimeError(f"{arch.app} did not start")
        restart = time.monotonic() - t0
        meter = Meter(cfg, service_names(cfg))
        metered_from_ms, first = time.time() * 1000, meter.read()
        try:
            drained = wait_drained(cfg, group=arch.orders_group(cfg), timeout=timeout) + restart
            last = meter.read()
            revalued = arch.revalued(cfg) - (revalued_before if arch.revalued_survives_restart else 0)
        finally:
            stop_ticks.set()
        tick_rate_seen = tick_rates.get(timeout=60)
        ticks.join(10)
        progress("[drain] reading the results back")
        prefix = tag + "-"
        # result keys are member|order id; the warm-up's ids begin with tag + "w-"
        raw = read_topic(
            cfg, "order-results", decode=False, keys=lambda k: k is not None and k.partition("|")[2].startswith(tag)
        )
        schema = fastavro.parse_schema(load_schema("OrderResult"))
        processed, latency, statuses, seen = [], [], collections.Counter(), set()
        metered = 0  # results (warm-up ones too) decided while the meter ran
        for m in raw:
            r = fastavro.schemaless_reader(io.BytesIO(m.value[5:]), schema)
            metered += _millis(r["processed_ts"]) >= metered_from_ms
            if not r["order_id"].startswith(prefix):
                continue
            order = (r["member_id"], r["order_id"])
            statuses["duplicates" if order in seen else r["status"].lower()] += 1
            seen.add(order)
            p_ms, c_ms = _millis(r["processed_ts"]), _millis(r["client_ts"])
            processed.append(p_ms)
            latency.append(p_ms - c_ms)
        span = (max(processed) - min(processed)) / 1000 if processed else float("nan")
        spent = Cost.between(first, last, label="drain", unit="order", units=max(metered, 1))
        profile_lines = []
        if profile:
            stack.down(["streams"])  # the recording is written at exit
            from brokerstream.loadtest.bench.profile import breakdown

            _, profile_lines = breakdown(jfr)
        return DrainResult(
            orders=len(seen),
            warmup=warmup,
            prefill_rate=prefill_rate,
            restart_seconds=restart,
            drain_seconds=drained,
            throughput=len(seen) / span if span else float("nan"),
            latency_ms=summary(latency),
            outcomes=dict(statuses),
            ticks_per_second=tick_rate_seen,
            architecture=arch.name,
            revalued_per_second=revalued / drained if drained else float("nan"),
            profile=profile_lines,
            cpu_us_per_order=spent.us_per_unit() if metered else {},
            jit_us_per_order=spent.jit_us_per_unit() if metered else {},
            requests_per_order=spent.total_per_unit("requests") if metered else float("nan"),
            records_per_order=spent.total_per_unit("records") if metered else float("nan"),
        )
    finally:
        arch.restore(plain, was_running)


def _millis(ts) -> int:
    import datetime as dt

    return (ts - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(milliseconds=1)


def write(result: DrainResult, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result.__dict__, indent=2, default=str))
