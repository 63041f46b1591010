"""A real short load run: Locust against the gateway, the collector sampling the stack, everything
stored in the embedded ClickHouse, and the report computed from it."""

from __future__ import annotations

from brokerstream.loadtest import driver
from brokerstream.metrics import report, store


def test_a_short_constant_run_is_sampled_stored_and_reported(stack, world, tmp_path):
    record = driver.run_http(stack, shape="constant", users=4, duration=12, progress=print)
    client = store.connect(stack)
    try:
        q = lambda sql: client.query(sql, parameters={"r": record.run_id}).result_rows
        ((kind, vcpus, version),) = q("SELECT kind, vcpus, code_version FROM runs FINAL WHERE run_id = {r:String}")
        assert kind == "http" and vcpus > 0 and version
        services = dict(
            q(
                "SELECT service, max(cpu_seconds) - min(cpu_seconds) FROM process_samples "
                "WHERE run_id = {r:String} GROUP BY service"
            )
        )
        assert {"kafka", "streams", "postgres", "connect"} <= set(services)
        assert services["streams"] > 0  # the app worked during the run
        (accepted,) = q("SELECT max(total) FROM stage_samples WHERE run_id = {r:String} AND stage = 'orders_accepted'")[
            0
        ]
        assert accepted > 0
        assert (
            q("SELECT count() FROM lag_samples WHERE run_id = {r:String} AND group_name = 'brokerstream-orders'")[0][0]
            > 0
        )
        assert q("SELECT count() FROM request_samples WHERE run_id = {r:String} AND rps > 0")[0][0] > 0
        assert (
            q("SELECT count() FROM latency_samples WHERE run_id = {r:String} AND metric = 'order_to_result'")[0][0] > 0
        )
        results = dict(q("SELECT name, value FROM run_results FINAL WHERE run_id = {r:String}"))
        assert results["orders_posted"] > 0 and results["gateway_accept_p50_ms"] > 0
    finally:
        client.close()
    tables = report.run(stack, tmp_path, printer=lambda _: None)
    _, cols, rows = tables["throughput_per_dollar"]
    mine = [dict(zip(cols, r)) for r in rows if r[0] == record.run_id]
    assert mine and mine[0]["orders_per_s"] > 0 and mine[0]["usd_hour"] > 0
    assert (tmp_path / "throughput_vs_cost.png").stat().st_size > 0
    assert (tmp_path / "report.html").exists()


def test_a_breaking_point_run_on_locusts_own_master_and_workers_finds_its_figure(stack, world):
    # BS_LOAD_PROCESSES=2: a master and two workers; the shape on the master judges the holds from the
    # statistics the workers report
    cfg = stack.with_overrides(BS_LOAD_PROCESSES="2")
    record = driver.run_http(
        cfg,
        shape="breaking-point",
        users=4,
        duration=4 * 6,
        progress=print,
        extra_env={
            "BS_LOAD_STEP_USERS": "4",
            "BS_LOAD_HOLD": "4",
            "BS_LOAD_SLO_P95_MS": "2000",
            "BS_LOAD_MAX_USERS": "12",
            "BS_LOAD_WARMUP": "4",
        },
    )
    client = store.connect(stack)
    try:
        results = dict(
            client.query(
                "SELECT name, value FROM run_results FINAL WHERE run_id = {r:String}", parameters={"r": record.run_id}
            ).result_rows
        )
    finally:
        client.close()
    assert results["orders_posted"] > 0
    # twelve users cannot break a 2 s p95: the figure is a floor, and marked as one
    assert results["c_sla"] > 0 and results["c_sla_is_floor"] == 1
