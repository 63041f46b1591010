"""`bench system --short` on the real stack, every service on: the bench's own bookkeeping holds.

Figures are not checked (a benchmark is not a timed test); what is checked is that the bench accounts
for every order it sent, measured every consumer group's lag, and that the per-hop split of sampled
orders adds up to their end-to-end latency. No extra positions (`--positions 0`): the bench writes
those straight to the positions topic, which later tests replay against the orders.
"""

from __future__ import annotations

import json
import subprocess
import time

from .conftest import ROOT, launcher

ORDER_HOPS_TO_COMMIT = ["client_queue", "to_gateway", "gateway", "kafka_append", "queue", "decide", "commit"]


def _wait_for_pnl_job(cfg, timeout: float = 120) -> None:
    from brokerstream.clients.flinkjobs import PNL_JOB, Flink

    deadline = time.monotonic() + timeout
    while not Flink(cfg.flink_url).live(PNL_JOB):
        assert time.monotonic() < deadline, f"{PNL_JOB} is not running on the test stack"
        time.sleep(2)


def _wait_for_the_sync(cfg, timeout: float = 180) -> None:
    """Every connector running and the world's first results in Postgres: on a fresh stack Connect
    is still starting its tasks when the first test begins, and the bench waits for Postgres only
    its settle time."""
    import psycopg

    from brokerstream.clients.connectors import check

    deadline = time.monotonic() + timeout
    while True:
        problems = check(cfg)
        with psycopg.connect(cfg.postgres_dsn(), autocommit=True) as conn:
            synced = conn.execute("SELECT count(*) FROM order_results").fetchone()[0]
        if not problems and synced > 0:
            return
        assert time.monotonic() < deadline, f"the sync never settled: {problems}, {synced} results in Postgres"
        time.sleep(2)


def test_short_system_bench_accounts_for_every_order(stack, stack_env, world, tmp_path):
    _wait_for_pnl_job(stack)
    _wait_for_the_sync(stack)
    out = tmp_path / "system.json"
    proc = launcher(
        stack_env,
        "bench",
        "system",
        "--short",
        "--rates",
        "100,1500",
        "--tick-rate",
        "500",
        "--positions",
        "0",
        "--json",
        str(out),
        timeout=400,
    )
    printed = proc.stdout
    assert "sustained capacity:" in printed and "ProducerPerformance" in printed, printed
    body = json.loads(out.read_text())
    steps = body["steps"]
    assert [s["mode"] for s in steps] == ["http", "kafka"], printed

    for s in steps:
        label = f"step {s['index']} ({s['mode']} {s['rate']}/s)"
        assert s["sent"] > 0, label
        # every order sent has exactly one result
        assert s["missing"] == 0 and s["duplicates"] == 0, (label, s["missing"], s["duplicates"])
        assert s["outcomes"]["accepted"] + s["outcomes"]["rejected"] == s["sent"], (label, s["outcomes"])
        assert s["outcomes"]["unsynced_in_postgres"] == 0, (label, s["outcomes"])
        # lags measured for the order flow, the P&L job and the sinks
        for group in ("brokerstream-orders", "brokerstream-pnl", "connect-sink-orders", "connect-sink-marks"):
            assert group in s["lags"], (label, sorted(s["lags"]))
        assert s["cpu_cores"].get("streams", 0) > 0 and s["cpu_cores"].get("kafka", 0) > 0, (label, s["cpu_cores"])
        assert s["committed_ms"]["count"] == s["sent"], label
        assert s["offsets_per_order"] >= 1, label  # at least the order itself
        # the stages add up: for the sampled orders, the hops' means sum to the mean end-to-end latency
        sampled = s["sampled_ms"]
        assert sampled.get("count", 0) > 0, (label, "no sampled orders")
        hops = s["hops_ms"]
        for h in ORDER_HOPS_TO_COMMIT:
            if s["mode"] == "kafka" and h in ("to_gateway", "gateway"):
                continue  # written straight into Kafka: no gateway stamps
            assert hops.get(h, {}).get("count") == sampled["count"], (label, h, hops.get(h), sampled)
        total = sum(hops.get(h, {}).get("mean", 0.0) for h in ORDER_HOPS_TO_COMMIT)
        assert abs(total - sampled["mean"]) <= max(3.0, 0.05 * sampled["mean"]), (label, total, sampled)
        # what an order cost, by service, API key, topic and table; the services add up to the kernel's count
        assert s["cost_us"].get("streams", 0) > 0 and s["cost_us"].get("kafka", 0) > 0, (label, s["cost_us"])
        assert s["per_order"]["records"].get("orders", 0) >= 0.9, (label, s["per_order"]["records"])
        assert s["per_order"]["requests"].get("Produce", 0) > 0, (label, s["per_order"]["requests"])
        # counted over the step's window: a sink still catching up when it closes writes the rest later
        assert s["per_order"]["rows"].get("order_results", 0) > 0, (label, s["per_order"]["rows"])
        if s["kernel_cores"] is not None:  # a cpuacct hierarchy of its own (root on cgroup v1)
            assert s["cost_check"] is None, (label, s["cost_check"])
    assert "cost per order at step 2" in printed and "check: the services' CPU" in printed, printed
    # the P&L job revalued the positions the first step opened as the second step's ticks moved their prices
    # (read through Flink's REST metrics, whose cache a single ask does not refresh in time)
    assert steps[-1]["pnl_calcs_per_s"] > 0, printed
    assert body["kafka_ceiling"] > 0

    # stored in ClickHouse like every run (read by a process of its own: the embedded store has one owner)
    check = subprocess.run(
        [
            str(ROOT / ".venv" / "bin" / "python"),
            "-c",
            "import sys; from brokerstream.common import config; from brokerstream.metrics import store; "
            "c = store.connect(config.load()); "
            'print(c.query("SELECT count() FROM system_steps WHERE run_id = '
            f"'{body['run_id']}'\").result_rows[0][0]); "
            f"print(c.query(\"SELECT uniqExact(step) FROM cost_lines WHERE run_id = '{body['run_id']}' "
            f"AND kind = 'cpu_us'\").result_rows[0][0])",
        ],
        env={**stack_env, "PYTHONPATH": str(ROOT / "python")},
        text=True,
        capture_output=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stderr
    assert [int(x) for x in check.stdout.strip().splitlines()[-2:]] == [len(steps), len(steps)]
