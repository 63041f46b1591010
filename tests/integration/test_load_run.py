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
