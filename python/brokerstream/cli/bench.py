"""`bench`: benchmarks that print figures (never timed tests); see docs/benchmarks.md."""

from __future__ import annotations

import subprocess
from pathlib import Path

from brokerstream.common.errors import UserError


def _or(value, default):
    """An option's value, or this bench's own default when the command line left it out."""
    return default if value is None else value


def _printed(tag: str, result, module, args) -> int:
    for line in result.lines():
        print(f"[{tag}] {line}")
    if args.json:
        module.write(result, Path(args.json))
    return 0


def _java_bench(cfg, module: str, test_jar: str, runtime_jar: str, main: str, *argv) -> int:
    """A benchmark kept with its module's tests (never in the shipped jar): its test classes beside the jar
    that carries what it runs against."""
    from brokerstream.launcher.layout import Layout

    layout = Layout(cfg)
    jars = [layout.module_jar(module, test_jar), layout.module_jar(*runtime_jar.split("/"))]
    for jar in jars:
        if not jar.exists():
            raise UserError(f"{jar} is missing: run ./brokerstream install (it builds the Java modules)")
    return subprocess.call([cfg.java(), "-cp", ":".join(map(str, jars)), main, *map(str, argv)])


def bench_pricing(cfg, args) -> int:
    # pricing alone (no stack): American put accuracy against a fine tree, and valuations/s
    return _java_bench(
        cfg,
        "pricing",
        "pricing-0.1.0-tests.jar",
        "pricing/pricing-0.1.0.jar",
        "io.brokerstream.pricing.bench.AmericanPutBench",
        args.contracts,
    )


def bench_tracing(cfg, args) -> int:
    # the order path's stage tracing alone; its share is taken of a whole-stack CPU figure
    return _java_bench(
        cfg,
        "schemas",
        "schemas-0.1.0-tests.jar",
        "streams/streams-0.1.0.jar",  # kafka-clients inside
        "io.brokerstream.trace.bench.TracingBench",
        args.trace_one_in,
        args.stack_us_per_order,
    )


def bench_book(cfg, args) -> int:
    from brokerstream.loadtest.bench import book

    result = book.run(
        cfg,
        orders=_or(args.orders, 100_000),
        tick_rate=_or(args.tick_rate, 10_000),
        duration=_or(args.duration, 60.0),
        spread=args.spread,
        time_scale=args.time_scale,
        warm_seconds=args.warm_seconds,
    )
    return _printed("book", result, book, args)


def bench_drain(cfg, args) -> int:
    from brokerstream.loadtest.bench import drain

    result = drain.run(
        cfg,
        orders=_or(args.orders, 1_000_000),
        warmup=args.warmup,
        tick_rate=_or(args.tick_rate, 10_000),
        profile=args.profile,
        architecture=args.architecture,
    )
    return _printed("drain", result, drain, args)


def bench_pnl(cfg, args) -> int:
    from brokerstream.loadtest.bench import pnl

    result = pnl.run(
        cfg,
        positions=_or(args.positions, 100_000),
        option_share=args.option_share,
        tick_rate=_or(args.tick_rate, 10_000),
        duration=_or(args.duration, 30),
        window_ms=args.window_ms,
    )
    return _printed("pnl", result, pnl, args)


def bench_sink(cfg, args) -> int:
    from brokerstream.loadtest.bench import sink

    if args.ceiling:
        print(
            f"[sink] each sink alone on {sink.CEILING_TOPICS} (a row per order, upserted by "
            f"{sink.CEILING_KEY}); every other service on, no ticks:"
        )
        for r in sink.ceiling(cfg, orders=_or(args.orders, 100_000)):
            print(f"[sink] {r.line()}")
        return 0
    result = sink.run(cfg, rate=_or(args.rate, 5000), duration=_or(args.duration, 30))
    return _printed("sink", result, sink, args)


