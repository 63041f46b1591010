"""The stack's commands: install, start, provision, inspect and stop the services; the topic catalog,
schemas, connectors and the P&L job; the test suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def stack_of(cfg):
    """The stack of services the launcher starts, as configured."""
    from brokerstream.launcher.provision import default_stack

    return default_stack(cfg)


def cmd_install(cfg, args) -> int:
    from brokerstream.launcher.install import install

    install(cfg, skip_java=args.skip_java, test_tools=args.test_tools)
    return 0


def cmd_up(cfg, args) -> int:
    if not args.no_install:
        from brokerstream.launcher.install import install

        install(cfg, skip_java=False)
    return 0 if stack_of(cfg).up(args.services or None) else 1


def cmd_provision(cfg, args) -> int:
    """Topics, schemas, connectors and jobs against already running services (compose's init job)."""
    return 0 if stack_of(cfg).provision() else 1


def cmd_down(cfg, args) -> int:
    stack_of(cfg).down(args.services or None)
    return 0


def cmd_kubernetes(cfg, args) -> int:
    from brokerstream.common.config import load
    from brokerstream.launcher.kubernetes import write_catalog

    # the defaults, not this shell's overrides: the chart sizes partitions and replicas with its values
    print(f"wrote {write_catalog(load(environ={}))}")
    return 0


def cmd_metrics(cfg, args) -> int:
    from brokerstream.clients.prometheus import scrape
    from brokerstream.metrics.scrape import prometheus_config, targets

    services = {n: s for n, s in stack_of(cfg).services.items() if args.optional or not s.optional}
    if args.action == "config":
        print(prometheus_config(services), end="")
        return 0
    failed = 0
    for job, urls in sorted(targets(services).items()):
        for url in urls:
            try:
                found = scrape(url)
            except OSError as e:
                print(f"{job:18} {url}: {e}")
                failed += 1
                continue
            print(f"{job:18} {url}: {len(found)} samples, {len({s.name for s in found})} series")
    return 1 if failed else 0


def cmd_status(cfg, args) -> int:
    rows = stack_of(cfg).status()
    up = ("healthy", "external")  # an external service answering at its address is as good as a healthy one
    problems = [f"{r['service']} is {r['state']}" for r in rows if r["state"] not in up]
    connectors = []
    if any(r["service"] == "connect" and r["state"] in up for r in rows):
        from brokerstream.clients.connectors import Connect, load_specs, problems_of

        connect = Connect(cfg.connect_url)
        for name in sorted({s.name for s in load_specs()} | set(connect.names())):
            st = connect.status(name)
            connectors.append(
                {
                    "connector": name,
                    "state": st["connector"]["state"] if st else "ABSENT",
                    "tasks": [{"id": t["id"], "state": t["state"]} for t in (st or {}).get("tasks", [])],
                }
            )
            problems += problems_of(name, st)
    jobs = []
    if any(r["service"] == "flink-jobmanager" and r["state"] in up for r in rows):
        from brokerstream.clients.flinkjobs import PNL_JOB, Flink

        jobs = [{"job": j.name, "id": j.job_id, "state": j.state} for j in Flink(cfg.flink_url).jobs()]
        if not any(j["job"] == PNL_JOB and j["state"] == "RUNNING" for j in jobs):
            problems.append(f"flink job {PNL_JOB}: not RUNNING")
    if args.json:
        print(json.dumps({"services": rows, "connectors": connectors, "jobs": jobs, "problems": problems}, indent=2))
    else:
        print(f"{'SERVICE':<18} {'STATE':<10} {'PID':>7} {'RSS MB':>7}  PORTS")
        for r in rows:
            ports = " ".join(f"{k}={v}" for k, v in r["ports"].items())
            print(f"{r['service']:<18} {r['state']:<10} {r['pid'] or '-':>7} {r['rss_bytes'] / 2**20:>7.0f}  {ports}")
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
    from brokerstream.launcher.layout import Layout

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
    stack_of(cfg).reset()
    print(f"deleted {cfg.data_dir}")
    return 0


def cmd_connectors(cfg, args) -> int:
    from brokerstream.clients import connectors

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
    from brokerstream.clients import flinkjobs

    if args.action == "deploy":
        print(flinkjobs.deploy(cfg, resume=not args.fresh))
    elif args.action == "stop":
        print(flinkjobs.stop(cfg))
    else:
        for job in flinkjobs.Flink(cfg.flink_url).jobs():
            print(f"{job.name:<24} {job.state:<12} {job.job_id}")
    return 0


def cmd_schemas(cfg, args) -> int:
    from brokerstream.clients import schemas

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


def cmd_topics(cfg, args) -> int:
    from brokerstream.clients.kafka_clients import client_conf
    from brokerstream.common.topics import ensure_topics, load_catalog

    topics = load_catalog(cfg)
    if args.action == "list":
        for t in topics:
            print(f"{t.name:<20} partitions={t.partitions:<3} value={t.value or '-':<14} key={t.key}")
        return 0
    bootstrap = args.bootstrap or cfg.kafka_bootstrap
    for name, what in ensure_topics(client_conf(cfg, "admin", bootstrap=bootstrap), topics).items():
        print(f"{name:<20} {what}")
    return 0


def check_formatting(cfg) -> int:
    """One style per language, checked before anything is built: ruff (Python), google-java-format (Java,
    through Spotless). The fix is one command each, printed with the failure."""
    from brokerstream.common.progress import step
    from brokerstream.launcher.install import maven, maven_env
    from brokerstream.launcher.layout import Layout

    ruff = str(Path(sys.executable).with_name("ruff"))
    checks = [
        ("python formatting (ruff format --check)", [ruff, "format", "--check", "--quiet", "."], "ruff format ."),
        ("python lint (ruff check)", [ruff, "check", "--quiet", "."], "ruff check --fix ."),
    ]
    if (cfg.root / "pom.xml").exists():
        spotless = maven(cfg, Layout(cfg), "-f", str(cfg.root / "pom.xml"), "spotless:check")
        checks.append(("java formatting (spotless:check)", spotless, "mvn spotless:apply"))
    for what, argv, fix in checks:
        with step("test", what):
            rc = subprocess.call(argv, cwd=cfg.root, env=maven_env(cfg))
        if rc != 0:
            print(f"formatting: {what} failed; `{fix}` fixes it", file=sys.stderr)
            return rc
    return 0


def cmd_test(cfg, args) -> int:
    """The whole suite: install, Java unit tests, Python unit tests, integration tests on a real stack."""
    from brokerstream.common.progress import say, step
    from brokerstream.launcher.install import connect_sink_plugin, install, maven, maven_env
    from brokerstream.launcher.layout import Layout

    install(cfg, skip_java=True, test_tools=True)
    rc = check_formatting(cfg)
    if rc != 0:
        return rc
    if (cfg.root / "pom.xml").exists():
        with step("test", "java build and unit tests (mvn package)"):
            rc = subprocess.call(
                maven(cfg, Layout(cfg), "-f", str(cfg.root / "pom.xml"), "package"), env=maven_env(cfg)
            )
            if rc != 0:
                return rc
        connect_sink_plugin(cfg, Layout(cfg))  # the Connect worker loads our sink from the plugin path
    pytest = [sys.executable, "-m", "pytest", "-q", "-rs", "--durations=15"] + (["-x"] if args.exitfirst else [])
    if args.k:
        pytest += ["-k", args.k]
    # tests/secure and tests/hosts each start their own stack once the one before is down
    suites = ["tests/unit"] + ([] if args.unit else ["tests/integration", "tests/secure", "tests/hosts"])
    for suite in suites:
        say("test", f"pytest {suite}")
        rc = subprocess.call(pytest + [suite], cwd=cfg.root)
        if rc not in (0, 5):  # 5: -k selected nothing in this suite
            return rc
    return 0


def cmd_faults(cfg, args) -> int:
    """The system of record's fault rounds (tests/integration/test_sink_faults.py) with longer windows: each
    fault of the world held for --window seconds under members' load, then the books proven. The suite runs
    the same rounds for 10 s each; this is the longer form, not part of the suite."""
    from brokerstream.common.progress import say

    env = {**os.environ, "BS_FAULT_WINDOW_S": str(args.window)}
    pytest = [sys.executable, "-m", "pytest", "-q", "-rs", "tests/integration/test_sink_faults.py"]
    if args.k:
        pytest += ["-k", args.k]
    say("faults", f"each fault held {args.window:g} s, on a test stack of its own")
    return subprocess.call(pytest, cwd=cfg.root, env=env)


def add_commands(sub) -> None:
    s = sub.add_parser("install", help="download and build everything the stack needs (cached)")
    s.add_argument("--skip-java", action="store_true", help="do not build our own jars")
    s.add_argument(
        "--test-tools",
        action="store_true",
        help="also what only the tests use: helm, the manifest validator, docker-compose, chromium "
        "(`./brokerstream test` installs them itself)",
    )
    s.set_defaults(func=cmd_install)

    s = sub.add_parser(
        "faults",
        help="faults of the world against the system of record (Postgres read-only, killed, locked, timed out; "
        "Connect killed; a column dropped), each held --window seconds under load, then reconcile",
    )
    s.add_argument("--window", type=float, default=30.0, help="seconds each fault lasts (default 30)")
    s.add_argument("-k", help="only the rounds matching this pytest expression, e.g. 'read-only'")
    s.set_defaults(func=cmd_faults)

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

    s = sub.add_parser("metrics", help="the Prometheus endpoints: scrape configuration, or each one's series")
    s.add_argument(
        "action",
        choices=["config", "check"],
        help="config: a Prometheus scrape configuration for this stack; check: scrape each running endpoint",
    )
    s.add_argument("--optional", action="store_true", help="include optional services (the baseline)")
    s.set_defaults(func=cmd_metrics)

    s = sub.add_parser(
        "kubernetes", help="the Helm chart (platform/kubernetes/): its catalog, made from the native ones"
    )
    s.add_argument("action", choices=["catalog"], help="catalog: rewrite files/catalog.yaml from the catalogs")
    s.set_defaults(func=cmd_kubernetes)

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

    s = sub.add_parser("flink", help="the P&L job on the Flink session cluster")
    s.add_argument(
        "action",
        choices=["deploy", "stop", "jobs"],
        help="deploy (idempotent; resumes from the savepoint `stop` took), stop (with a savepoint), jobs",
    )
    s.add_argument("--fresh", action="store_true", help="deploy: ignore a savepoint `stop` left")
    s.set_defaults(func=cmd_flink)

    s = sub.add_parser("schemas", help="the Avro schemas of the topics and their registration")
    s.add_argument("action", choices=["list", "show", "check", "register"])
    s.add_argument("name", nargs="?", help="record name for `show`, e.g. Order")
    s.set_defaults(func=cmd_schemas)

    s = sub.add_parser("topics", help="the topic catalog (platform/topics.yaml)")
    s.add_argument("action", choices=["list", "create"])
    s.add_argument("--bootstrap", help="broker to create topics on (default: the configured one)")
    s.set_defaults(func=cmd_topics)

    s = sub.add_parser("test", help="the whole test suite (what CI runs)")
    s.add_argument("--unit", action="store_true", help="unit tests only: no stack")
    s.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failure")
    s.add_argument("-k", help="only tests matching this pytest expression")
    s.set_defaults(func=cmd_test)
