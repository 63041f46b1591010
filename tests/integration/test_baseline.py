"""The architecture baseline (baseline/) against the streams app, on the real stack: the same reference
data, the same price, the same 20,000 order records with faults, read by both at once. Every order must
reach the same outcome in both, and the books must end the same: positions, cash, realized P&L."""

from __future__ import annotations

import collections
import dataclasses
import subprocess
import time
from decimal import Decimal

import psycopg
import pytest
import requests
from confluent_kafka.admin import AdminClient, NewTopic

from brokerstream.clients.kafka_clients import client_conf
from brokerstream.gen.orders import FAULTS, OrderGenerator, OrderMix
from brokerstream.gen.produce import prefill, produce_ticks
from brokerstream.gen.refdata import rows
from brokerstream.gen.ticks import TickGenerator
from brokerstream.ops.flowcheck import latest_positions, read_topic, wait_drained

from .conftest import ROOT

ORDERS = 20_000
HTTP_PORT_SHIFT = 100  # beside the test stack's own baseline port, which it leaves free


def fresh_members(cfg, world, tag: str):
    """Copies of the world's members and accounts under new ids (same statuses, cash, credit): neither
    architecture has booked anything for them, so both start from the same empty books."""
    members = [dataclasses.replace(m, member_id=f"{tag}-{m.member_id}") for m in world.members]
    accounts = [
        dataclasses.replace(a, account_id=f"{tag}-{a.account_id}", member_id=f"{tag}-{a.member_id}")
        for a in world.accounts
    ]
    data = dataclasses.replace(world, members=members, accounts=accounts, api_keys=[])
    with psycopg.connect(cfg.postgres_dsn()) as conn:
        for table, columns, values in rows(data):
            if table in ("members", "accounts"):
                with conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                    for row in values:
                        copy.write_row(row)
    # Debezium carries them to the streams app's global stores; the baseline reads the tables.
    wanted = {a.account_id for a in accounts}
    deadline = time.monotonic() + 120
    while {m.key for m in read_topic(cfg, "ref.accounts", decode=False, keys=lambda k: k in wanted)} != wanted:
        assert time.monotonic() < deadline, "Debezium did not carry the new accounts to ref.accounts"
        time.sleep(1)
    time.sleep(3)  # the global store thread reads the topic within milliseconds; leave it margin
    return data


