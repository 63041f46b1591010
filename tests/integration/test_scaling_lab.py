"""The scaling lab on the real stack, shaped as the main job runs it: a scale-up step and a scale-out one
(two streams app instances, two TaskManagers, two tasks per sink), each with its idle measurement, a P&L
run and a capacity search through the gateway; the limits and processes really in force during each step
and gone after, every run stored with its step, and the report rendered by headless Chromium naming each
step's capacity, floor or ceiling. (Drains are the same runs as `load --shape drain`; Locust's breaking
point has its own test in test_load_run.)"""

from __future__ import annotations

import pytest

from brokerstream.lab import experiment, labreport, screenshot, steps
from brokerstream.launcher.cpugroups import CpuGroups
from brokerstream.loadtest.bench.capacity import Search
from brokerstream.metrics import store


@pytest.fixture(scope="module")
def lab(stack, world, tmp_path_factory):
    groups = CpuGroups.of(stack)
    if not groups.enabled or groups.memory_parent is None:
        pytest.skip("needs writable cgroup v1 cpu and memory hierarchies (root)")
    seen, shapes = [], []

    def progress(line: str) -> None:
        print(line)
        if line.startswith(("[pnl] measuring", "[system] step 1:")):
            seen.append((line[:16], groups.quota_vcpus(), groups.memory_limit_gb()))
        if line.startswith("[system] step 1:"):
            shapes.append(running_shape(stack))

    plan = experiment.Plan(
        # at 0.5 vCPU the idle stack alone spends the quota (no capacity there: the report says so)
        steps=steps.parse("1,2:i2:f2:c2", memory_gb=10),
        tick_rate="thesis",
        pnl_positions=2_000,
        pnl_tick_rate=2_000,
        pnl_seconds=5,
        idle_seconds=2,
        settle_seconds=3,
        drains=False,
        locust=False,
        # rungs of 6 s from 100 orders/s per vCPU, up or down by 3, no bisection: at most three per step. Short
        # rungs on a shared machine may well end in a floor or a ceiling: the tests check that what was stored
        # is what the rungs found (the model's fit and bands are tested with known data in tests/unit)
        capacity_seconds=6,
        capacity_per_vcpu=100,
        capacity_factor=3,
        capacity_refine=0,
        capacity_rungs=3,
        warm_seconds=6,
    )
    experiment_id = experiment.run(stack, plan, progress=progress)
    shapes.append(running_shape(stack))
    out = tmp_path_factory.mktemp("report")
    page = labreport.run(stack, out)
    return experiment_id, seen, groups, page, shapes


def running_shape(cfg) -> tuple:
    """The streams app instances and TaskManagers whose processes run, and the sinks' task counts."""
    from brokerstream.clients.connectors import Connect, load_specs
    from brokerstream.launcher.stack import Stack

    stack = Stack(cfg)
    live = lambda group: [n for n in stack.expand([group]) if stack.layout.pidfile(n).live_pid()]  # noqa: E731
    connect = Connect(cfg.connect_url)
    tasks = sorted(
        len([t for t in connect.status(s.name)["tasks"] if t["state"] == "RUNNING"])
        for s in load_specs()
        if s.name.startswith("sink-")
    )
    return live("streams"), live("flink-taskmanager"), tasks


def test_a_scale_out_step_runs_more_processes_and_tasks_and_the_configured_ones_come_back(stack, lab):
    first, scaled, after = lab[4]
    assert first == (["streams"], ["flink-taskmanager"], [1, 1])
    assert scaled == (["streams", "streams-2"], ["flink-taskmanager", "flink-taskmanager-2"], [2, 2])
    assert after == first
    client = store.connect(stack)
    try:
        rows = client.query(
            "SELECT step, any(streams_instances), any(taskmanagers), any(connect_tasks), "
            "any(JSONExtractInt(conditions, 'tick_partitions')) FROM experiment_runs FINAL "
            "WHERE experiment_id = {e:String} GROUP BY step ORDER BY step",
            parameters={"e": lab[0]},
        ).result_rows
    finally:
        client.close()
    assert rows == [(1, 1, 1, 0, 1), (2, 2, 2, 2, 1)]  # the tick topics' one partition is the shape


