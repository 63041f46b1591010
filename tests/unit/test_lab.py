"""The scaling lab without a stack: step parsing, the USL fit, the scaling query against hand-computed
values (embedded ClickHouse), the analysis and the report page's content."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math

import pytest

from brokerstream.lab import analysis, labreport, model, steps, usl
from brokerstream.lab.experiment import EXPERIMENT_RUN_COLUMNS
from brokerstream.metrics import pricesheet, store
from brokerstream.metrics.runs import RunRecord

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
RUN_COLUMNS = [f.name for f in dataclasses.fields(RunRecord)]  # the runs table's columns, in order


def test_steps_parse_vertical_and_horizontal_forms():
    got = steps.parse("0.5, 1,2:t2:p3:m6", memory_gb=8, cores=2)
    assert [(s.vcpus, s.memory_gb, s.stream_threads, s.pnl_parallelism) for s in got] == [
        (0.5, 8, None, None),
        (1, 8, None, None),
        (2, 6, 2, 3),
    ]
    assert got[2].name == "2 vCPU, 2 stream threads, P&L x3"
    assert got[2].settings() == {
        "BS_RUN_VCPUS": "2",
        "BS_RUN_MEMORY_GB": "6",
        "BS_STREAMS_THREADS": "2",
        "BS_PNL_PARALLELISM": "3",
    }


def test_steps_parse_scale_out_as_processes_and_tasks():
    one, two, three = steps.parse("2, 2:i2:f2:p2, 2:c4", memory_gb=8, cores=2)
    assert not one.scale_out and two.scale_out and three.scale_out
    assert two.name == "2 vCPU, 2 streams instances, 2 TaskManagers, P&L x2"
    assert two.settings() == {
        "BS_RUN_VCPUS": "2",
        "BS_RUN_MEMORY_GB": "8",
        "BS_STREAMS_INSTANCES": "2",
        "BS_FLINK_TASKMANAGERS": "2",
        "BS_PNL_PARALLELISM": "2",
    }
    assert three.name == "2 vCPU, 4 sink tasks" and three.settings()["BS_CONNECT_SINK_TASKS"] == "4"


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "no steps"),
        ("abc", "starts with a number"),
        ("4", "between 0.05 and this machine's 2 cores"),
        ("0", "between"),
        ("1:x2", "options are"),
        ("1:t0", "1 to 32"),
        ("1:i5", "streams app instances are 1 to 4"),
        ("1:f0", "TaskManagers are 1 to 4"),
        ("1:c33", "1 to 32"),
        ("1:ix", "options are"),
        ("1:m0.5", "at least 1 GB"),
        ("1,1", "twice"),
    ],
)
def test_steps_refuse_what_cannot_be_run(text, message):
    with pytest.raises(ValueError, match=message):
        steps.parse(text, memory_gb=8, cores=2)


def test_usl_fit_recovers_known_terms_and_peak():
    truth = usl.Usl(lam=1000, sigma=0.08, kappa=0.004, unit=0.5, r2=1)
    r = [0.5, 1, 1.5, 2, 3]
    fitted = usl.fit(r, [truth.throughput(v) for v in r])
    assert fitted.sigma == pytest.approx(0.08, abs=1e-3) and fitted.kappa == pytest.approx(0.004, abs=1e-4)
    assert fitted.lam == pytest.approx(1000, rel=1e-3) and fitted.r2 == pytest.approx(1, abs=1e-6)
    # X(N) peaks at N* = sqrt((1 - sigma) / kappa) units
    assert fitted.peak() == pytest.approx(math.sqrt(0.92 / 0.004) * 0.5, rel=2e-2)
    linear = usl.fit([1, 2, 4], [100, 200, 400])
    assert linear.sigma == pytest.approx(0, abs=1e-3) and linear.kappa == pytest.approx(0, abs=1e-4)
    assert linear.peak() is None or linear.peak() > 100
    with pytest.raises(ValueError, match="three or more"):
        usl.fit([1, 2, 2], [1, 2, 2])


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from brokerstream.common.config import Config

    c = store.connect(Config({"BS_CLICKHOUSE_DSN": f"chdb://{tmp_path_factory.mktemp('ch')}"}))
    store.apply_ddl(c)
    pricesheet.store(c, pricesheet.load())
    # an older experiment that must not show, then ours: step 1 at 1 vCPU (two repeats), step 2 at 2 vCPU
    runs = [
        ("old", "drain", 1, 1.0, "x0"),
        ("d1a", "drain", 1, 1.0, "e1"),
        ("d1b", "drain", 1, 1.0, "e1"),
        ("p1a", "pnl", 1, 1.0, "e1"),
        ("p1b", "pnl", 1, 1.0, "e1"),
        ("h1", "locust", 1, 1.0, "e1"),
        ("d2", "drain", 2, 2.0, "e1"),
        ("p2", "pnl", 2, 2.0, "e1"),
        ("h2", "locust", 2, 2.0, "e1"),
    ]
    c.insert(
        "runs",
        [[r, k, k, T0, T0, step, 8, 1, 1, 1, v, 8.0, "", "{}", "w", 1, "test", "{}"] for r, k, step, v, _ in runs],
        column_names=RUN_COLUMNS,
    )
    c.insert(
        "experiment_runs",
        [
            [
                e,
                T0 + dt.timedelta(hours=1 if e == "e1" else 0),
                step,
                f"{v:g} vCPU",
                1 + (r in ("d1b", "p1b")),
                k,
                r,
                v,
                8.0,
                1,
                1,
                1000,
                100.0,
                "{}",
                "streams",
                1,
                1,
                0,
                4,
                1,
            ]
            for r, k, step, v, e in runs
        ],
        column_names=EXPERIMENT_RUN_COLUMNS,
    )
    c.insert(
        "run_results",
        [
            ["old", "drain_orders_per_s", 1.0],
            ["d1a", "drain_orders_per_s", 900.0],
            ["d1b", "drain_orders_per_s", 1100.0],
            ["d2", "drain_orders_per_s", 1500.0],
            ["h1", "c_sla", 50.0],
            ["h2", "c_sla", 80.0],
            ["h1", "client_cpu_cores", 0.25],
            ["h1", "c_sla_is_floor", 0.0],
            ["h2", "c_sla_is_floor", 1.0],
            ["p1a", "positions_revalued_per_s", 1000.0],
            ["p1b", "positions_revalued_per_s", 3000.0],
            ["p2", "positions_revalued_per_s", 5000.0],
            ["d1a", "idle_cpu_cores", 0.2],
            ["d1b", "idle_cpu_cores", 0.3],
        ],
        column_names=["run_id", "name", "value"],
    )
    # P&L during the drains: d1a 100/s, d1b 300/s (over 10 s), d2 500/s
    c.insert(
        "stage_samples",
        [
            [r, T0 + dt.timedelta(seconds=s), "pnl_calculations", n]
            for r, per_s in (("d1a", 100), ("d1b", 300), ("d2", 500))
            for s, n in ((0, 0), (10, per_s * 10))
        ],
        column_names=["run_id", "ts", "stage", "total"],
    )
    # CPU: d2's streams app restarted mid-run (counter back to 0): 4 + 3 + 5 = 12 s of kafka+streams over 10 s
    c.insert(
        "process_samples",
        [
            ["d2", T0, "kafka", 100.0, 1],
            ["d2", T0 + dt.timedelta(seconds=10), "kafka", 104.0, 1],
            ["d2", T0, "streams", 50.0, 1],
            ["d2", T0 + dt.timedelta(seconds=5), "streams", 53.0, 1],
            ["d2", T0 + dt.timedelta(seconds=10), "streams", 5.0, 1],
        ],
        column_names=["run_id", "ts", "service", "cpu_seconds", "rss_bytes"],
    )
    yield c
    c.close()


def scaling_rows(client, headroom=0.2):
    cols, rows = store.run_query(
        client, store.named_queries()["scaling_steps"], headroom=headroom, baseline=0, partitions=-1, brokers=-1
    )
    return [dict(zip(cols, r)) for r in rows]


def test_scaling_steps_against_hand_computed_values(client):
    s1, s2 = scaling_rows(client)
    # 1 vCPU + 8 GB = 0.04656 + 0.04088 = 0.08744 $/h; 2 vCPU = 0.134 $/h
    assert (s1["step"], s1["step_name"], s1["repeats"], s1["stream_threads"], s1["pnl_parallelism"]) == (
        1,
        "1 vCPU",
        2,
        1,
        1,
    )
    assert s1["usd_hour"] == pytest.approx(0.08744) and s2["usd_hour"] == pytest.approx(0.134)
    # how each step cut the work, and the stack's shape
    assert [(s["streams_instances"], s["taskmanagers"], s["connect_tasks"]) for s in (s1, s2)] == [(1, 1, 0)] * 2
    assert (s2["topic_partitions"], s2["kafka_brokers"]) == (4, 1)
    assert (s1["orders_per_s"], s1["orders_per_s_min"], s1["orders_per_s_max"]) == (1000, 900, 1100)
    assert (s1["pnl_per_s"], s1["pnl_per_s_min"], s1["pnl_per_s_max"]) == (2000, 1000, 3000)
    assert s2["pnl_per_s"] == 5000 and s1["pnl_during_drain_per_s"] == 200 and s2["pnl_during_drain_per_s"] == 500
    assert s1["http_client_cpu_cores"] == 0.25
    assert s1["c_sla_is_floor"] == 0 and s2["c_sla_is_floor"] == 1
    assert s1["c_sla"] == 50 and s2["c_sla"] == 80
    assert s1["orders_per_s_per_usd_hour"] == pytest.approx(1000 / 0.08744, abs=1e-3)
    assert s1["usd_per_million_orders"] == pytest.approx(0.08744 / 3600 / 1000 * 1e6, abs=1e-6)
    assert s1["usd_per_1000_requests_at_sla"] == pytest.approx(0.08744 / (50 * 3600) * 1000 / 0.8, rel=1e-6)
    assert s1["scalability_vs_previous"] is None
    assert s2["scalability_vs_previous"] == pytest.approx((1500 / 0.134) / (1000 / 0.08744), abs=1e-6)
    assert s2["max_cpu_cores"] == pytest.approx(1.2)
    assert sorted(s1["orders_per_s_runs"]) == [900, 1100] and s2["orders_per_s_runs"] == [1500]
    assert sorted(s1["pnl_per_s_runs"]) == [1000, 3000]
    assert s1["idle_cpu_cores"] == pytest.approx(0.25) and math.isnan(s2["idle_cpu_cores"])
    # 1,000 orders per drain: d1a 1000/900 s, d1b 1000/1100 s; d2 1000/1500 s
    assert s1["drain_seconds"] == pytest.approx((1000 / 900 + 1000 / 1100) / 2, abs=1e-3)
    assert s2["drain_seconds"] == pytest.approx(1000 / 1500, abs=1e-3)


def test_an_experiment_on_another_stack_shape_is_found_by_its_shape_and_drawn_beside_the_latest(client):
    c = client  # an older experiment on a three-broker stack, removed again at the end
    c.insert(
        "runs",
        [["b3c", "capacity", "capacity", T0, T0, 1, 8, 1, 1, 1, 2.0, 8.0, "", "{}", "w", 1, "test", "{}"]],
        column_names=RUN_COLUMNS,
    )
    row = ["three", T0 - dt.timedelta(hours=3), 1, "2 vCPU", 1, "capacity", "b3c", 2.0, 8.0, 1, 1, 0, 100.0]
    c.insert("experiment_runs", [row + ["{}", "streams", 1, 1, 0, 4, 3]], column_names=EXPERIMENT_RUN_COLUMNS)
    c.insert(
        "run_results",
        [["b3c", "capacity_orders_per_s", 750.0], ["b3c", "c_sla", 1500.0], ["b3c", "c_sla_is_floor", 0.0]],
        column_names=["run_id", "name", "value"],
    )
    try:
        _, shapes = store.run_query(c, store.named_queries()["experiment_shapes"])
        cols, rows = store.run_query(
            c, store.named_queries()["scaling_steps"], headroom=0.2, baseline=0, partitions=4, brokers=3
        )
        latest = scaling_rows(c)
    finally:
        c.command("ALTER TABLE experiment_runs DELETE WHERE experiment_id = 'three' SETTINGS mutations_sync = 2")
        for table in ("runs", "run_results"):
            c.command(f"ALTER TABLE {table} DELETE WHERE run_id = 'b3c' SETTINGS mutations_sync = 2")
    assert [(p, b) for p, b, *_ in shapes] == [(4, 1), (4, 3)]  # the latest shape first
    assert [s["step_name"] for s in latest] == ["1 vCPU", "2 vCPU"]  # any shape: still the latest experiment
    (three,) = [dict(zip(cols, r)) for r in rows]
    assert (three["orders_per_s"], three["kafka_brokers"], three["topic_partitions"]) == (750, 3, 4)
    sheet = pricesheet.load()
    main = analysis.analyse(latest, sheet, boots=10)
    others = [(analysis.shape_name(4, 3), analysis.analyse([three], sheet, boots=10).steps)]
    series = {s["name"]: s for s in labreport.charts(main, others)[0]["series"]}
    (point,) = series["stack of 4 partitions, 3 brokers, on-demand prices"]["points"]
    assert point["y"] == 750 and point["label"] == "2 vCPU (4 partitions, 3 brokers)"
    (said,) = analysis.other_shape_sentences(main.steps, others)
    # against the main experiment's 2 vCPU step (1,500 orders/s), cut the same way
    assert said.startswith("On a stack of 4 partitions, 3 brokers") and "2 vCPU 750 orders/s (x0.50)" in said


def test_a_steps_figure_is_its_capacity_search_where_one_ran(client):
    c = client  # a later experiment than the fixture's, removed again at the end
    runs = [("d", "drain", 1), ("c1", "capacity", 1), ("c2", "capacity", 2), ("c3", "capacity", 3), ("l", "locust", 1)]
    c.insert(
        "runs",
        [[r, k, k, T0, T0, 1, 8, 1, 1, 1, 1.0, 8.0, "", "{}", "w", 1, "test", "{}"] for r, k, _ in runs],
        column_names=RUN_COLUMNS,
    )
    c.insert(
        "experiment_runs",
        [
            [
                "cap",
                T0 + dt.timedelta(hours=9),
                1,
                "1 vCPU",
                rep,
                k,
                r,
                1.0,
                8.0,
                1,
                1,
                0,
                100.0,
                "{}",
                "streams",
                1,
                1,
                0,
                4,
                1,
            ]
            for r, k, rep in runs
        ],
        column_names=EXPERIMENT_RUN_COLUMNS,
    )
    c.insert(
        "run_results",
        [
            ["d", "drain_orders_per_s", 5000.0],
            ["c1", "capacity_orders_per_s", 400.0],
            ["c1", "c_sla", 800.0],
            ["c1", "c_sla_is_floor", 0.0],
            ["c1", "busiest_rung_cores", 0.93],
            ["c1", "idle_cpu_cores", 0.2],
            ["c1", "client_cpu_cores", 0.1],
            ["c2", "capacity_orders_per_s", 600.0],
            ["c2", "c_sla", 1200.0],
            ["c2", "c_sla_is_floor", 0.0],
            ["c2", "busiest_rung_cores", 0.97],
            ["c3", "capacity_orders_per_s", 900.0],  # unbroken: a floor, not a figure
            ["c3", "c_sla", 1800.0],
            ["c3", "c_sla_is_floor", 1.0],
            ["l", "c_sla", 290.0],
            ["l", "c_sla_is_floor", 1.0],
            ["l", "client_cpu_cores", 0.9],
        ],
        column_names=["run_id", "name", "value"],
    )
    try:
        (row,) = scaling_rows(c)
    finally:
        for table in ("experiment_runs", "runs", "run_results"):
            key = "experiment_id = 'cap'" if table == "experiment_runs" else "run_id IN ('d', 'c1', 'c2', 'c3', 'l')"
            c.command(f"ALTER TABLE {table} DELETE WHERE {key} SETTINGS mutations_sync = 2")
    assert row["figure"] == "capacity" and row["repeats"] == 3
    assert (row["orders_per_s"], row["orders_per_s_min"], row["orders_per_s_max"]) == (500, 400, 600)
    assert sorted(row["orders_per_s_runs"]) == [400, 600] and row["drain_orders_per_s"] == 5000
    # C_SLA from the open-loop searches that broke (c3's floor is not averaged in); Locust's unbroken run stays
    # beside it as a floor of its own
    assert row["sla_kind"] == "capacity" and row["c_sla"] == 1000 and row["c_sla_is_floor"] == 0
    assert row["locust_c_sla"] == 290 and row["locust_is_floor"] == 1
    assert row["http_client_cpu_cores"] == pytest.approx(0.1)
    assert row["max_cpu_cores"] == pytest.approx(0.97) and row["idle_cpu_cores"] == pytest.approx(0.2)


def test_analysis_prices_both_ways_and_says_where_adding_stops_paying(client):
    sheet = pricesheet.load()
    a = analysis.analyse(scaling_rows(client), sheet)
    s1, s2 = a.steps
    assert s1["usd_hour_fargate"] == pytest.approx(1 * 0.04048 + 8 * 0.004445)
    # F(2)/F(1) = 0.979 < 1: the second step bought less per dollar
    assert a.stops_paying.startswith("at step 2 (2 vCPU)")
    assert a.usl_orders is None and a.projection == []  # two levels: no fit
    text = " ".join(a.conclusions)
    assert "1,000 to 1,500 orders/s (x1.50)" in text and "Fargate" in text
    assert "A dollar-hour buys the most orders at 1 vCPU" in text
    # the unbroken run's 80 requests/s is a floor: reported as one, never as the step's C_SLA
    assert "No C_SLA at 2 vCPU (unbroken at 80 requests/s)" in text and "1 vCPU (unbroken" not in text
    assert "Drains that lasted under a minute measured a transient" in text and "2 vCPU 0.7 s" in text
    assert "the gateway held 50 requests/s" in text
    assert math.isnan(s2["c_sla"]) and s2["c_sla_floor"] == 80 and math.isnan(s2["usd_per_1000_requests_at_sla"])
    assert s1["c_sla"] == 50 and "c_sla_floor" not in s1


def _rows(vcpus_and_rates):
    sheet = pricesheet.load()
    out, prev = [], None
    for i, (v, x) in enumerate(vcpus_and_rates, 1):
        cost = sheet.on_demand.hourly(v, 8)
        f = x / cost
        out.append(
            {
                "step": i,
                "step_name": f"{v:g} vCPU",
                "vcpus": v,
                "memory_gb": 8.0,
                "repeats": 1,
                "usd_hour": cost,
                "orders_per_s": x,
                "orders_per_s_min": x * 0.95,
                "orders_per_s_max": x * 1.05,
                "pnl_per_s": x / 10,
                "pnl_per_s_min": x / 11,
                "pnl_per_s_max": x / 9,
                "c_sla": x / 20,
                "pnl_during_drain_per_s": 5.0,
                "http_client_cpu_cores": 0.3,
                "c_sla_min": x / 21,
                "c_sla_max": x / 19,
                "orders_per_s_per_usd_hour": f,
                "pnl_per_s_per_usd_hour": x / 10 / cost,
                "usd_per_million_orders": cost / (x * 3600) * 1e6,
                "usd_per_1000_requests_at_sla": cost / (x / 20 * 3600) * 1000 / 0.8,
                "scalability_vs_previous": None if prev is None else f / prev,
                "max_cpu_cores": v,
            }
        )
        prev = f
    return out


def test_four_steps_give_a_fit_a_held_out_test_and_a_projection_only_as_far_as_it_supports():
    truth = usl.Usl(lam=2000, sigma=0.1, kappa=0.01, unit=0.5, r2=1)
    a = analysis.analyse(_rows([(v, truth.throughput(v)) for v in (0.5, 1, 1.5, 2)]), pricesheet.load(), boots=20)
    assert a.usl_orders.sigma == pytest.approx(0.1, abs=2e-3) and a.usl_orders.kappa == pytest.approx(0.01, abs=2e-4)
    # 1.5 -> 2 vCPU was predicted from the rest: the model may reach as far beyond 2 (x 2/1.5), not to 64
    assert a.model_orders.holdout.passed and a.model_orders.holdout.error == pytest.approx(0, abs=0.01)
    assert [p["vcpus"] for p in a.projection] == [pytest.approx(2.667, abs=1e-3)]
    far = a.projection[-1]
    assert far["orders_per_s"] == pytest.approx(truth.throughput(far["vcpus"]), rel=0.02)
    assert far["orders_per_s_lo"] <= far["orders_per_s"] * (1 + 1e-9) and far["orders_per_s_hi"] >= far[
        "orders_per_s"
    ] * (1 - 1e-9)
    text = " ".join(a.conclusions)
    assert "A model, not a measurement" in text and "held out, the 2 vCPU step was predicted" in text
    assert "the idle stack's CPU was not measured" in text and "understate run-to-run spread" in text
    lines = labreport.summary(a)
    assert len(lines) == 2 and "0.5 vCPU" in lines[0] and "sigma 0.100" in lines[1] and "passed" in lines[1]


def test_the_page_is_self_contained_and_carries_every_chart_and_figure():
    rows = _rows([(0.5, 1000), (1, 1800), (1.5, 2300), (2, 2500)])
    rows[0]["c_sla"] = 0.0  # broke at once: no cost at SLA (NaN), which JSON cannot carry
    rows[0]["usd_per_1000_requests_at_sla"] = float("nan")
    a = analysis.analyse(rows, pricesheet.load(), boots=20)
    html = labreport.page(
        a,
        {
            "experiment_id": "e1",
            "orders": 1000,
            "tick_rate": 100,
            "warmup": 10,
            "slo_p95_ms": 200,
            "cores": 2,
            "memory_gb": 24,
            "data": "small",
        },
    )
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html
    assert "<script src" not in html and "<link" not in html
    start = html.index('<script id="lab-data" type="application/json">') + len(
        '<script id="lab-data" type="application/json">'
    )
    data = json.loads(html[start : html.index("</script>", start)])
    ids = [c["id"] for c in data["charts"]]
    assert ids == ["chart-orders", "chart-usl", "chart-pnl", "chart-scalability", "chart-sla"]
    for c in ids:
        assert f'id="{c}"' in html
    orders = data["charts"][0]
    assert [p["y"] for p in orders["series"][0]["points"]] == [1000, 1800, 2300, 2500]
    assert orders["series"][2]["model"] is True
    assert "Conclusions" in html and "A model, not a measurement" in html
    assert data["steps"][0]["usd_per_1000_requests_at_sla"] is None
    assert "NaN" not in html and "Infinity" not in html


def _pixels_of(png, hex_color: str, tolerance: int = 40) -> int:
    import matplotlib.image
    import numpy as np

    img = matplotlib.image.imread(str(png))[:, :, :3] * 255
    want = np.array([int(hex_color[i : i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(img - want).max(axis=2) < tolerance).sum())


def test_chromium_renders_every_chart_with_its_data(tmp_path):
    """The page in headless Chromium: each chart drew one mark per data point, the model line is there,
    and the screenshot shows the measured and the model colors. A step without a figure (C_SLA 0: broke
    at once) is left out of its chart, not drawn at zero, and does not stop the others."""
    import re

    from brokerstream.lab import screenshot

    rows = _rows([(0.5, 1000), (1, 1800), (1.5, 2300), (2, 2500)])
    rows[0]["c_sla"], rows[0]["usd_per_1000_requests_at_sla"] = 0.0, float("nan")
    rows[1]["pnl_per_s"] = rows[1]["pnl_per_s_min"] = rows[1]["pnl_per_s_max"] = float("nan")
    a = analysis.analyse(rows, pricesheet.load(), boots=20)
    page = tmp_path / "scaling.html"
    page.write_text(
        labreport.page(
            a,
            {
                "experiment_id": "e1",
                "orders": 1000,
                "tick_rate": 100,
                "warmup": 10,
                "slo_p95_ms": 200,
                "cores": 2,
                "memory_gb": 24,
                "data": "small",
            },
        )
    )
    dom = screenshot.dom(page)
    assert 'data-charts-drawn="5"' in dom

    def marks(chart_id: str) -> int:
        block = dom[dom.index(f'id="{chart_id}"') :]
        block = block[: block.index("</svg>")]
        return len(re.findall(r'class="point"', block))

    # orders: 4 measured on-demand + 4 Fargate + 4 model at the steps + the projection the test supports
    assert marks("chart-orders") == 4 + 4 + 4 + len(a.projection)
    usl_block = dom[dom.index('id="chart-usl"') :]
    usl_block = usl_block[: usl_block.index("</svg>")]
    assert marks("chart-usl") == 4 + 24  # the measured steps and the model line's points; the band draws none
    assert 'class="band-area"' in usl_block and 'class="point heldout"' in usl_block
    assert marks("chart-pnl") == 3 and marks("chart-sla") == 4  # a C_SLA of 0 is a figure: drawn at 0
    assert marks("chart-scalability") == 3  # the first step has no previous one
    assert 'class="empty"' not in dom
    png = screenshot.capture(page, tmp_path / "scaling.png")
    assert _pixels_of(png, labreport.COLORS["measured"]) > 200
    assert _pixels_of(png, labreport.COLORS["model"]) > 200
    assert _pixels_of(png, labreport.COLORS["pnl"]) > 50
    assert _pixels_of(png, labreport.COLORS["heldout"]) > 30


def test_the_usl_is_fitted_over_the_vcpu_steps_not_the_scale_out_ones():
    truth = usl.Usl(lam=2000, sigma=0.1, kappa=0.01, unit=0.5, r2=1)
    rows = _rows([(v, truth.throughput(v)) for v in (0.5, 1, 1.5, 2)] + [(2, 99_999)])
    for r in rows:
        r["stream_threads"], r["pnl_parallelism"] = 1, 1
    rows[-1]["stream_threads"], rows[-1]["pnl_parallelism"] = 2, 2
    a = analysis.analyse(rows, pricesheet.load(), boots=20)
    assert a.usl_orders.sigma == pytest.approx(0.1, abs=2e-3)  # the 99,999 of the scale-out step left out
    a = analysis.analyse([rows[-1]] + rows[:-1], pricesheet.load(), boots=20)  # listed first, still the odd one out
    assert a.usl_orders.sigma == pytest.approx(0.1, abs=2e-3)  # the 99,999 of the scale-out step left out


def test_scale_out_processes_are_left_out_of_the_fit_and_drawn_beside_scale_up_at_the_same_price():
    truth = usl.Usl(lam=2000, sigma=0.1, kappa=0.01, unit=0.5, r2=1)
    rows = _rows([(v, truth.throughput(v)) for v in (0.5, 1, 1.5, 2)] + [(2, 1500), (2, 2500)])
    for r in rows:
        r.update(stream_threads=1, pnl_parallelism=1, streams_instances=1, taskmanagers=1, connect_tasks=0)
    rows[4].update(
        step_name="2 vCPU, 2 streams instances", streams_instances=2, orders_per_s_min=1400, orders_per_s_max=1600
    )
    rows[5].update(step_name="2 vCPU, 4 sink tasks", connect_tasks=4)
    a = analysis.analyse(rows, pricesheet.load(), boots=20)
    assert a.usl_orders.sigma == pytest.approx(0.1, abs=2e-3)  # neither scale-out step is in the fit
    series = {s["name"]: s for s in labreport.charts(a)[0]["series"]}
    up = series["scale-up (vCPUs), on-demand prices"]["points"]
    out = series["scale-out (processes, tasks), on-demand prices"]["points"]
    assert [p["label"] for p in up] == ["0.5 vCPU", "1 vCPU", "1.5 vCPU", "2 vCPU"]
    assert [p["label"] for p in out] == ["2 vCPU, 2 streams instances", "2 vCPU, 4 sink tasks"]
    assert out[0]["x"] == up[-1]["x"]  # the same price: the same quota
    (said,) = [c for c in a.conclusions if c.startswith("Scale-out at the same price")]
    assert any(c.startswith("From 0.5 vCPU to 2 vCPU the") for c in a.conclusions)  # scale-up's ends only
    two = truth.throughput(2)
    assert f"2 vCPU, 2 streams instances 1,500 orders/s (1,400-1,600) against {two:,.0f}" in said
    assert f"(x{1500 / two:.2f})" in said and f"(x{2500 / two:.2f})" in said
    # no scale-out step: one series, named as before, and no sentence
    plain = analysis.analyse(rows[:4], pricesheet.load(), boots=20)
    assert "measured, on-demand prices" in {s["name"] for s in labreport.charts(plain)[0]["series"]}
    assert not [c for c in plain.conclusions if c.startswith("Scale-out")]


def test_a_step_whose_quota_and_client_exceed_the_machine_is_called_a_lower_bound():
    rows = _rows([(0.5, 1000), (1, 1800), (2, 2500)])
    rows[2]["http_client_cpu_cores"] = 0.6
    text = " ".join(analysis.analyse(rows, pricesheet.load(), cores=2, boots=20).conclusions)
    assert "At 2 vCPU the stack's quota plus the load client's CPU (0.60 cores) exceed this machine's 2 cores" in text
    assert "At 1 vCPU" not in text
    assert "3 resource levels: too few to hold one out" in text


def test_the_thesis_tick_rate_and_plan_limits():
    from brokerstream.lab.experiment import Plan, tick_rate_of

    assert tick_rate_of("thesis", 500) == 100 and tick_rate_of("THESIS", 2) == 1  # a tick per equity per 5 s
    assert tick_rate_of("10000", 500) == 10_000 and tick_rate_of(250.0, 500) == 250
    with pytest.raises(ValueError):
        tick_rate_of("-1", 500)
    with pytest.raises(ValueError):
        tick_rate_of("fast", 500)
    one = steps.parse("1", memory_gb=8, cores=2)
    with pytest.raises(ValueError, match="orders >= 100"):
        Plan(steps=one, orders=10)
    with pytest.raises(ValueError, match="P&L runs"):
        Plan(steps=one, pnl_seconds=1)


def test_the_architectures_are_compared_step_by_step_on_the_same_resources():
    from brokerstream.lab.analysis import compare, comparison_sentences

    streams = [
        {
            "step_name": "1 vCPU",
            "vcpus": 1.0,
            "memory_gb": 8.0,
            "usd_hour": 0.08,
            "orders_per_s": 4000.0,
            "pnl_during_drain_per_s": 20000.0,
        },
        {
            "step_name": "2 vCPU",
            "vcpus": 2.0,
            "memory_gb": 8.0,
            "usd_hour": 0.12,
            "orders_per_s": 9000.0,
            "pnl_during_drain_per_s": 50000.0,
        },
        {
            "step_name": "4 vCPU",
            "vcpus": 4.0,
            "memory_gb": 8.0,
            "usd_hour": 0.2,
            "orders_per_s": 1.0,
            "pnl_during_drain_per_s": 1.0,
        },
    ]
    baseline = [
        {
            "step_name": "1 vCPU",
            "vcpus": 1.0,
            "memory_gb": 8.0,
            "usd_hour": 0.08,
            "orders_per_s": 500.0,
            "pnl_during_drain_per_s": 10000.0,
        },
        {
            "step_name": "2 vCPU",
            "vcpus": 2.0,
            "memory_gb": 8.0,
            "usd_hour": 0.12,
            "orders_per_s": 900.0,
            "pnl_during_drain_per_s": float("nan"),
        },
    ]
    rows = compare(streams, baseline)
    assert [r["step_name"] for r in rows] == ["1 vCPU", "2 vCPU"]  # 4 vCPU: no baseline step to match
    assert rows[0]["orders_ratio"] == 8.0 and rows[1]["orders_ratio"] == 10.0
    assert rows[0]["pnl_ratio"] == 2.0 and math.isnan(rows[1]["pnl_ratio"])
    assert rows[1]["baseline_orders_per_usd_hour"] == 900.0 / 0.12
    text = comparison_sentences(rows)[0]
    assert "x8.0 at 1 vCPU, x10.0 at 2 vCPU" in text and "2 vCPU (7,500 orders/s per $/h)" in text
    assert comparison_sentences([]) == []
    a = analysis.analyse(_rows([(1, 4000), (2, 9000)]), pricesheet.load())
    assert len(labreport.summary(a, [])) == 2
    line = labreport.summary(a, rows)[2]
    assert line.endswith("1 vCPU 4,000 vs 500 (x8.0), 2 vCPU 9,000 vs 900 (x10.0)")


# --- the model that knows its limits (lab/model.py) ----------------------------------------------------


def _noisy_runs(truth, overhead, levels, repeats, noise, seed=3):
    import random

    rng = random.Random(seed)
    return [
        model.Run(q, overhead, truth.throughput(q - overhead) * (1 + rng.gauss(0, noise)))
        for q in levels
        for _ in range(repeats)
    ]


def test_the_fit_recovers_known_terms_once_the_idle_stacks_overhead_is_taken_out():
    # the flow gets quota minus 0.3 cores: fitted to the quota, the curve looks superlinear (sigma < 0)
    truth = usl.Usl(lam=1500, sigma=0.05, kappa=0.002, unit=0.2, r2=1)
    levels = (0.5, 1, 1.5, 2)
    exact = [model.Run(q, 0.3, truth.throughput(q - 0.3)) for q in levels]
    m = model.build(exact, boots=10)
    assert m.overhead == pytest.approx(0.3) and m.overhead_measured
    assert m.law.sigma == pytest.approx(0.05, abs=2e-3) and m.law.kappa == pytest.approx(0.002, abs=2e-4)
    assert m.throughput(1.7) == pytest.approx(truth.throughput(1.4), rel=1e-3)
    naive = usl.fit(list(levels), [r.throughput for r in exact])
    assert naive.sigma < 0  # what the overhead does to a fit that ignores it


def test_every_term_and_projection_has_a_band_from_the_repeats():
    truth = usl.Usl(lam=1500, sigma=0.05, kappa=0.002, unit=0.2, r2=1)
    m = model.build(_noisy_runs(truth, 0.3, (0.5, 1, 1.5, 2), repeats=3, noise=0.04), boots=60)
    assert m.repeats_known and "understate" not in m.verdict()
    for name, (value, lo, hi) in m.term_bands().items():
        assert lo <= value <= hi, name
    lo, hi = m.band(2.0)
    assert lo < m.throughput(2.0) < hi and 0 < (hi - lo) / m.throughput(2.0) < 0.2
    assert m.throughput(2.0) == pytest.approx(truth.throughput(1.7), rel=0.05)


def test_the_held_out_check_flags_a_model_that_mispredicts_and_then_draws_nothing_beyond_the_steps():
    truth = usl.Usl(lam=1500, sigma=0.05, kappa=0.002, unit=0.2, r2=1)
    runs = _noisy_runs(truth, 0.3, (0.5, 1, 1.5), repeats=2, noise=0.02)
    runs += [model.Run(2.0, 0.3, truth.throughput(1.7) * 0.6)] * 2  # the largest step collapsed
    m = model.build(runs, boots=30)
    assert m.holdout is not None and not m.holdout.passed and m.holdout.error > 0.15
    assert m.supported_to == 2.0
    assert "fails its test and is not drawn beyond the measured steps" in m.verdict()
    good = model.build(_noisy_runs(truth, 0.3, (0.5, 1, 1.5, 2), repeats=2, noise=0.02), boots=30)
    assert good.holdout.passed and good.supported_to == pytest.approx(2 * 2 / 1.5)


def test_the_idle_stack_is_the_quietest_window_after_the_backlog_settled():
    from brokerstream.lab import experiment

    # cumulative CPU seconds read at each window's edges: 0.9, 0.3 and 0.5 cores over 2 s windows
    counts = [0.0, 0.0, 1.8, 1.8, 2.4, 2.4, 3.4]  # a presence check, then each window's two edges
    readings = iter([{"kafka": c} for c in counts])

    class Groups:
        def cpu_seconds(self):
            return next(readings)

    times = iter([0.0, 2.0, 2.0, 4.0, 4.0, 6.0])
    settled = []
    cores = experiment.idle_cores(
        Groups(), 6, settle=lambda: settled.append(True), windows=3, clock=lambda: next(times), sleep=lambda s: None
    )
    assert settled == [True]  # the backlog first
    assert cores == pytest.approx(0.3)  # the quietest window, not the mean: a compaction is not overhead

    class NoCount:
        def cpu_seconds(self):
            return {}

    assert experiment.idle_cores(NoCount(), 10, sleep=lambda s: None) is None


def test_an_idle_stack_that_fills_its_quota_gives_no_overhead_figure():
    rows = _rows([(0.5, 1000), (1, 1800), (1.5, 2300), (2, 2500)])
    for r, idle in zip(rows, (0.5, 0.3, 0.3, 0.3)):
        r["idle_cpu_cores"] = idle
    a = analysis.analyse(rows, pricesheet.load(), boots=10)
    assert a.model_orders.overhead == pytest.approx(0.3)  # the saturated 0.5 of 0.5 vCPU is left out
    assert "With no load the stack still used its whole quota at 0.5 vCPU (0.50 cores)" in " ".join(a.conclusions)


@pytest.mark.parametrize(
    "orders, seconds, last, vcpus, expected",
    [
        (10_000, 0, (1.0, 5000.0), 2.0, 10_000),  # no target: exactly the orders asked for
        (10_000, 60, None, 2.0, 10_000),  # nothing measured yet
        (10_000, 60, (1.0, 5000.0), 2.0, 600_000),  # 5,000/s at 1 vCPU -> about 10,000/s at 2, for 60 s
        (10_000, 60, (2.0, 100.0), 1.0, 10_000),  # never fewer than asked for
        (10_000, 60, (1.0, 1e9), 2.0, 5_000_000),  # at most the cap
        (10_000, 60, (1.0, 0.0), 2.0, 10_000),  # a failed measurement sizes nothing
    ],
)
def test_a_drain_is_sized_to_last_about_its_seconds(orders, seconds, last, vcpus, expected):
    from brokerstream.lab import experiment

    assert experiment.drain_orders(orders, seconds, last, vcpus) == expected


def test_three_levels_cannot_be_tested_so_nothing_is_projected():
    truth = usl.Usl(lam=1500, sigma=0.05, kappa=0.002, unit=0.2, r2=1)
    a = analysis.analyse(_rows([(v, truth.throughput(v)) for v in (0.5, 1, 2)]), pricesheet.load(), boots=10)
    assert a.model_orders.holdout is None and a.projection == []
    assert "too few to hold one out" in " ".join(a.conclusions)


def test_a_floor_is_never_labelled_c_sla_anywhere_in_the_report():
    rows = _rows([(0.5, 1000), (1, 1800), (1.5, 2300), (2, 2500)])
    rows[3]["c_sla"], rows[3]["c_sla_is_floor"] = 290.0, 1
    rows[3]["usd_per_1000_requests_at_sla"] = 1e-4
    a = analysis.analyse(rows, pricesheet.load(), boots=10)
    page = labreport.page(a, {"experiment_id": "e1", "cores": 2, "memory_gb": 24})
    start = page.index('<script id="lab-data" type="application/json">')
    data = json.loads(page[page.index(">", start) + 1 : page.index("</script>", start)])
    sla = next(c for c in data["charts"] if c["id"] == "chart-sla")
    named = {s["name"]: [p["y"] for p in s["points"]] for s in sla["series"]}
    assert 290.0 not in named["C_SLA"] and named["unbroken (the load never broke it): a floor, not a C_SLA"] == [290.0]
    step = data["steps"][3]
    assert step["c_sla"] is None and step["c_sla_floor"] == 290.0 and step["usd_per_1000_requests_at_sla"] is None
    assert "held 290" not in page and "No C_SLA at 2 vCPU (unbroken at 290 requests/s)" in page


def test_capacity_steps_are_named_as_such_and_a_search_that_never_broke_is_a_floor():
    rows = _rows([(0.5, 300), (1, 700), (1.5, 1000), (2, 1200)])
    for r in rows:
        r.update(figure="capacity", sla_kind="capacity", c_sla=2 * r["orders_per_s"], locust_c_sla=290.0)
        r.update(accept_p99_ms_at_capacity=40.0 / r["vcpus"], visible_p99_ms_at_capacity=250.0)
        r["locust_is_floor"] = 1
    rows[3]["c_sla_is_floor"] = 1
    a = analysis.analyse(rows, pricesheet.load(), boots=10)
    text = " ".join(a.conclusions)
    assert (
        "the sustained capacity through the gateway (open-loop rungs held to loadtest/slo.yaml) went from 300" in text
    )
    assert "No C_SLA at 2 vCPU (unbroken at 2,400 requests/s): the capacity search's highest rung" in text
    assert (
        "loadtest/slo.yaml's flow targets, open loop: each order is two requests" in text
        and "held 600, 1,400, 2,000" in text
    )
    assert "Locust's breaking point beside the open-loop search: 0.5 vCPU 290 requests/s (unbroken: a floor)" in text
    assert "What members saw at each capacity (accept / visible p99): 0.5 vCPU 80 / 250 ms, 1 vCPU 40 / 250 ms" in text
    what = labreport.what_ran({"drains": False, "capacity": True, "capacity_seconds": 20, "locust": False})
    assert "open-loop rungs of 20 s" in what and "drained" not in what and "Locust" not in what
    assert "partitions" not in what  # rows from before the stack's shape was recorded say nothing of it
    shaped = labreport.what_ran({"capacity": True, "topic_partitions": 4, "kafka_brokers": 3, "locust": False})
    assert "The stack: 4 partitions per flow topic, 3 Kafka brokers" in shaped