@pytest.fixture
def baseline_process(stack, stack_env):
    """A baseline of its own: own schema, results topic, groups (starting at the topics' ends) and port;
    stopped by its pid at the end, its schema and topic dropped."""
    cfg = stack
    tag = f"eq{int(time.time())}"
    schema, results = f"{tag}_baseline", f"order-results.{tag}"
    admin = AdminClient(client_conf(cfg))
    admin.create_topics([NewTopic(results, 8, 1)])[results].result(30)
    port = cfg.port("baseline") + HTTP_PORT_SHIFT
    env = {
        **stack_env,
        "BASELINE_KAFKA_BOOTSTRAP": cfg.kafka_bootstrap,
        "BASELINE_REGISTRY_URL": cfg.registry_url,
        "BASELINE_DB_URL": f"jdbc:postgresql://{cfg['BS_POSTGRES_HOST']}:{cfg.port('postgres')}/{cfg['BS_POSTGRES_DB']}",
        "BASELINE_DB_USER": cfg["BS_POSTGRES_USER"],
        "BASELINE_DB_PASSWORD": cfg["BS_POSTGRES_PASSWORD"],
        "BASELINE_DB_SCHEMA": schema,
        "BASELINE_TOPICS_RESULTS": results,
        "BASELINE_GROUPS_ORDERS": f"{tag}-orders",
        "BASELINE_GROUPS_PRICES": f"{tag}-prices",
        "BASELINE_GROUPS_START": "latest",
        "BASELINE_HTTP_HOST": cfg.bind,
        "BASELINE_HTTP_PORT": str(port),
        "BASELINE_CONFIG_FILE": str(ROOT / "platform" / "baseline.properties"),
    }
    log = open(cfg.data_dir / "logs" / f"baseline-{tag}.log", "w")
    proc = subprocess.Popen(
        [cfg.java(min_version=21), "-Xmx512m", "-jar", str(ROOT / "baseline" / "target" / "baseline-0.1.0.jar")],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, f"the baseline exited {proc.returncode}: see {log.name}"
            try:
                if requests.get(f"http://{cfg.bind}:{port}/health", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, "the baseline's consumers were not assigned within 90 s"
            time.sleep(0.5)
        yield {"tag": tag, "schema": schema, "results": results, "group": f"{tag}-orders", "port": port}
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        with psycopg.connect(cfg.postgres_dsn(), autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            # The fresh members have no API keys: later tests that pick members from the tables would
            # post as members the gateway cannot identify.
            conn.execute("DELETE FROM accounts WHERE member_id LIKE %s", (f"{tag}-%",))
            conn.execute("DELETE FROM members WHERE member_id LIKE %s", (f"{tag}-%",))
        admin.delete_topics([results])[results].result(30)


def test_the_baseline_and_the_streams_app_decide_and_book_alike(stack, world, baseline_process):
    cfg, run = stack, baseline_process
    tag = run["tag"]
    data = fresh_members(cfg, world, tag)

    # One price per equity for both: a snapshot both read, then nothing else ticks.
    equities = {i.instrument_id for i in world.instruments if i.instrument_type == "EQUITY" and i.status == "ACTIVE"}
    produce_ticks(cfg, TickGenerator(world, 77), duration=0)
    deadline = time.monotonic() + 60
    while True:
        with psycopg.connect(cfg.postgres_dsn()) as conn:
            priced = {r[0] for r in conn.execute(f"SELECT instrument_id FROM {run['schema']}.mono_latest_prices")}
        if priced >= equities:
            break
        assert time.monotonic() < deadline, f"the baseline priced {len(priced)} of {len(equities)} equities"
        time.sleep(0.5)
    time.sleep(2)  # the streams app folds its prices per commit (100 ms)

    mix = OrderMix(faults={f: 0.02 for f in FAULTS})
    report = prefill(cfg, lambda shard: OrderGenerator(data, 11, mix, run_tag=tag, shard=shard), ORDERS)
    assert report.produced == ORDERS and not report.errors
    wait_drained(cfg, timeout=300)
    wait_drained(cfg, group=run["group"], timeout=600)

    ours = lambda k: k is not None and k.startswith(tag + "-")
    streams = read_topic(cfg, "order-results", keys=ours)
    baseline = read_topic(cfg, run["results"], keys=ours)
    assert len(streams) == len({m.key for m in streams}) == ORDERS
    assert len(baseline) == len({m.key for m in baseline}) == ORDERS, (
        f"baseline: {len(baseline)} results, {len({m.key for m in baseline})} orders of {ORDERS}"
    )

    fields = ("status", "reason", "reason_detail", "fill_price", "realized_pnl", "ingest_ts")
    by_key = {m.key: m.value for m in streams}

    def compared(v: dict) -> dict:
        # a refusal for buying power states each architecture's margin, whose marks are its own (the P&L
        # job's windows, the price threads' ticks): its numbers may differ, the decision may not
        return {f: v[f] for f in fields if not (f == "reason_detail" and v["reason"] == "INSUFFICIENT_BUYING_POWER")}

    differ = [
        (m.key, {f: (by_key[m.key][f], m.value[f]) for f in fields if by_key[m.key][f] != m.value[f]})
        for m in baseline
        if compared(by_key[m.key]) != compared(m.value)
    ]
    assert not differ, f"{len(differ)} orders decided differently (streams, baseline), e.g. {differ[:3]}"
    outcomes = collections.Counter(v["reason"] or v["status"] for v in by_key.values())
    # the faults were injected, and each reached its reason in both
    assert outcomes["ACCEPTED"] > ORDERS / 2 and len(outcomes) >= 8, outcomes

    # The books: positions (quantity, average cost, realized P&L) and the cash that fills moved.
    accounts = {a.account_id for a in data.accounts}
    streams_positions = {
        k: (p["quantity"], p["avg_cost"], p["realized_pnl"])
        for k, p in latest_positions(cfg).items()
        if k.partition("|")[0] in accounts
    }
    with psycopg.connect(cfg.postgres_dsn()) as conn:
        baseline_positions = {
            f"{a}|{i}": (q, c, r)
            for a, i, q, c, r in conn.execute(
                "SELECT account_id, instrument_id, quantity, avg_cost, realized_pnl FROM "
                f"{run['schema']}.mono_positions"
            )
        }
        baseline_cash = {a: m for a, m in conn.execute(f"SELECT account_id, moved FROM {run['schema']}.mono_cash")}
    assert streams_positions, "the streams app booked nothing"
    assert baseline_positions == streams_positions

    multiplier = {i.instrument_id: i.multiplier for i in world.instruments}
    cash: dict[str, Decimal] = collections.defaultdict(Decimal)
    for v in by_key.values():
        if v["status"] == "ACCEPTED":
            signed = v["quantity"] if v["side"] == "BUY" else -v["quantity"]
            cash[v["account_id"]] -= v["fill_price"] * signed * multiplier[v["instrument_id"]]
    assert baseline_cash == dict(cash)


def test_bench_drain_measures_the_baseline_and_puts_the_streams_app_back(stack, world):
    from brokerstream.launcher.provision import default_stack
    from brokerstream.loadtest.bench import drain

    result = drain.run(stack, orders=3000, warmup=0, tick_rate=500, architecture="baseline", progress=lambda _: None)
    assert result.architecture == "baseline"
    assert result.orders == 3000 and sum(result.outcomes.values()) == 3000 and "duplicates" not in result.outcomes
    assert result.throughput > 0 and result.revalued_per_second >= 0
    assert any(line.startswith("architecture: baseline") for line in result.lines())
    layout = default_stack(stack).layout
    assert layout.pidfile("baseline").live_pid() is None, "the baseline was not running before: it is stopped after"
    assert layout.pidfile("streams").live_pid() is not None, "the streams app was running before: it runs again"


def test_bench_system_steps_the_baseline_through_kafka_and_puts_the_streams_app_back(stack, stack_env, world, tmp_path):
    """The baseline has no gateway: every step writes into the orders topic. Its own groups' lags are
    watched (not the stopped streams app's), its price threads mark the bench's open positions, and the
    bench leaves its tables and the order flows as it found them.

    The rates stay well under the baseline's capacity on a 2-core machine with every service on (about
    100-180 orders/s while its price threads mark 300 positions at 500 ticks/s): this test checks the
    bench's mechanics and books, so every step must settle; a step above capacity would leave orders
    without a result within the settle, which is the bench's finding to print, not this test's."""
    import json

    from brokerstream.launcher.provision import default_stack
    from brokerstream.loadtest.bench.architectures import STREAMS_GROUP, baseline_setting

    from .conftest import launcher

    out = tmp_path / "system.json"
    proc = launcher(
        stack_env,
        "bench",
        "system",
        "--short",
        "--architecture",
        "baseline",
        "--rates",
        "50,120",
        "--tick-rate",
        "200",
        "--positions",
        "300",
        "--no-ceiling",
        "--json",
        str(out),
        timeout=400,
    )
    assert "the baseline monolith deciding and marking" in proc.stdout, proc.stdout
    body = json.loads(out.read_text())
    assert body["architecture"] == "baseline" and body["settings"]["architecture"] == "baseline"
    steps = body["steps"]
    assert [s["mode"] for s in steps] == ["kafka", "kafka"], proc.stdout
    orders_group = baseline_setting(stack, "groups.orders")
    for s in steps:
        label = f"step {s['index']} ({s['rate']}/s)"
        assert s["sent"] > 0 and s["missing"] == 0 and s["duplicates"] == 0, (label, s["missing"], s["duplicates"])
        assert s["outcomes"]["accepted"] + s["outcomes"]["rejected"] == s["sent"], (label, s["outcomes"])
        assert s["outcomes"]["unsynced_in_postgres"] == 0, (label, s["outcomes"])  # order-results is synced alike
        assert s["committed_ms"]["count"] == s["sent"], label
        assert orders_group in s["lags"] and STREAMS_GROUP not in s["lags"], (label, sorted(s["lags"]))
        assert s["cpu_cores"].get("baseline", 0) > 0 and "streams" not in s["cpu_cores"], (label, s["cpu_cores"])
        # the P&L job's latency is not the baseline's: not reported; its own revaluations are
        assert s["tick_to_pnl_ms"].get("count", 0) == 0, label
        assert s["pnl_calcs_per_s"] > 0, (label, "300 open positions and ticks, yet nothing marked")

    layout = default_stack(stack).layout
    assert layout.pidfile("baseline").live_pid() is None
    assert layout.pidfile("streams").live_pid() is not None
    schema = baseline_setting(stack, "db.schema")
    with psycopg.connect(stack.postgres_dsn()) as conn:
        left = conn.execute(f"SELECT count(*) FROM {schema}.mono_positions WHERE account_id LIKE 'BENCH-%'").fetchone()[
            0
        ]
    assert left == 0, "the bench's open positions were left in the baseline's table"