def bench_system(cfg, args) -> int:
    from brokerstream.loadtest.bench import system

    rates = [float(r) for r in args.rates.split(",")] if args.rates else None
    tick_rate = _or(args.tick_rate, 10_000)
    if args.short:
        # the integration tests' bookkeeping check: two short steps, small P&L load
        result = system.run(
            cfg,
            rates=rates or [100.0, 1000.0],
            step_seconds=args.step_seconds or 8,
            tick_rate=tick_rate,
            http_max=args.http_max or 100,
            positions=_or(args.positions, 1000),
            settle=60,
            warmup_seconds=3,
            idle_seconds=5,
            ceiling_records=0 if args.no_ceiling else 300_000,
            architecture=args.architecture,
        )
    else:
        result = system.run(
            cfg,
            rates=rates,
            step_seconds=args.step_seconds or 30,
            tick_rate=tick_rate,
            http_max=args.http_max or 2000,
            positions=_or(args.positions, 20_000),
            ceiling_records=0 if args.no_ceiling else 2_000_000,
            architecture=args.architecture,
        )
    return _printed("system", result, system, args)


def bench_cost(cfg, args) -> int:
    from brokerstream.loadtest.bench import costrun

    result = costrun.run(
        cfg,
        rate=_or(args.rate, 1000),
        tick_rate=_or(args.tick_rate, 1000),
        seconds=_or(args.duration, 30),
        positions=_or(args.positions, 20_000),
        repeats=_or(args.repeats, 1),
        ticks_first=args.ticks_first,
    )
    for line in result.lines():
        print(f"[cost] {line}")
    costrun.store(cfg, result)
    return 0


def bench_floors(cfg, args) -> int:
    # the parts of an order's path measured alone, each a floor of what it can cost
    from brokerstream.loadtest.bench import costrun, floors

    rates = [float(r) for r in args.rates.split(",")] if args.rates else [1000.0]
    parts = args.parts.split(",") if args.parts else None
    result = floors.run(
        cfg,
        rates=rates,
        seconds=_or(args.duration, 30),
        repeats=_or(args.repeats, 3),
        parts=parts,
        budget=costrun.load_budget(),
        flow_overrides=floors.parse_settings(args.flow_setting or []),
    )
    for line in result.lines():
        print(f"[floors] {line}")
    floors.store(cfg, result)
    return 0


def bench_hostile(cfg, args) -> int:
    from brokerstream.loadtest.bench import hostile

    lines, passed = hostile.run(
        cfg,
        duration=_or(args.duration, 600),
        rate=_or(args.rate, 500),
        hostile_rate=args.hostile_rate,
        tick_rate=_or(args.tick_rate, 1000),
    )
    for line in lines:
        print(f"[hostile] {line}")
    return 0 if passed else 1


def bench_gateway(cfg, args) -> int:
    # one HTTP step of the system bench (the same open-loop client), every service on
    from brokerstream.loadtest.bench import system

    rate = _or(args.rate, 1000)
    result = system.run(
        cfg,
        rates=[rate],
        step_seconds=_or(args.duration, 30),
        http_max=rate,
        tick_rate=_or(args.tick_rate, 1000),
        positions=_or(args.positions, 0),
        ceiling_records=0,
        warmup_seconds=10,
    )
    return _printed("gateway", result, system, args)


BENCHES = {
    "system": bench_system,
    "cost": bench_cost,
    "floors": bench_floors,
    "drain": bench_drain,
    "book": bench_book,
    "gateway": bench_gateway,
    "hostile": bench_hostile,
    "sink": bench_sink,
    "pnl": bench_pnl,
    "pricing": bench_pricing,
    "tracing": bench_tracing,
}
# the others measure one part of the stream-native system, which the monolith has no counterpart of
BOTH_ARCHITECTURES = ("drain", "system")


def cmd_bench(cfg, args) -> int:
    if args.architecture != "streams" and args.which not in BOTH_ARCHITECTURES:
        raise UserError(
            f"bench {args.which} measures a part of the stream-native system; --architecture "
            f"{args.architecture} is for `bench drain` and `bench system`"
        )
    return BENCHES[args.which](cfg, args)