def test_each_step_ran_under_its_limits_and_they_are_lifted_after(lab):
    _, seen, groups, _, _ = lab
    # per step: the P&L run and the capacity search's first rung, each under that step's limits
    assert [(q, m) for _, q, m in seen] == [(v, 10) for v in (1, 2) for _ in range(2)]
    assert groups.quota_vcpus() is None and groups.memory_limit_gb() is None
    assert not groups.memory_parent.exists()


def test_every_run_is_stored_with_its_step_and_the_cpu_it_used_stays_within_the_quota(stack, lab):
    experiment_id = lab[0]
    client = store.connect(stack)
    try:
        rows = client.query(
            "SELECT e.step, e.kind, e.vcpus, r.vcpus, r.memory_gb, c.stack_cpu_cores FROM experiment_runs AS e FINAL "
            "INNER JOIN runs AS r FINAL ON r.run_id = e.run_id LEFT JOIN run_stack_cpu AS c ON c.run_id = e.run_id "
            "WHERE e.experiment_id = {e:String} ORDER BY e.step, e.kind",
            parameters={"e": experiment_id},
        ).result_rows
        figures = dict(
            client.query(
                "SELECT e.run_id, res.value FROM experiment_runs AS e FINAL INNER JOIN run_results AS res FINAL "
                "ON res.run_id = e.run_id WHERE e.experiment_id = {e:String} AND res.name = 'capacity_orders_per_s'",
                parameters={"e": experiment_id},
            ).result_rows
        )
    finally:
        client.close()
    assert [(step, kind) for step, kind, *_ in rows] == [(s, k) for s in (1, 2) for k in ("capacity", "pnl")]
    for step, kind, quota, priced_vcpus, priced_memory, cores in rows:
        assert priced_vcpus == quota and priced_memory == 10  # each run is priced by what its step gave
        assert 0 < cores <= quota * 1.10, f"step {step} {kind}: {cores:.2f} cores used under a {quota} vCPU quota"
    assert len(figures) <= 2 and all(v > 0 for v in figures.values())
    client = store.connect(stack)
    try:
        revalued = client.query(
            "SELECT res.value FROM experiment_runs AS e FINAL INNER JOIN run_results AS res FINAL ON res.run_id = "
            "e.run_id "
            "WHERE e.experiment_id = {e:String} AND res.name = 'positions_revalued_per_s'",
            parameters={"e": experiment_id},
        ).result_rows
    finally:
        client.close()
    assert len(revalued) == 2 and all(v > 0 for (v,) in revalued)


def _capacity_runs(stack, experiment_id):
    """Per capacity run: its step's vCPUs, its stored figures, and its rungs (rate, held) in order."""
    client = store.connect(stack)
    try:
        runs = client.query(
            "SELECT run_id, vcpus FROM experiment_runs FINAL WHERE experiment_id = {e:String} AND kind = 'capacity' "
            "ORDER BY vcpus",
            parameters={"e": experiment_id},
        ).result_rows
        out = []
        for run_id, vcpus in runs:
            figures = dict(
                client.query(
                    "SELECT name, value FROM run_results FINAL WHERE run_id = {r:String}", parameters={"r": run_id}
                ).result_rows
            )
            rungs = client.query(
                "SELECT offered_rate, sustained, mode FROM system_steps WHERE run_id = {r:String} ORDER BY step",
                parameters={"r": run_id},
            ).result_rows
            out.append((vcpus, figures, rungs))
        return out
    finally:
        client.close()


def test_each_step_searched_its_capacity_through_the_gateway_and_stored_what_its_rungs_found(stack, lab):
    found = _capacity_runs(stack, lab[0])
    assert [v for v, _, _ in found] == [1, 2]
    for vcpus, figures, rungs in found:
        assert rungs and all(mode == "http" for _, _, mode in rungs)  # every rung through the gateway
        assert len(rungs) <= 3
        # the stored outcome is the search's reading of its own rungs: a capacity bracketed, a floor or a ceiling
        expect = Search.found([(rate, bool(held)) for rate, held, _ in rungs])
        assert figures.get("capacity_orders_per_s") == expect.rate
        assert figures.get("capacity_ceiling") == expect.ceiling
        assert figures["c_sla_is_floor"] == float(expect.is_floor)
        if expect.rate:
            assert figures["c_sla"] == 2 * expect.rate and figures["accept_p99_ms_at_capacity"] > 0
        assert 0 < figures["busiest_rung_cores"] <= vcpus * 1.10
        # the rungs followed the search: each next rate is what it asked for after the ones before
        search = Search(start=rungs[0][0], factor=3, refine=0, max_rungs=3)
        for k in range(1, len(rungs)):
            assert rungs[k][0] == pytest.approx(search.next_rate([(r, bool(h)) for r, h, _ in rungs[:k]]))


