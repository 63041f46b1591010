"""./brokerstream COMMAND: install, start, inspect and stop the stack; run the tests.

Every command reads the same configuration (platform/stack.env, overridable by environment).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

from . import config
from .errors import UserError


def _stack(cfg):
    from .launcher.provision import default_stack
    return default_stack(cfg)


def cmd_install(cfg, args) -> int:
    from .launcher.install import install
    install(cfg, skip_java=args.skip_java)
    return 0


def cmd_up(cfg, args) -> int:
    if not args.no_install:
        from .launcher.install import install
        install(cfg, skip_java=False)
    return 0 if _stack(cfg).up(args.services or None) else 1


def cmd_provision(cfg, args) -> int:
    """Topics, schemas, connectors and jobs against already running services (compose's init job)."""
    return 0 if _stack(cfg).provision() else 1


def cmd_down(cfg, args) -> int:
    _stack(cfg).down(args.services or None)
    return 0


def cmd_status(cfg, args) -> int:
    rows = _stack(cfg).status()
    problems = [f"{r['service']} is {r['state']}" for r in rows if r["state"] != "healthy"]
    connectors = []
    if any(r["service"] == "connect" and r["state"] == "healthy" for r in rows):
        from .connectors import Connect, load_specs, problems_of
        connect = Connect(cfg.connect_url)
        for name in sorted({s.name for s in load_specs()} | set(connect.names())):
            st = connect.status(name)
            connectors.append({"connector": name, "state": st["connector"]["state"] if st else "ABSENT",
                               "tasks": [{"id": t["id"], "state": t["state"]} for t in (st or {}).get("tasks", [])]})
            problems += problems_of(name, st)
    jobs = []
    if any(r["service"] == "flink-jobmanager" and r["state"] == "healthy" for r in rows):
        from .flinkjobs import PNL_JOB, Flink
        jobs = [{"job": j.name, "id": j.job_id, "state": j.state} for j in Flink(cfg.flink_url).jobs()]
        if not any(j["job"] == PNL_JOB and j["state"] == "RUNNING" for j in jobs):
            problems.append(f"flink job {PNL_JOB}: not RUNNING")
    if args.json:
        print(json.dumps({"services": rows, "connectors": connectors, "jobs": jobs, "problems": problems}, indent=2))
    else:
        print(f"{'SERVICE':<18} {'STATE':<10} {'PID':>7} {'RSS MB':>7}  PORTS")
        for r in rows:
            ports = " ".join(f"{k}={v}" for k, v in r["ports"].items())
            print(f"{r['service']:<18} {r['state']:<10} {r['pid'] or '-':>7} "
                  f"{r['rss_bytes'] / 2**20:>7.0f}  {ports}")
        print(f"{'total':<18} {'':<10} {'':>7} {sum(r['rss_bytes'] for r in rows) / 2**20:>7.0f}")
        if connectors:
            print(f"\n{'CONNECTOR':<24} {'STATE':<12} TASKS")
            for c in connectors:
                tasks = " ".join(f"{t['id']}:{t['state']}" for t in c["tasks"]) or "-"
                print(f"{c['connector']:<24} {c['state']:<12} {tasks}")
        if jobs:
            print(f"\n{'FLINK JOB':<24} {'STATE':<12} ID")
            for j in jobs:
                print(f"{j['job']:<24} {j['state']:<12} {j['id']}")
        for line in problems:
            print(f"problem: {line}", file=sys.stderr)
    return 1 if (args.check and problems) else 0


def cmd_logs(cfg, args) -> int:
    from .launcher.layout import Layout
    path = Layout(cfg).log(args.service)
    if not path.exists():
        print(f"no log for {args.service} at {path}", file=sys.stderr)
        return 1
    argv = ["tail", "-n", str(args.lines)] + (["-F"] if args.follow else []) + [str(path)]
    return subprocess.call(argv)


def cmd_reset(cfg, args) -> int:
    if not args.force:
        answer = input(f"Stop the stack and delete {cfg.data_dir} (databases, topics, schemas)? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing deleted")
            return 1
    _stack(cfg).reset()
    print(f"deleted {cfg.data_dir}")
    return 0


def cmd_topics(cfg, args) -> int:
    from .kafka_clients import client_conf
    from .topics import ensure_topics, load_catalog
    topics = load_catalog(cfg)
    if args.action == "list":
        for t in topics:
            print(f"{t.name:<20} partitions={t.partitions:<3} value={t.value or '-':<14} key={t.key}")
        return 0
    bootstrap = args.bootstrap or cfg.kafka_bootstrap
    for name, what in ensure_topics(client_conf(cfg, "admin", bootstrap=bootstrap), topics).items():
        print(f"{name:<20} {what}")
    return 0


def cmd_test(cfg, args) -> int:
    """The whole suite: install, Java unit tests, Python unit tests, integration tests on a real stack."""
    from .launcher.install import connect_sink_plugin, install, maven, maven_env
    from .launcher.layout import Layout
    from .launcher.progress import say, step

    install(cfg, skip_java=True)
    if (cfg.root / "pom.xml").exists():
        with step("test", "java build and unit tests (mvn package)"):
            rc = subprocess.call(maven(cfg, Layout(cfg), "-f", str(cfg.root / "pom.xml"), "package"),
                                 env=maven_env(cfg))
            if rc != 0:
                return rc
        connect_sink_plugin(cfg, Layout(cfg))  # the Connect worker loads our sink from the plugin path
    pytest = [sys.executable, "-m", "pytest", "-q", "-rs", "--durations=15"] + (["-x"] if args.exitfirst else [])
    if args.k:
        pytest += ["-k", args.k]
    # tests/cluster and tests/secure each start their own stack once the one before is down
    suites = ["tests/unit"] + ([] if args.unit else ["tests/integration", "tests/cluster", "tests/secure"])
    for suite in suites:
        say("test", f"pytest {suite}")
        rc = subprocess.call(pytest + [suite], cwd=cfg.root)
        if rc not in (0, 5):  # 5: -k selected nothing in this suite
            return rc
    return 0


def cmd_connectors(cfg, args) -> int:
    from . import connectors
    if args.action == "apply":
        print("running: " + ", ".join(connectors.apply(cfg)))
        return 0
    if args.action == "restart":
        for name in args.names or [s.name for s in connectors.load_specs()]:
            connectors.Connect(cfg.connect_url).restart(name)
            print(f"{name}: restarted")
        return 0
    problems = connectors.check(cfg)
    for line in problems:
        print(line)
    print("connectors: " + ("FAILED" if problems else "all running"))
    return 1 if problems else 0


def cmd_flink(cfg, args) -> int:
    from . import flinkjobs
    if args.action == "deploy":
        print(flinkjobs.deploy(cfg, resume=not args.fresh))
    elif args.action == "stop":
        print(flinkjobs.stop(cfg))
    else:
        for job in flinkjobs.Flink(cfg.flink_url).jobs():
            print(f"{job.name:<24} {job.state:<12} {job.job_id}")
    return 0


def cmd_load(cfg, args) -> int:
    from .load import driver
    if args.shape == "drain":
        driver.run_drain(cfg, orders=args.orders, scale_step=args.scale_step)
    else:
        driver.run_http(cfg, shape=args.shape, users=args.users, duration=args.duration,
                        scale_step=args.scale_step, web=args.web, tick_rate=args.tick_rate)
    return 0


def cmd_report(cfg, args) -> int:
    from .analytics import report
    report.run(cfg, Path(args.out or cfg.data_dir / "report"), headroom=args.headroom,
               value_per_response=args.value_per_response)
    return 0


def cmd_run(cfg, args) -> int:
    """The main job: install, stack up, reference data, opening prices, a short scaling experiment
    (three resource steps), the cost report and the scaling report."""
    from .bench.drain import open_prices
    from .gen import pgload, refdata
    from .lab import experiment, labreport
    from .launcher.install import install
    from .launcher.progress import say
    install(cfg, skip_java=False)
    if not _stack(cfg).up():
        return 1
    import datetime as dt
    data = refdata.generate(args.scale, 42, dt.datetime.now(dt.timezone.utc).date())
    pgload.load(cfg, data, replace=True, progress=lambda line: say("refdata", line))
    say("run", "opening prices for every equity")
    open_prices(cfg, pgload.read(cfg), seed=5)
    try:
        plan = lab_plan(cfg, args, short=True)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    experiment.run(cfg, plan)
    from .analytics import report
    out = cfg.data_dir / "report"
    report.run(cfg, out, printer=lambda _: None)
    say("run", f"cost report: {out / 'report.html'}")
    labreport.run(cfg, out)
    return 0


def lab_plan(cfg, args=None, *, short: bool = False):
    """The experiment's plan: the command line's choices over the BS_LAB_* settings."""
    from .lab import steps
    from .lab.experiment import Plan
    pick = lambda name, key, cast: cast(getattr(args, name, None) if getattr(args, name, None) is not None else cfg[key])
    memory = pick("memory_gb", "BS_LAB_MEMORY_GB", float)
    step_text = pick("steps", "BS_LAB_RUN_STEPS" if short else "BS_LAB_STEPS", str)
    short_pnl = {"pnl_positions": 20_000, "pnl_seconds": 15} if short else {}
    return Plan(steps=steps.parse(step_text, memory), **short_pnl,
                orders=pick("orders", "BS_LAB_RUN_ORDERS" if short else "BS_LAB_ORDERS", int),
                warmup=pick("warmup", "BS_LAB_WARMUP", int) if not short else 5_000,
                tick_rate=pick("tick_rate", "BS_LAB_TICK_RATE", str),
                repeats=1 if short else pick("repeats", "BS_LAB_REPEATS", int),
                start_users=pick("start_users", "BS_LAB_START_USERS", int),
                step_users=pick("step_users", "BS_LAB_STEP_USERS", int),
                hold_seconds=10 if short else pick("hold", "BS_LAB_HOLD_SECONDS", float),
                slo_p95_ms=pick("slo_p95_ms", "BS_LAB_SLO_P95_MS", float),
                max_users=pick("max_users", "BS_LAB_RUN_MAX_USERS" if short else "BS_LAB_MAX_USERS", int),
                architecture=getattr(args, "architecture", None) or "streams")


def cmd_experiment(cfg, args) -> int:
    from .lab import experiment, labreport
    try:
        plan = lab_plan(cfg, args)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    experiment.run(cfg, plan)
    labreport.run(cfg, Path(args.out or cfg.data_dir / "report"), headroom=args.headroom)
    return 0


def cmd_keys(cfg, args) -> int:
    from . import keys
    if args.action == "issue":
        issued = keys.issue(cfg, args.member, args.label or "issued")
    elif args.action == "rotate":
        issued, revoked = keys.rotate(cfg, args.member, args.label or "rotated")
        print(f"revoked: {', '.join(revoked) or 'none'}")
    elif args.action == "revoke":
        revoked = keys.revoke(cfg, args.member, args.key_id)
        print(f"revoked: {', '.join(revoked) or 'none (no active key)'}")
        return 0
    else:
        for key_id, label, status, created, revoked_at in keys.listing(cfg, args.member):
            print(f"{key_id:<16} {status:<8} created {created:%Y-%m-%d %H:%M:%S}"
                  + (f", revoked {revoked_at:%Y-%m-%d %H:%M:%S}" if revoked_at else "") + f"  {label}")
        return 0
    print(f"member {issued.member_id}, key id {issued.key_id}")
    print(f"key (shown once, keep it safe): {issued.key}")
    return 0


def cmd_statement(cfg, args) -> int:
    from . import statement as st
    end = st.parse_time(args.to) if args.to else dt.datetime.now(dt.timezone.utc)
    start = st.parse_time(args.since) if args.since else end - dt.timedelta(days=1)
    try:
        s = st.statement(cfg, args.account, start, end)
    except (st.UnknownAccount, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    text = s.to_csv() if args.format == "csv" else s.to_json()
    if args.out:
        Path(args.out).write_text(text)
        print(f"{len(s.lines)} lines for account {s.account_id} -> {args.out}")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def cmd_history(cfg, args) -> int:
    from . import statement as st
    steps = st.history(cfg, args.member, args.order)
    if not steps:
        print(f"error: no order {args.order} of member {args.member} in Postgres (yet)", file=sys.stderr)
        return 2
    print(json.dumps({"member_id": args.member, "order_id": args.order, "steps": steps}, indent=2))
    return 0


def cmd_schemas(cfg, args) -> int:
    from . import schemas
    if args.action == "list":
        for subject, record in schemas.topic_subjects(cfg):
            print(f"{subject:<28} {record}")
        return 0
    if args.action == "show":
        print(json.dumps(schemas.load_schema(args.name), indent=2))
        return 0
    if args.action == "check":
        problems = schemas.check_all(cfg)
        for line in problems:
            print(line)
        print("schema check: " + ("FAILED" if problems else "every schema is compatible"))
        return 1 if problems else 0
    for reg in schemas.register_all(cfg):
        print(f"{reg.subject:<28} id {reg.schema_id:<5} version {reg.version}")
    return 0


def cmd_sql(cfg, args) -> int:
    from . import streamsql
    if args.action == "client":
        return streamsql.client(cfg)
    if args.action == "list":
        for query in streamsql.parse_catalog(streamsql.FLINK_CATALOG):
            print(f"{query.name:<32} {query.purpose}")
        return 0
    if not args.name:
        raise UserError("sql run needs a query name: ./brokerstream sql list shows them")
    result = streamsql.run(cfg, args.name, since_ms=streamsql.parse_since(args.since), timeout=args.timeout)
    print(streamsql.format_rows(result, as_json=args.json))
    return 0


def cmd_bench(cfg, args) -> int:
    args.tick_rate_given = args.tick_rate is not None
    args.duration_given = args.duration is not None
    if args.duration is None:
        args.duration = 30
    if args.tick_rate is None:
        args.tick_rate = 10_000
    if args.architecture != "streams" and args.which not in ("drain", "system"):
        # the others measure one part of the stream-native system, which the monolith has no counterpart of
        raise UserError(f"bench {args.which} measures a part of the stream-native system; --architecture "
                        f"{args.architecture} is for `bench drain` and `bench system`")
    if args.which == "pricing":
        # pricing alone (no stack): American put accuracy against a fine tree, and valuations/s
        from .launcher.layout import Layout
        jar = Layout(cfg).module_jar("pricing", "pricing-0.1.0.jar")
        if not jar.exists():
            raise FileNotFoundError(f"{jar} is missing: run ./brokerstream install (it builds the Java modules)")
        return subprocess.call([cfg.java(), "-cp", str(jar), "io.brokerstream.pricing.bench.AmericanPutBench",
                                str(args.contracts)])
    if args.which == "tracing":
        # the order path's stage tracing alone; its share is taken of a whole-stack CPU figure
        from .launcher.layout import Layout
        jar = Layout(cfg).module_jar("streams", "streams-0.1.0.jar")  # schemas and kafka-clients inside
        if not jar.exists():
            raise FileNotFoundError(f"{jar} is missing: run ./brokerstream install (it builds the Java modules)")
        return subprocess.call([cfg.java(), "-cp", str(jar), "io.brokerstream.trace.bench.TracingBench",
                                str(args.trace_one_in), str(args.stack_us_per_order)])
    if args.which == "book":
        from .bench import book
        result = book.run(cfg, orders=args.orders or 100_000, tick_rate=args.tick_rate,
                          duration=args.duration if args.duration_given else 60.0, spread=args.spread,
                          time_scale=args.time_scale, warm_seconds=args.warm_seconds)
        for line in result.lines():
            print(f"[book] {line}")
        if args.json:
            book.write(result, Path(args.json))
        return 0
    if args.which == "drain":
        from .bench import drain
        result = drain.run(cfg, orders=args.orders or 1_000_000, warmup=args.warmup, tick_rate=args.tick_rate,
                           profile=args.profile, architecture=args.architecture)
        for line in result.lines():
            print(f"[drain] {line}")
        if args.json:
            drain.write(result, Path(args.json))
        return 0
    args.positions_given = args.positions is not None
    if args.which == "pnl":
        from .bench import pnl
        result = pnl.run(cfg, positions=args.positions if args.positions_given else 100_000, option_share=args.option_share, tick_rate=args.tick_rate,
                         duration=args.duration, window_ms=args.window_ms)
        for line in result.lines():
            print(f"[pnl] {line}")
        if args.json:
            pnl.write(result, Path(args.json))
        return 0
    if args.which == "sink":
        from .bench import sink
        if args.ceiling:
            print(f"[sink] each sink alone on {sink.CEILING_TOPICS} (a row per order, upserted by "
                  f"{sink.CEILING_KEY}); every other service on, no ticks:")
            for r in sink.ceiling(cfg, orders=args.orders or 100_000):
                print(f"[sink] {r.line()}")
            return 0
        result = sink.run(cfg, rate=args.rate or 5000, duration=args.duration)
        for line in result.lines():
            print(f"[sink] {line}")
        if args.json:
            sink.write(result, Path(args.json))
        return 0
    if args.which == "system":
        from .bench import system
        rates = [float(r) for r in args.rates.split(",")] if args.rates else None
        if args.short:
            # the integration tests' bookkeeping check: two short steps, small P&L load
            rates = rates or [100.0, 1000.0]
            result = system.run(cfg, rates=rates, step_seconds=args.step_seconds or 8, tick_rate=args.tick_rate,
                                http_max=args.http_max or 100, positions=args.positions if args.positions_given
                                else 1000, settle=60, warmup_seconds=3, idle_seconds=5,
                                ceiling_records=0 if args.no_ceiling else 300_000, architecture=args.architecture)
        else:
            result = system.run(cfg, rates=rates, step_seconds=args.step_seconds or 30, tick_rate=args.tick_rate,
                                http_max=args.http_max or 2000,
                                positions=args.positions if args.positions_given else 20_000,
                                ceiling_records=0 if args.no_ceiling else 2_000_000,
                                architecture=args.architecture)
        for line in result.lines():
            print(f"[system] {line}")
        if args.json:
            system.write(result, Path(args.json))
        return 0
    if args.which == "cost":
        from .bench import costrun
        result = costrun.run(cfg, rate=args.rate if args.rate is not None else 1000,
                             tick_rate=args.tick_rate if args.tick_rate_given else 1000, seconds=args.duration,
                             positions=args.positions if args.positions_given else 20_000)
        for line in result.lines():
            print(f"[cost] {line}")
        costrun.store(cfg, result)
        return 0
    if args.which == "hostile":
        from .bench import hostile
        lines, passed = hostile.run(cfg, duration=args.duration or 600, rate=args.rate or 500,
                                    hostile_rate=args.hostile_rate,
                                    tick_rate=args.tick_rate if args.tick_rate_given else 1000)
        for line in lines:
            print(f"[hostile] {line}")
        return 0 if passed else 1
    # gateway: one HTTP step of the system bench (the same open-loop client), every service on
    from .bench import system
    rate = args.rate or 1000
    result = system.run(cfg, rates=[rate], step_seconds=args.duration, http_max=rate,
                        tick_rate=args.tick_rate if args.tick_rate_given else 1000,
                        positions=args.positions if args.positions_given else 0, ceiling_records=0,
                        warmup_seconds=10)
    for line in result.lines():
        print(f"[gateway] {line}")
    if args.json:
        system.write(result, Path(args.json))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="brokerstream", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("install", help="download and build everything the stack needs (cached)")
    s.add_argument("--skip-java", action="store_true", help="do not build our own jars")
    s.set_defaults(func=cmd_install)

    s = sub.add_parser("up", help="start the stack (or the named services and what they need)")
    s.add_argument("services", nargs="*")
    s.add_argument("--no-install", action="store_true", help="skip the (cached) install step")
    s.set_defaults(func=cmd_up)

    s = sub.add_parser("provision", help="create topics, schemas, connectors, jobs on running services")
    s.set_defaults(func=cmd_provision)

    s = sub.add_parser("down", help="stop what `up` started")
    s.add_argument("services", nargs="*")
    s.set_defaults(func=cmd_down)

    s = sub.add_parser("status", help="each service: state, pid, RSS, ports")
    s.add_argument("--json", action="store_true")
    s.add_argument("--check", action="store_true", help="exit 1 unless every service is healthy")
    s.set_defaults(func=cmd_status)

    s = sub.add_parser("logs", help="the log of one service")
    s.add_argument("service")
    s.add_argument("-n", "--lines", type=int, default=100)
    s.add_argument("-f", "--follow", action="store_true")
    s.set_defaults(func=cmd_logs)

    s = sub.add_parser("reset", help="stop the stack and wipe its data")
    s.add_argument("--force", action="store_true", help="do not ask")
    s.set_defaults(func=cmd_reset)

    s = sub.add_parser("connectors", help="the Kafka Connect connectors of connectors/*.json")
    s.add_argument("action", choices=["apply", "check", "restart"])
    s.add_argument("names", nargs="*", help="restart: which (default all)")
    s.set_defaults(func=cmd_connectors)

    s = sub.add_parser("load", help="a load run with metrics stored in ClickHouse: Locust against the gateway, or drain")
    s.add_argument("--shape", default="constant", choices=["constant", "breaking-point", "bursts", "drain"])
    s.add_argument("--users", type=int, default=20, help="constant: users; breaking-point/bursts: the start/baseline")
    s.add_argument("--duration", type=float, default=60, help="seconds (constant, bursts)")
    s.add_argument("--orders", type=int, default=1_000_000, help="drain: measured orders")
    s.add_argument("--scale-step", type=int, default=1, help="which step of a scaling experiment this run is")
    s.add_argument("--web", action="store_true", help="Locust's web UI instead of headless")
    s.add_argument("--tick-rate", type=float, default=1000, help="price ticks per second during the run (0: none)")
    s.set_defaults(func=cmd_load)

    s = sub.add_parser("report", help="the cost report of the stored runs: tables, plots, an HTML page")
    s.add_argument("--out", help="folder for the plots and page (default .data/report)")
    s.add_argument("--headroom", type=float, default=0.2, help="h in the cost per 1,000 requests at C_SLA")
    s.add_argument("--value-per-response", type=float, default=0.001, help="USD a response is worth (productivity F)")
    s.set_defaults(func=cmd_report)

    s = sub.add_parser("run", help="the main job: install, up, reference data, a short scaling experiment "
                                   "(three resource steps), the cost and scaling reports")
    s.add_argument("--scale", default="tiny", choices=["tiny", "small", "thesis"])
    s.add_argument("--steps", help="vCPUs per step (BS_LAB_RUN_STEPS: 0.5,1,1.5,2)")
    s.add_argument("--orders", type=int, help="orders drained per step (BS_LAB_RUN_ORDERS: 10,000)")
    s.add_argument("--tick-rate", help="ticks per second during the drains, or `thesis` (BS_LAB_TICK_RATE: thesis)")
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("experiment", help="the scaling lab: the standard experiment at resource steps, "
                                          "then the performance-to-cost report")
    s.add_argument("which", choices=["scale"])
    s.add_argument("--steps", help="vCPUs per step, comma separated; `2:t2:p2` adds stream threads and P&L "
                                   "parallelism, `:m6` memory (BS_LAB_STEPS: 0.5,1,1.5,2)")
    s.add_argument("--memory-gb", type=float, help="memory limit per step (BS_LAB_MEMORY_GB: 8)")
    s.add_argument("--orders", type=int, help="orders drained per step (BS_LAB_ORDERS: 200,000)")
    s.add_argument("--warmup", type=int, help="warm-up orders before each drain (BS_LAB_WARMUP: 20,000)")
    s.add_argument("--tick-rate", help="ticks per second during each drain, or `thesis`: each equity every 5 s "
                                       "(BS_LAB_TICK_RATE: thesis)")
    s.add_argument("--repeats", type=int, help="runs per step, to show the spread (BS_LAB_REPEATS: 2)")
    s.add_argument("--start-users", type=int, help="breaking point: users at first (BS_LAB_START_USERS: 20)")
    s.add_argument("--step-users", type=int, help="breaking point: users added per hold (BS_LAB_STEP_USERS: 40)")
    s.add_argument("--hold", type=float, help="breaking point: seconds per hold (BS_LAB_HOLD_SECONDS: 15)")
    s.add_argument("--slo-p95-ms", type=float, help="breaking point: the p95 SLO (BS_LAB_SLO_P95_MS: 200)")
    s.add_argument("--max-users", type=int, help="breaking point: stop here unbroken (BS_LAB_MAX_USERS: 1,000)")
    s.add_argument("--headroom", type=float, default=0.2, help="headroom h in the cost per 1,000 requests at C_SLA")
    s.add_argument("--architecture", choices=["streams", "baseline"], default="streams",
                   help="which order flow the steps measure: streams (drain, P&L capacity, breaking point) or "
                        "baseline (the thesis's monolith: drains only); the report shows the latest of both")
    s.add_argument("--out", help="report folder (default .data/report)")
    s.set_defaults(func=cmd_experiment)

    s = sub.add_parser("flink", help="the P&L job on the Flink session cluster")
    s.add_argument("action", choices=["deploy", "stop", "jobs"],
                   help="deploy (idempotent; resumes from the savepoint `stop` took), stop (with a savepoint), jobs")
    s.add_argument("--fresh", action="store_true", help="deploy: ignore a savepoint `stop` left")
    s.set_defaults(func=cmd_flink)

    s = sub.add_parser("keys", help="members' API keys: issue, rotate, revoke, list (stored as hashes)")
    s.add_argument("action", choices=["issue", "rotate", "revoke", "list"])
    s.add_argument("member", help="the member id, e.g. M000001")
    s.add_argument("--label", help="issue/rotate: who or what holds the key")
    s.add_argument("--key-id", help="revoke: only this key (k_...), not all of the member's")
    s.set_defaults(func=cmd_keys)

    s = sub.add_parser("statement", help="an account's statement from Postgres: order events, fills, cash "
                       "movements, realized P&L over a time range, as JSON or CSV")
    s.add_argument("account", help="the account id, e.g. A0000001")
    s.add_argument("--from", dest="since", help="start, ISO 8601 (UTC unless it says), inclusive; default a day "
                   "before --to")
    s.add_argument("--to", help="end, exclusive; default now")
    s.add_argument("--format", choices=["json", "csv"], default="json")
    s.add_argument("--out", help="write to this file instead of stdout")
    s.set_defaults(func=cmd_statement)

    s = sub.add_parser("history", help="one order's whole history from Postgres: placed, amended, triggered, "
                       "filled, cancelled, expired")
    s.add_argument("member", help="the member id")
    s.add_argument("order", help="the member's order id")
    s.set_defaults(func=cmd_history)

    s = sub.add_parser("schemas", help="the Avro schemas of the topics and their registration")
    s.add_argument("action", choices=["list", "show", "check", "register"])
    s.add_argument("name", nargs="?", help="record name for `show`, e.g. Order")
    s.set_defaults(func=cmd_schemas)

    s = sub.add_parser("sql", help="stream SQL over the topics (sql/flink): the Flink SQL client with the "
                                   "query catalog loaded, or one named query's rows")
    s.add_argument("action", nargs="?", default="client", choices=["client", "list", "run"],
                   help="client (default): Flink's SQL client; list: the catalog; run NAME: print its rows")
    s.add_argument("name", nargs="?", help="run: the catalog query")
    s.add_argument("--since", help="run: only records written since then (ISO time, epoch ms, or 90s/15m/2h ago)")
    s.add_argument("--timeout", type=float, default=300, help="run: seconds before giving up")
    s.add_argument("--json", action="store_true", help="run: one JSON object per row")
    s.set_defaults(func=cmd_sql)

    from .gen.cli import add_commands as add_generator_commands
    add_generator_commands(sub)

    s = sub.add_parser("bench", help="benchmarks that print figures: `system` (the whole stack under stepped load), "
                                     "`cost` (CPU, requests, records and rows per order and per tick against the "
                                     "budget), "
                                     "`drain` (prefill, then drain), `gateway`, `hostile` (the hostile-member soak), "
                                     "`sink` (Postgres lag), "
                                     "`pnl` (revaluation), `pricing` (American puts: accuracy, valuations/s; "
                                     "no stack), `tracing` (stage tracing's cost, alone)")
    s.add_argument("which", choices=["system", "cost", "drain", "book", "gateway", "hostile", "sink", "pnl",
                                     "pricing", "tracing"])
    s.add_argument("--hostile-rate", type=float, default=200,
                   help="hostile: the hostile member's requests per second (200)")
    s.add_argument("--spread", type=float, default=0.02, help="book: working orders rest 0.1 %% to this far "
                   "from the price (0.02)")
    s.add_argument("--time-scale", type=float, default=50.0, help="book: market seconds the ticks' GBM walks "
                   "per second (50)")
    s.add_argument("--warm-seconds", type=float, default=10.0, help="book: seconds of ticks before the measured "
                   "duration, their fills counted apart (10)")
    s.add_argument("--trace-one-in", type=int, default=100, help="tracing: one order in N sampled (100, as bench system)")
    s.add_argument("--stack-us-per-order", type=float, default=1720.0,
                   help="tracing: whole-stack CPU microseconds per order to compare with (1,720: bench system's "
                        "1.72 cores at 1,000 orders/s)")
    s.add_argument("--contracts", type=int, default=3000, help="pricing: random American puts to value (3,000)")
    s.add_argument("--positions", type=int, default=None,
                   help="pnl: open positions (100,000); system, cost: extra open positions for the P&L job (20,000)")
    s.add_argument("--rates", help="system: order rates of the steps, comma separated "
                                   "(default 500,1000,2000,5000,10000,20000,30000,40000,50000)")
    s.add_argument("--step-seconds", type=float, help="system: seconds per step (30)")
    s.add_argument("--http-max", type=float, help="system: steps up to this rate go through the gateway, "
                                                  "higher ones into Kafka (2000)")
    s.add_argument("--short", action="store_true", help="system: two short steps (under two minutes)")
    s.add_argument("--no-ceiling", action="store_true", help="system: skip Kafka's producer ceiling")
    s.add_argument("--ceiling", action="store_true", help="sink: each Postgres sink alone (Debezium's JDBC sink, then "
                   "ours) on --orders orders decided while it waits: rows/s and CPU per row")
    s.add_argument("--option-share", type=float, default=0.3, help="pnl: share of positions in options")
    s.add_argument("--window-ms", type=int, help="pnl: redeploy the job with this window for the run")
    s.add_argument("--orders", type=int, default=None, help="drain: measured orders (1,000,000); "
                   "book: working orders (100,000); sink --ceiling: orders (100,000)")
    s.add_argument("--warmup", type=int, default=50_000, help="drain: orders before the measured ones")
    s.add_argument("--tick-rate", type=float, default=None,
                   help="price ticks per second meanwhile (drain, pnl, system: 10,000; gateway, cost: 1,000)")
    s.add_argument("--profile", action="store_true", help="drain: record the streams app with JFR, print where time goes")
    s.add_argument("--architecture", choices=["streams", "baseline"], default="streams",
                   help="drain, system: which order flow runs: the streams app (default) or the baseline "
                        "monolith (baseline/); the other is stopped for the run")
    s.add_argument("--rate", type=float, help="gateway, cost: single-order requests per second (1000); hostile: normal "
                   "orders per second beside the hostile member (500); sink: orders per second (5000)")
    s.add_argument("--duration", type=float, default=None, help="gateway, cost: seconds (30); book: seconds of ticks (60); hostile: seconds (600)")
    s.add_argument("--json", help="also write the figures to this file")
    s.set_defaults(func=cmd_bench)

    s = sub.add_parser("test", help="the whole test suite (what CI runs)")
    s.add_argument("--unit", action="store_true", help="unit tests only: no stack")
    s.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failure")
    s.add_argument("-k", help="only tests matching this pytest expression")
    s.set_defaults(func=cmd_test)

    s = sub.add_parser("topics", help="the topic catalog (platform/topics.yaml)")
    s.add_argument("action", choices=["list", "create"])
    s.add_argument("--bootstrap", help="broker to create topics on (default: the configured one)")
    s.set_defaults(func=cmd_topics)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    cfg = config.load()
    try:
        return args.func(cfg, args)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