def add_commands(sub) -> None:
    s = sub.add_parser(
        "bench",
        help="benchmarks that print figures: `system` (the whole stack under stepped load), "
        "`cost` (CPU, requests, records and rows per order and per tick against the "
        "budget), `floors` (the parts of an order's path measured alone: what each costs at least), "
        "`drain` (prefill, then drain), `gateway`, `hostile` (the hostile-member soak), "
        "`sink` (Postgres lag), "
        "`pnl` (revaluation), `pricing` (American puts: accuracy, valuations/s; "
        "no stack), `tracing` (stage tracing's cost, alone)",
    )
    s.add_argument("which", choices=list(BENCHES))
    s.add_argument(
        "--hostile-rate", type=float, default=200, help="hostile: the hostile member's requests per second (200)"
    )
    s.add_argument(
        "--spread", type=float, default=0.02, help="book: working orders rest 0.1 %% to this far from the price (0.02)"
    )
    s.add_argument(
        "--time-scale", type=float, default=50.0, help="book: market seconds the ticks' GBM walks per second (50)"
    )
    s.add_argument(
        "--warm-seconds",
        type=float,
        default=10.0,
        help="book: seconds of ticks before the measured duration, their fills counted apart (10)",
    )
    s.add_argument(
        "--trace-one-in", type=int, default=100, help="tracing: one order in N sampled (100, as bench system)"
    )
    s.add_argument(
        "--stack-us-per-order",
        type=float,
        default=1720.0,
        help="tracing: whole-stack CPU microseconds per order to compare with (1,720: bench system's "
        "1.72 cores at 1,000 orders/s)",
    )
    s.add_argument("--contracts", type=int, default=3000, help="pricing: random American puts to value (3,000)")
    s.add_argument(
        "--positions",
        type=int,
        default=None,
        help="pnl: open positions (100,000); system, cost: extra open positions for the P&L job (20,000)",
    )
    s.add_argument(
        "--rates",
        help="system: order rates of the steps, comma separated "
        "(default 500,1000,2000,5000,10000,20000,30000,40000,50000); floors: the rates measured (1000)",
    )
    s.add_argument("--step-seconds", type=float, help="system: seconds per step (30)")
    s.add_argument("--parts", help="floors: the parts to measure, comma separated (http,http1,flow: all of them)")
    s.add_argument(
        "--flow-setting",
        action="append",
        metavar="KEY=VALUE",
        help="floors: one of the order flow's settings changed for the flow part (commit.interval.ms=250, "
        "gateway.linger-ms=20, ...); repeatable",
    )
    s.add_argument(
        "--http-max",
        type=float,
        help="system: steps up to this rate go through the gateway, higher ones into Kafka (2000)",
    )
    s.add_argument("--short", action="store_true", help="system: two short steps (under two minutes)")
    s.add_argument("--no-ceiling", action="store_true", help="system: skip Kafka's producer ceiling")
    s.add_argument(
        "--ceiling",
        action="store_true",
        help="sink: each Postgres sink alone (Debezium's JDBC sink, then "
        "ours) on --orders orders decided while it waits: rows/s and CPU per row",
    )
    s.add_argument("--option-share", type=float, default=0.3, help="pnl: share of positions in options")
    s.add_argument("--window-ms", type=int, help="pnl: redeploy the job with this window for the run")
    s.add_argument(
        "--orders",
        type=int,
        default=None,
        help="drain: measured orders (1,000,000); book: working orders (100,000); sink --ceiling: orders (100,000)",
    )
    s.add_argument("--warmup", type=int, default=50_000, help="drain: orders before the measured ones")
    s.add_argument(
        "--tick-rate",
        type=float,
        default=None,
        help="price ticks per second meanwhile (drain, pnl, system: 10,000; gateway, cost: 1,000)",
    )
    s.add_argument(
        "--profile", action="store_true", help="drain: record the streams app with JFR, print where time goes"
    )
    s.add_argument(
        "--architecture",
        choices=["streams", "baseline"],
        default="streams",
        help="drain, system: which order flow runs: the streams app (default) or the baseline "
        "monolith (baseline/); the other is stopped for the run",
    )
    s.add_argument(
        "--rate",
        type=float,
        help="gateway, cost: single-order requests per second (1000); hostile: normal "
        "orders per second beside the hostile member (500); sink: orders per second (5000)",
    )
    s.add_argument(
        "--duration",
        type=float,
        default=None,
        help="gateway, cost: seconds (30); book: seconds of ticks (60); hostile: seconds (600)",
    )
    s.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="cost: windows of each kind on the one stack, printed with their median and range (1); "
        "floors: windows of each part and rate (3)",
    )
    s.add_argument(
        "--ticks-first",
        action="store_true",
        help="cost: the tick windows before the order windows, over fewer open positions",
    )
    s.add_argument("--json", help="also write the figures to this file")
    s.set_defaults(func=cmd_bench)
