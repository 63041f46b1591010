"""The lab's commands: load runs, the cost report, the main job and the scaling experiment."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from brokerstream.cli.stack import stack_of
from brokerstream.common.errors import UserError


def lab_plan(cfg, args=None, *, short: bool = False):
    """The experiment's plan: the command line's choices over the BS_LAB_* settings."""
    from brokerstream.lab import steps
    from brokerstream.lab.experiment import Plan

    pick = lambda name, key, cast: cast(
        getattr(args, name, None) if getattr(args, name, None) is not None else cfg[key]
    )
    memory = pick("memory_gb", "BS_LAB_MEMORY_GB", float)
    step_text = pick("steps", "BS_LAB_RUN_STEPS" if short else "BS_LAB_STEPS", str)
    # the main job: a capacity search and a P&L run per step, no drains and no Locust, to stay short
    short_plan = (
        {"pnl_positions": 20_000, "pnl_seconds": 15, "idle_seconds": 5, "settle_seconds": 20, "capacity_rungs": 5}
        if short
        else {"capacity_rungs": pick("capacity_rungs", "BS_LAB_CAPACITY_RUNGS", int)}
    )
    return Plan(
        steps=steps.parse(step_text, memory),
        **short_plan,
        orders=pick("orders", "BS_LAB_ORDERS", int),
        drain_seconds=pick("drain_seconds", "BS_LAB_DRAIN_SECONDS", float),
        drains=False if short else pick("drains", "BS_LAB_DRAINS", _flag),
        locust=False if short else pick("locust", "BS_LAB_LOCUST", _flag),
        capacity_seconds=pick(
            "capacity_seconds", "BS_LAB_RUN_CAPACITY_SECONDS" if short else "BS_LAB_CAPACITY_SECONDS", float
        ),
        capacity_per_vcpu=pick("capacity_per_vcpu", "BS_LAB_CAPACITY_PER_VCPU", float),
        capacity_factor=pick("capacity_factor", "BS_LAB_CAPACITY_FACTOR", float),
        capacity_refine=pick("capacity_refine", "BS_LAB_CAPACITY_REFINE", int),
        warmup=pick("warmup", "BS_LAB_WARMUP", int),
        tick_rate=pick("tick_rate", "BS_LAB_TICK_RATE", str),
        repeats=1 if short else pick("repeats", "BS_LAB_REPEATS", int),
        start_users=pick("start_users", "BS_LAB_START_USERS", int),
        step_users=pick("step_users", "BS_LAB_STEP_USERS", int),
        hold_seconds=pick("hold", "BS_LAB_HOLD_SECONDS", float),
        slo_p95_ms=pick("slo_p95_ms", "BS_LAB_SLO_P95_MS", float),
        max_users=pick("max_users", "BS_LAB_MAX_USERS", int),
        architecture=getattr(args, "architecture", None) or "streams",
    )


def _flag(value) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("0", "1", "true", "false", "on", "off"):
        raise ValueError(f"expected 1 or 0, got {value!r}")
    return text in ("1", "true", "on")


def cmd_load(cfg, args) -> int:
    from brokerstream.loadtest import driver

    if args.shape == "drain":
        driver.run_drain(cfg, orders=args.orders, scale_step=args.scale_step)
    else:
        driver.run_http(
            cfg,
            shape=args.shape,
            users=args.users,
            duration=args.duration,
            scale_step=args.scale_step,
            web=args.web,
            tick_rate=args.tick_rate,
        )
    return 0


def cmd_report(cfg, args) -> int:
    from brokerstream.lab import labreport
    from brokerstream.metrics import report

    out = Path(args.out or cfg.data_dir / "report")
    report.run(cfg, out, headroom=args.headroom, value_per_response=args.value_per_response)
    try:  # and the scaling report, once an experiment is stored
        labreport.run(cfg, out, headroom=args.headroom)
    except RuntimeError as exc:
        print(exc)
    return 0


def cmd_run(cfg, args) -> int:
    """The main job: install, stack up, reference data, opening prices, a short scaling experiment
    (three resource steps), the cost report and the scaling report."""
    from brokerstream.common.progress import say
    from brokerstream.gen import pgload, refdata
    from brokerstream.lab import experiment, labreport
    from brokerstream.launcher.install import install
    from brokerstream.loadtest.bench.drain import open_prices

    install(cfg, skip_java=False)
    if not stack_of(cfg).up():
        return 1

    data = refdata.generate(args.scale, 42, dt.datetime.now(dt.timezone.utc).date())
    pgload.load(cfg, data, replace=True, progress=lambda line: say("refdata", line))
    say("run", "opening prices for every equity")
    open_prices(cfg, pgload.read(cfg), seed=5)
    try:
        plan = lab_plan(cfg, args, short=True)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    experiment.run(cfg, plan)
    from brokerstream.metrics import report

    out = cfg.data_dir / "report"
    report.run(cfg, out, printer=lambda _: None)
    say("run", f"cost report: {out / 'report.html'}")
    labreport.run(cfg, out)
    return 0


def cmd_experiment(cfg, args) -> int:
    from brokerstream.lab import experiment, labreport

    try:
        plan = lab_plan(cfg, args)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    experiment.run(cfg, plan)
    labreport.run(cfg, Path(args.out or cfg.data_dir / "report"), headroom=args.headroom)
    return 0


def add_commands(sub) -> None:
    s = sub.add_parser(
        "load", help="a load run with metrics stored in ClickHouse: Locust against the gateway, or drain"
    )
    s.add_argument("--shape", default="constant", choices=["constant", "breaking-point", "bursts", "drain"])
    s.add_argument("--users", type=int, default=20, help="constant: users; breaking-point/bursts: the start/baseline")
    s.add_argument("--duration", type=float, default=60, help="seconds (constant, bursts)")
    s.add_argument("--orders", type=int, default=1_000_000, help="drain: measured orders")
    s.add_argument("--scale-step", type=int, default=1, help="which step of a scaling experiment this run is")
    s.add_argument("--web", action="store_true", help="Locust's web UI instead of headless")
    s.add_argument("--tick-rate", type=float, default=1000, help="price ticks per second during the run (0: none)")
    s.set_defaults(func=cmd_load)

    s = sub.add_parser(
        "report", help="the cost report of the stored runs and the scaling report of the experiments: HTML pages"
    )
    s.add_argument("--out", help="folder for the plots and page (default .data/report)")
    s.add_argument("--headroom", type=float, default=0.2, help="h in the cost per 1,000 requests at C_SLA")
    s.add_argument("--value-per-response", type=float, default=0.001, help="USD a response is worth (productivity F)")
    s.set_defaults(func=cmd_report)

    s = sub.add_parser(
        "run",
        help="the main job: install, up, reference data, a short scaling experiment "
        "(a capacity search and a P&L run at each of four resource steps), the cost and scaling reports",
    )
    s.add_argument("--scale", default="tiny", choices=["tiny", "small", "thesis"])
    s.add_argument("--steps", help="vCPUs per step (BS_LAB_RUN_STEPS: 1,1.25,1.5,2)")
    s.add_argument("--capacity-seconds", type=float, help="each capacity rung's length (BS_LAB_CAPACITY_SECONDS: 20)")
    s.set_defaults(func=cmd_run)

    s = sub.add_parser(
        "experiment",
        help="the scaling lab: the standard experiment at resource steps, then the performance-to-cost report",
    )
    s.add_argument("which", choices=["scale"])
    s.add_argument(
        "--steps",
        help="vCPUs per step, comma separated; scale-out options after it: `:iN` streams app instances, "
        "`:tN` stream threads, `:fN` Flink TaskManagers, `:pN` P&L parallelism, `:cN` tasks per Connect sink, "
        "`:m6` memory, e.g. 2:i2:f2:p2 (BS_LAB_STEPS: 0.5,1,1.5,2)",
    )
    s.add_argument("--memory-gb", type=float, help="memory limit per step (BS_LAB_MEMORY_GB: 8)")
    s.add_argument("--orders", type=int, help="orders drained per step, at least (BS_LAB_ORDERS: 200,000)")
    s.add_argument(
        "--drain-seconds",
        type=float,
        help="size each drain to last about this long from the latest measured rate; 0: exactly --orders "
        "(BS_LAB_DRAIN_SECONDS: 60)",
    )
    s.add_argument("--warmup", type=int, help="warm-up orders before each drain (BS_LAB_WARMUP: 20,000)")
    s.add_argument(
        "--tick-rate",
        help="ticks per second during each drain, or `thesis`: each equity every 5 s (BS_LAB_TICK_RATE: thesis)",
    )
    s.add_argument("--repeats", type=int, help="runs per step, to show the spread (BS_LAB_REPEATS: 2)")
    s.add_argument(
        "--drains", type=int, choices=[0, 1], help="the seed thesis's drain at every step (BS_LAB_DRAINS: 1)"
    )
    s.add_argument(
        "--locust", type=int, choices=[0, 1], help="Locust's breaking point at every step (BS_LAB_LOCUST: 1)"
    )
    s.add_argument("--capacity-seconds", type=float, help="each capacity rung's length (BS_LAB_CAPACITY_SECONDS: 20)")
    s.add_argument(
        "--capacity-per-vcpu",
        type=float,
        help="the first step's first rung, orders/s per vCPU (BS_LAB_CAPACITY_PER_VCPU: 300)",
    )
    s.add_argument("--capacity-rungs", type=int, help="at most this many rungs per step (BS_LAB_CAPACITY_RUNGS: 7)")
    s.add_argument("--start-users", type=int, help="breaking point: users at first (BS_LAB_START_USERS: 20)")
    s.add_argument("--step-users", type=int, help="breaking point: users added per hold (BS_LAB_STEP_USERS: 40)")
    s.add_argument("--hold", type=float, help="breaking point: seconds per hold (BS_LAB_HOLD_SECONDS: 15)")
    s.add_argument("--slo-p95-ms", type=float, help="breaking point: the p95 SLO (BS_LAB_SLO_P95_MS: 200)")
    s.add_argument("--max-users", type=int, help="breaking point: stop here unbroken (BS_LAB_MAX_USERS: 1,000)")
    s.add_argument("--headroom", type=float, default=0.2, help="headroom h in the cost per 1,000 requests at C_SLA")
    s.add_argument(
        "--architecture",
        choices=["streams", "baseline"],
        default="streams",
        help="which order flow the steps measure: streams (drain, P&L capacity, breaking point) or "
        "baseline (the thesis's monolith: drains only); the report shows the latest of both",
    )
    s.add_argument("--out", help="report folder (default .data/report)")
    s.set_defaults(func=cmd_experiment)