def test_each_step_measured_the_idle_stack_under_its_quota(stack, lab):
    client = store.connect(stack)
    try:
        idle = client.query(
            "SELECT e.vcpus, res.value FROM experiment_runs AS e FINAL INNER JOIN run_results AS res FINAL "
            "ON res.run_id = e.run_id WHERE e.experiment_id = {e:String} AND res.name = 'idle_cpu_cores' "
            "ORDER BY e.vcpus",
            parameters={"e": lab[0]},
        ).result_rows
    finally:
        client.close()
    # the stack is never idle at zero (brokers, Connect, the P&L job) and cannot pass its quota
    assert [v for v, _ in idle] == [1, 2]
    assert all(0 < cores <= quota * 1.10 for quota, cores in idle), idle


def test_the_report_names_each_steps_capacity_or_what_it_found_and_renders_in_chromium(stack, lab, tmp_path):
    page = lab[3]
    dom = screenshot.dom(page)
    charts = dom.count('<div class="chart" id="chart-')
    assert charts >= 4 and f'data-charts-drawn="{charts}"' in dom  # every chart the data allows, drawn
    assert "sustained capacity through the gateway" in dom and "open-loop rungs of 6 s" in dom
    for (_, figures, _), name in zip(
        _capacity_runs(stack, lab[0]),
        ["1 vCPU", "2 vCPU, 2 streams instances, 2 TaskManagers, 2 sink tasks"],
        strict=True,
    ):
        assert name in dom
        if figures["c_sla_is_floor"]:  # a search that never broke is named a floor, never a C_SLA
            assert "No C_SLA at" in dom and f"{name} (unbroken at" in dom
    png = screenshot.capture(page, tmp_path / "scaling.png")
    assert png.stat().st_size > 20_000


def test_the_cost_report_shows_each_runs_figure_as_the_scaling_report_stored_it(stack, lab, tmp_path):
    from brokerstream.metrics import report

    client = store.connect(stack)
    try:
        runs = client.query(
            "SELECT e.run_id, e.kind, res.name, res.value FROM experiment_runs AS e FINAL "
            "INNER JOIN run_results AS res FINAL ON res.run_id = e.run_id WHERE e.experiment_id = {e:String} "
            "AND res.name IN ('capacity_orders_per_s', 'c_sla_is_floor', 'positions_revalued_per_s')",
            parameters={"e": lab[0]},
        ).result_rows
    finally:
        client.close()
    figures: dict[str, dict] = {}
    for run_id, kind, name, value in runs:
        figures.setdefault(run_id, {"kind": kind})[name] = value
    tables = report.run(stack, tmp_path, printer=lambda _: None)
    _, cols, rows = tables["throughput_per_dollar"]
    shown = {r[0]: dict(zip(cols, r)) for r in rows}
    pnl_runs = [r for r, f in figures.items() if f["kind"] == "pnl"]
    assert pnl_runs and all(shown[r]["pnl_per_s"] == round(figures[r]["positions_revalued_per_s"], 3) for r in pnl_runs)
    for run_id, f in figures.items():
        if f["kind"] != "capacity":
            continue
        if f.get("capacity_orders_per_s", 0) > 0 and not f.get("c_sla_is_floor"):
            assert shown[run_id]["orders_per_s"] == round(f["capacity_orders_per_s"], 3)
            assert shown[run_id]["orders_per_s_per_usd_hour"] > 0
        else:  # a floor or nothing held: no orders figure, never a 0 drawn as one
            assert run_id not in shown or shown[run_id]["orders_per_s"] == 0
    _, curve_cols, curve = tables["cost_curve"]
    assert {dict(zip(curve_cols, r))["architecture"] for r in curve} >= {"streams"}
