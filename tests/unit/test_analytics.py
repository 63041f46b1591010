"""Cost queries against hand-computed values on a fixed small data set (embedded ClickHouse), the price
sheet, and the load shapes' stopping rules."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from brokerstream.loadtest.shapes import BreakingPoint, Constant, StepBursts, Window
from brokerstream.metrics import pricesheet, store

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def test_price_sheet_parses_and_prices_a_run(tmp_path):
    sheet = pricesheet.load()
    assert sheet.vcpu_hour == 0.04656 and sheet.gb_hour == 0.00511
    assert sheet.instance_types["m5.2xlarge"].usd_hour == 0.384
    assert sheet.instance_types["r5b.2xlarge"].usd_hour == 0.596
    assert sheet.hourly(2, 24) == pytest.approx(2 * 0.04656 + 24 * 0.00511)
    assert sheet.hourly(0, 0, "m5.4xlarge") == 0.768
    with pytest.raises(ValueError, match="unknown instance type"):
        sheet.hourly(1, 1, "t2.nano")
    bad = tmp_path / "bad.yaml"
    bad.write_text("unit_prices: {vcpu_hour: -1, gb_hour: 1}\n")
    with pytest.raises(ValueError, match="vcpu_hour must be positive"):
        pricesheet.load(bad)
    bad.write_text("unit_prices: {vcpu_hour: 1}\n")
    with pytest.raises(ValueError, match="missing 'gb_hour'"):
        pricesheet.load(bad)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from brokerstream.common.config import Config

    folder = tmp_path_factory.mktemp("ch")
    c = store.connect(Config({"BS_CLICKHOUSE_DSN": f"chdb://{folder}"}))
    store.apply_ddl(c)
    pricesheet.store(c, pricesheet.load())
    runs = [  # run, step, vcpus, memory, instance type
        ("r1", 1, 2.0, 8.0, ""),  # 2 x 0.04656 + 8 x 0.00511 = 0.13400 $/h
        ("r2", 2, 0.0, 0.0, "m5.2xlarge"),  # 0.384 $/h
    ]
    cols = [
        "run_id",
        "kind",
        "shape",
        "started",
        "ended",
        "scale_step",
        "partitions",
        "stream_threads",
        "instances",
        "flink_parallelism",
        "vcpus",
        "memory_gb",
        "instance_type",
        "heap_sizes",
        "workload",
        "seed",
        "code_version",
        "config",
    ]
    c.insert(
        "runs",
        [
            [
                r,
                "http",
                "constant",
                T0 + dt.timedelta(hours=i),
                T0 + dt.timedelta(hours=i, minutes=1),
                step,
                4,
                1,
                1,
                1,
                v,
                m,
                it,
                "{}",
                "w",
                1,
                "test",
                "{}",
            ]
            for i, (r, step, v, m, it) in enumerate(runs)
        ],
        column_names=cols,
    )
    # r1: 1,000 accepted + 200 rejected over 10 s = 120 orders/s; 50 P&L calculations/s
    # r2: 4,000 accepted + 800 rejected over 10 s = 480 orders/s
    rows = []
    for run, accepted, rejected, pnl in (("r1", 1000, 200, 500), ("r2", 4000, 800, 0)):
        for stage, total in (("orders_accepted", accepted), ("orders_rejected", rejected), ("pnl_calculations", pnl)):
            rows.append([run, T0, stage, 0])
            rows.append([run, T0 + dt.timedelta(seconds=10), stage, total])
    c.insert("stage_samples", rows, column_names=["run_id", "ts", "stage", "total"])
    c.insert("run_results", [["r1", "c_sla", 100.0], ["r2", "c_sla", 400.0]], column_names=["run_id", "name", "value"])
    c.insert(
        "process_samples",
        [["r2", T0, "kafka", 10.0, 1_000_000_000], ["r2", T0 + dt.timedelta(seconds=10), "kafka", 15.0, 3_000_000_000]],
        column_names=["run_id", "ts", "service", "cpu_seconds", "rss_bytes"],
    )
    yield c
    c.close()


def query(client, name, **numbers):
    cols, rows = store.run_query(client, store.named_queries()[name], **numbers)
    return [dict(zip(cols, r)) for r in rows]


def test_throughput_per_dollar_and_cost_per_million_orders(client):
    r1, r2 = query(client, "throughput_per_dollar")
    assert r1["usd_hour"] == pytest.approx(0.134)
    assert r1["orders_per_s"] == pytest.approx(120) and r1["pnl_per_s"] == pytest.approx(50)
    assert r1["orders_per_s_per_usd_hour"] == pytest.approx(120 / 0.134, rel=1e-6)
    assert r1["usd_per_million_orders"] == pytest.approx(0.134 / (120 * 3600) * 1e6, rel=1e-6)
    assert r2["usd_hour"] == pytest.approx(0.384) and r2["orders_per_s"] == pytest.approx(480)


def test_cost_curve_gains_from_the_first_step(client):
    s1, s2 = query(client, "cost_curve")
    assert s1["throughput_gain_pct"] == 0
    assert s2["throughput_gain_pct"] == pytest.approx(300)  # 480 / 120 - 1
    assert s2["per_dollar_gain_pct"] == pytest.approx(((480 / 0.384) / (120 / 0.134) - 1) * 100, rel=1e-5)


def test_cost_per_thousand_requests_at_the_sla_rate_with_headroom(client):
    r1, r2 = query(client, "cost_per_1000_at_sla", headroom=0.2)
    assert r1["usd_per_1000_requests"] == pytest.approx((0.134 / (100 * 3600)) * 1000 / 0.8, rel=1e-6)
    assert r2["usd_per_1000_requests"] == pytest.approx((0.384 / (400 * 3600)) * 1000 / 0.8, rel=1e-6)


def test_productivity_and_scalability_between_steps(client):
    s1, s2 = query(client, "productivity", value_per_response=0.001)
    f1, f2 = 120 * 0.001 / (0.134 / 3600), 480 * 0.001 / (0.384 / 3600)
    assert s1["productivity"] == pytest.approx(f1, rel=1e-6)
    assert s2["productivity"] == pytest.approx(f2, rel=1e-6)
    assert s2["scalability_vs_previous"] == pytest.approx(f2 / f1, rel=1e-5)
    assert s1["scalability_vs_previous"] is None or math.isnan(s1["scalability_vs_previous"])


def test_service_costs_price_what_each_service_used(client):
    (kafka,) = query(client, "service_costs")
    assert kafka["cpu_cores"] == pytest.approx(0.5) and kafka["memory_gb"] == pytest.approx(2.0)
    assert kafka["usd_hour_used"] == pytest.approx(0.5 * 0.04656 + 2 * 0.00511, rel=1e-5)


def test_named_queries_only_take_numbers():
    q = store.named_queries()["cost_per_1000_at_sla"]
    with pytest.raises(ValueError):
        store.run_query(None, q, headroom="0); DROP TABLE runs; --")


def test_breaking_point_stops_when_p95_exceeds_the_slo_and_reports_the_last_good_rate():
    bp = BreakingPoint(start_users=10, step_users=10, hold_seconds=10, slo_p95_ms=200)
    assert bp.tick(0, None) == (10, 50)
    assert bp.tick(9.9, Window(rps=50, p95_ms=80, error_ratio=0)) == (10, 50)
    assert bp.tick(10, Window(rps=50, p95_ms=80, error_ratio=0)) == (20, 50)  # step 1 met the SLO
    assert bp.tick(20, Window(rps=95, p95_ms=150, error_ratio=0.001)) == (30, 50)
    assert bp.tick(30, Window(rps=110, p95_ms=450, error_ratio=0)) is None  # step 3 broke it
    assert bp.c_sla == 95 and "p95 450 ms > SLO 200 ms at 30 users" in bp.stopped_because


def test_breaking_point_stops_on_errors_over_one_percent():
    bp = BreakingPoint(start_users=5, step_users=5, hold_seconds=5, slo_p95_ms=1000)
    bp.tick(0, None)
    assert bp.tick(5, Window(rps=40, p95_ms=10, error_ratio=0.02)) is None
    assert bp.c_sla == 0 and "errors 2.0%" in bp.stopped_because


def test_constant_and_burst_shapes():
    assert Constant(7, 30).tick(29, None) == (7, 50) and Constant(7, 30).tick(30, None) is None
    bursts = StepBursts(baseline_users=10, burst_users=5, baseline_seconds=10, burst_seconds=5, bursts=2)
    assert [bursts.tick(t, None)[0] for t in (0, 11, 16, 26)] == [10, 15, 10, 20]
    assert bursts.tick(31, None) == (10, 100) and bursts.tick(41, None) is None


def test_breaking_point_warm_up_holds_the_first_users_and_is_not_judged():
    bp = BreakingPoint(start_users=10, step_users=5, hold_seconds=10, slo_p95_ms=100, warmup_seconds=15)
    awful = Window(rps=1, p95_ms=5000, error_ratio=0.5)
    assert bp.tick(0, awful) == (10, 50) and bp.tick(14.9, awful) == (10, 50)  # cold: not judged
    assert bp.tick(15, None) == (10, 50)
    good = Window(rps=40, p95_ms=50, error_ratio=0)
    assert bp.tick(25, good) == (15, 50) and bp.c_sla == 40  # the first judged hold ended 10 s after warm-up
    assert bp.tick(35, awful) is None and "p95 5000 ms" in bp.stopped_because and bp.c_sla == 40


def test_no_statement_of_the_clickhouse_ddl_is_cut_by_a_semicolon_in_a_comment():
    from brokerstream.metrics import store

    for path in store.SQL_DIR.glob("*.sql"):
        for line in path.read_text().splitlines():
            code, _, comment = line.partition("--")
            assert not (code.strip() and ";" in comment), f"{path.name}: {line}"
