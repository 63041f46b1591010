"""The generators' commands: `refdata`, `orders`, `ticks` (see docs/generators.md)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from brokerstream.common.config import Config


def _refdata_source(cfg: Config, args):
    from brokerstream.gen import pgload, refdata

    if getattr(args, "scale", None):
        return refdata.generate(args.scale, args.refdata_seed, _date(args.as_of))
    return pgload.read(cfg)


def _date(text: str | None) -> dt.date:
    return dt.date.fromisoformat(text) if text else dt.datetime.now(dt.timezone.utc).date()


def cmd_refdata(cfg: Config, args) -> int:
    from brokerstream.gen import pgload, refdata

    data = refdata.generate(args.scale, args.seed, _date(args.as_of))
    if args.action == "show":
        print(json.dumps(data.counts()))
        return 0
    print(pgload.load(cfg, data, replace=args.replace))
    return 0


def _mix(args):
    from brokerstream.gen.orders import FAULTS, OrderMix

    faults = {k: args.fault_rate for k in FAULTS}
    for spec in args.fault or []:
        kind, _, rate = spec.partition("=")
        faults[kind.upper()] = float(rate)
    return OrderMix(option_share=args.option_share, faults=faults)


def cmd_orders(cfg: Config, args) -> int:
    from brokerstream.gen.orders import OrderGenerator
    from brokerstream.gen.produce import prefill, write_report

    data = _refdata_source(cfg, args)
    mix = _mix(args)
    tag = args.tag or dt.datetime.now().strftime("r%Y%m%d%H%M%S")
    positions = None
    if not args.fresh:
        from brokerstream.ops.flowcheck import holdings

        positions = holdings(cfg)
    count = args.count if args.action == "prefill" else int(args.rate * args.duration)
    rate = None if args.action == "prefill" else args.rate
    report = prefill(
        cfg,
        lambda shard: OrderGenerator(data, args.seed, mix, run_tag=tag, shard=shard, positions=positions),
        count,
        workers=args.workers,
        rate=rate,
        progress=print,
    )
    print(
        f"[orders] {report.produced:,} orders in {report.seconds:.2f} s: {report.rate:,.0f} orders/s "
        f"({args.workers} worker{'s' if args.workers > 1 else ''})"
    )
    print(f"[orders] expected outcomes: {json.dumps(dict(sorted(report.expected.items())))}")
    if args.report:
        write_report(report, Path(args.report))
    return 1 if report.errors else 0


def cmd_ticks(cfg: Config, args) -> int:
    from brokerstream.gen.produce import produce_ticks
    from brokerstream.gen.ticks import TickGenerator

    data = _refdata_source(cfg, args)
    gen = TickGenerator(data, args.seed, rate=args.rate, interval=args.interval, mu=args.mu, time_scale=args.time_scale)
    duration = 0 if args.action == "snapshot" else args.duration
    print(
        f"[ticks] {len(gen.equities)} equities, a round every {gen.interval * 1000:.1f} ms, "
        f"expected {gen.expected_rate:,.0f} ticks/s"
    )
    report = produce_ticks(cfg, gen, duration=duration, snapshot=not args.no_snapshot, progress=print)
    print(f"[ticks] {report.produced:,} ticks in {report.seconds:.1f} s: {report.rate:,.0f}/s")
    if args.report:
        from brokerstream.gen.produce import write_report

        write_report(report, Path(args.report))
    return 1 if report.errors else 0


def add_commands(sub) -> None:
    s = sub.add_parser("refdata", help="generate reference data and load it into Postgres")
    s.add_argument("action", choices=["load", "show"])
    s.add_argument("--scale", default="tiny", choices=["tiny", "small", "thesis"])
    s.add_argument("--seed", type=int, default=42)
    s.add_argument("--as-of", help="date options expire relative to (default: today, UTC)")
    s.add_argument("--replace", action="store_true", help="replace other reference data already loaded")
    s.set_defaults(func=cmd_refdata)

    def source_args(p):
        p.add_argument(
            "--scale",
            choices=["tiny", "small", "thesis"],
            help="generate reference data in memory instead of reading Postgres",
        )
        p.add_argument("--refdata-seed", type=int, default=42)
        p.add_argument("--as-of")

    s = sub.add_parser("orders", help="produce generated orders: `prefill` as fast as possible, or `steady`")
    s.add_argument("action", choices=["prefill", "steady"])
    s.add_argument("--count", type=int, default=100_000, help="prefill: how many")
    s.add_argument("--rate", type=float, default=1000.0, help="steady: orders per second")
    s.add_argument("--duration", type=float, default=60.0, help="steady: seconds")
    s.add_argument("--seed", type=int, default=7)
    s.add_argument("--tag", help="order id prefix (default: a timestamp)")
    s.add_argument("--workers", type=int, default=2, help="generating processes, each for its own members")
    s.add_argument("--option-share", type=float, default=0.3)
    s.add_argument("--fault-rate", type=float, default=0.005, help="rate of each kind of invalid order")
    s.add_argument("--fault", action="append", metavar="KIND=RATE", help="rate of one kind, e.g. UNKNOWN_ACCOUNT=0.01")
    s.add_argument("--report", help="write counts by expected outcome to this JSON file")
    s.add_argument(
        "--fresh", action="store_true", help="ignore the positions already published (default: start from them)"
    )
    source_args(s)
    s.set_defaults(func=cmd_orders)

    s = sub.add_parser("ticks", help="produce GBM price ticks: `run` (snapshot, then rounds) or `snapshot` only")
    s.add_argument("action", choices=["run", "snapshot"])
    s.add_argument("--rate", type=float, default=10_000.0, help="ticks per second across all equities")
    s.add_argument("--interval", type=float, help="seconds per round (default: chosen to reach the rate)")
    s.add_argument("--duration", type=float, default=60.0)
    s.add_argument("--seed", type=int, default=11)
    s.add_argument("--mu", type=float, default=0.0, help="annual drift")
    s.add_argument("--time-scale", type=float, default=1.0, help="market seconds per wall-clock second")
    s.add_argument("--no-snapshot", action="store_true", help="skip the opening tick of every equity")
    s.add_argument("--report", help="write the tick count to this JSON file")
    source_args(s)
    s.set_defaults(func=cmd_ticks)
