"""The cost report reads what the main job stores: a lab step's capacity search and P&L run carry their figures
in run_results (no stage counters), and the report shows them per run, per step and per architecture, as the
scaling report does (embedded ClickHouse, hand-computed values)."""

from __future__ import annotations

import datetime as dt

import pytest

from brokerstream.metrics import pricesheet, store

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def query(client, name, **numbers):
    cols, rows = store.run_query(client, store.named_queries()[name], **numbers)
    return [dict(zip(cols, r)) for r in rows]


RUN_COLUMNS = [
    "run_id", "kind", "shape", "started", "ended", "scale_step", "partitions", "stream_threads", "instances",
    "flink_parallelism", "vcpus", "memory_gb", "instance_type", "heap_sizes", "workload", "seed", "code_version",
    "config",
]  # fmt: skip


# what each lab run is in `runs`: a capacity search is a `bench system` run
RUN_KIND = {"capacity": "system", "pnl": "pnl"}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """Two lab steps of each architecture, as the main job stores them: a capacity search (its figures in
    run_results, no stage counters) and a P&L run per step; one search never broke (a floor)."""
    from brokerstream.common.config import Config

    c = store.connect(Config({"BS_CLICKHOUSE_DSN": f"chdb://{tmp_path_factory.mktemp('lab')}"}))
    store.apply_ddl(c)
    pricesheet.store(c, pricesheet.load())
    runs = [  # run, architecture, step, kind, vcpus, figures
        ("s1c", "streams", 1, "capacity", 1.0, {"capacity_orders_per_s": 900.0, "c_sla_is_floor": 0.0}),
        ("s1p", "streams", 1, "pnl", 1.0, {"positions_revalued_per_s": 30_000.0}),
        ("s2c", "streams", 2, "capacity", 2.0, {"capacity_orders_per_s": 1_500.0, "c_sla_is_floor": 0.0}),
        ("s2p", "streams", 2, "pnl", 2.0, {"positions_revalued_per_s": 50_000.0}),
        ("b1c", "baseline", 1, "capacity", 1.0, {"capacity_orders_per_s": 120.0, "c_sla_is_floor": 0.0}),
        ("b2c", "baseline", 2, "capacity", 2.0, {"capacity_orders_per_s": 400.0, "c_sla_is_floor": 1.0}),
        ("b3c", "baseline", 3, "capacity", 2.0, {"c_sla_is_floor": 0.0}),  # every rung failed: a ceiling
    ]
    c.insert(
        "runs",
        [
            [r, RUN_KIND[kind], kind, T0 + dt.timedelta(minutes=i), T0 + dt.timedelta(minutes=i + 1), step, 4, 1,
             1, 1, v, 10.0, "", "{}", "w", 1, "test", "{}"]
            for i, (r, _, step, kind, v, _) in enumerate(runs)
        ],
        column_names=RUN_COLUMNS,
    )  # fmt: skip
    c.insert(
        "run_results",
        [[r, name, value] for r, *_, figures in runs for name, value in figures.items()],
        column_names=["run_id", "name", "value"],
    )
    c.insert(
        "experiment_runs",
        [[f"e-{a}", T0, step, f"{v:g} vCPU", 1, kind, r, v, 10.0, a] for r, a, step, kind, v, _ in runs],
        column_names=["experiment_id", "started", "step", "step_name", "repeat", "kind", "run_id", "vcpus",
                      "memory_gb", "architecture"],
    )  # fmt: skip
    # the ceiling's rungs were counted by the collector: 1,000 orders over 10 s, which is no capacity
    c.insert(
        "stage_samples",
        [["b3c", T0, "orders_accepted", 0], ["b3c", T0 + dt.timedelta(seconds=10), "orders_accepted", 1000]],
        column_names=["run_id", "ts", "stage", "total"],
    )
    yield c
    c.close()


def test_the_cost_report_reads_a_lab_steps_figures_for_both_architectures(lab):
    per_run = {r["run_id"]: r for r in query(lab, "throughput_per_dollar")}
    usd_1 = 1 * 0.04656 + 10 * 0.00511
    assert per_run["s1c"]["orders_per_s"] == pytest.approx(900) and per_run["s1c"]["architecture"] == "streams"
    assert per_run["s1c"]["orders_per_s_per_usd_hour"] == pytest.approx(900 / usd_1, rel=1e-5)
    assert per_run["s1p"]["pnl_per_s"] == pytest.approx(30_000) and per_run["s1p"]["orders_per_s"] == 0
    assert per_run["b1c"]["architecture"] == "baseline"
    assert "b2c" not in per_run  # a floor is no capacity: the report shows no figure for it
    assert "b3c" not in per_run  # nor a ceiling, whose rungs' average is not what the step sustains
    curve = {(r["architecture"], r["scale_step"]): r for r in query(lab, "cost_curve")}
    assert set(curve) == {("streams", 1), ("streams", 2), ("baseline", 1)}
    s1, s2 = curve["streams", 1], curve["streams", 2]
    assert s1["orders_per_s"] == pytest.approx(900) and s1["pnl_per_s"] == pytest.approx(30_000)
    assert s2["throughput_gain_pct"] == pytest.approx((1_500 / 900 - 1) * 100, rel=1e-5)
    assert s2["pnl_per_s_per_usd_hour"] == pytest.approx(50_000 / (2 * 0.04656 + 10 * 0.00511), rel=1e-5)
    assert curve["baseline", 1]["throughput_gain_pct"] == 0
    productivity = {(r["architecture"], r["scale_step"]) for r in query(lab, "productivity", value_per_response=0.001)}
    assert productivity == {("streams", 1), ("streams", 2), ("baseline", 1)}


def test_per_run_the_cost_report_and_the_scaling_report_agree(lab):
    per_run = {r["run_id"]: r for r in query(lab, "throughput_per_dollar")}
    (s1, s2) = query(lab, "scaling_steps", headroom=0.2, baseline=0, partitions=-1, brokers=-1)
    assert s1["orders_per_s"] == per_run["s1c"]["orders_per_s"] and s1["pnl_per_s"] == per_run["s1p"]["pnl_per_s"]
    assert s2["orders_per_s"] == per_run["s2c"]["orders_per_s"] and s2["pnl_per_s"] == per_run["s2p"]["pnl_per_s"]
