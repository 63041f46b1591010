"""The scaling lab on the real stack: a small experiment of three resource steps, the limits really in
force during each step and gone after, every run stored with its step, and the report rendered by
headless Chromium with a USL fit."""

from __future__ import annotations

import re

import pytest

from brokerstream.lab import experiment, labreport, screenshot, steps
from brokerstream.launcher.cpugroups import CpuGroups
from brokerstream.metrics import store


@pytest.fixture(scope="module")
def lab(stack, world, tmp_path_factory):
    groups = CpuGroups.of(stack)
    if not groups.enabled or groups.memory_parent is None:
        pytest.skip("needs writable cgroup v1 cpu and memory hierarchies (root)")
    seen = []

    def progress(line: str) -> None:
        print(line)
        if line.startswith(("[drain] starting the streams app", "[pnl] measuring", "[load] run ")):
            seen.append((line[:16], groups.quota_vcpus(), groups.memory_limit_gb()))

    plan = experiment.Plan(
        steps=steps.parse("0.5,1,2", memory_gb=10),
        orders=3_000,
        warmup=500,
        tick_rate="thesis",
        start_users=4,
        step_users=8,
        hold_seconds=4,
        max_users=28,
        slo_p95_ms=400,
        pnl_positions=2_000,
        pnl_tick_rate=2_000,
        pnl_seconds=6,
        idle_seconds=3,
        settle_seconds=5,
        drain_seconds=2,
    )
    experiment_id = experiment.run(stack, plan, progress=progress)
    out = tmp_path_factory.mktemp("report")
    page = labreport.run(stack, out)
    return experiment_id, seen, groups, page


def test_each_step_ran_under_its_limits_and_they_are_lifted_after(lab):
    _, seen, groups, _ = lab
    # per step: the drain's restart, the P&L run and the Locust run, each under that step's limits; the
    # first step also calibrates the drains' size with a short drain of its own
    assert [(q, m) for _, q, m in seen] == [(0.5, 10)] + [(v, 10) for v in (0.5, 1, 2) for _ in range(3)]
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
                "ON res.run_id = e.run_id WHERE e.experiment_id = {e:String} AND res.name = 'drain_orders_per_s'",
                parameters={"e": experiment_id},
            ).result_rows
        )
    finally:
        client.close()
    assert [(step, kind) for step, kind, *_ in rows] == [(s, k) for s in (1, 2, 3) for k in ("drain", "http", "pnl")]
    for step, kind, quota, priced_vcpus, priced_memory, cores in rows:
        assert priced_vcpus == quota and priced_memory == 10  # each run is priced by what its step gave
        assert 0 < cores <= quota * 1.10, f"step {step} {kind}: {cores:.2f} cores used under a {quota} vCPU quota"
    assert len(figures) == 3 and all(v > 0 for v in figures.values())
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
    assert len(revalued) == 3 and all(v > 0 for (v,) in revalued)


def test_drains_are_sized_to_last_about_their_seconds_from_the_rate_measured_before(stack, lab):
    client = store.connect(stack)
    try:
        orders = client.query(
            "SELECT vcpus, orders FROM experiment_runs FINAL WHERE experiment_id = {e:String} AND kind = 'drain' "
            "ORDER BY vcpus",
            parameters={"e": lab[0]},
        ).result_rows
    finally:
        client.close()
    # never fewer than asked for (3,000); 2 s at the rate a quota of 2 vCPU drains needs more
    assert [v for v, _ in orders] == [0.5, 1, 2] and all(n >= 3_000 for _, n in orders)
    assert orders[2][1] > 3_000, orders


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
    assert [v for v, _ in idle] == [0.5, 1, 2]
    assert all(0 < cores <= quota * 1.10 for quota, cores in idle), idle


def test_the_report_has_three_steps_a_usl_fit_and_renders_in_chromium(lab, tmp_path):
    page = lab[3]
    dom = screenshot.dom(page)
    assert 'data-charts-drawn="5"' in dom and 'class="empty"' not in dom
    orders = dom[dom.index('id="chart-orders"') :]
    orders = orders[: orders.index("</svg>")]
    assert len(re.findall(r'class="point"', orders)) >= 3 + 3  # measured at both prices, then the model
    assert 'class="series line model"' in orders
    assert "Universal Scalability Law fits the drain after taking out the idle stack" in dom
    # three levels cannot be tested by holding one out: the model is drawn with its band, not beyond the steps
    assert "too few to hold one out" in dom and 'class="band-area"' in dom
    png = screenshot.capture(page, tmp_path / "scaling.png")
    assert png.stat().st_size > 20_000
