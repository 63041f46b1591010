"""The system benchmark's bookkeeping: lag trends, verdicts, hop shares, the ceiling tool's output."""

import pytest

from brokerstream.loadtest.bench import ceiling, probe, system

SLO = {
    "accept_p99_ms": 20,
    "visible_p99_ms": 300,
    "committed_p99_ms": 1000,
    "tick_to_pnl_over_window_p99_ms": 1000,
    "position_to_postgres_p99_ms": 5000,
    "lag_growth_per_s": 200,
    "lag_floor_records": 20000,
}


def step(**over) -> system.StepResult:
    base = dict(
        index=1,
        mode="kafka",
        rate=1000.0,
        seconds=30,
        achieved_rate=1000.0,
        sent=30000,
        missing=0,
        duplicates=0,
        errors={},
        outcomes={"accepted": 30000, "rejected": 0},
        accept_ms={"count": 30000, "p50": 2.0, "p99": 9.0},
        visible_ms={"count": 30000, "p99": 250.0},
        committed_ms={"count": 30000, "p50": 120.0, "p99": 400.0},
        tick_to_pnl_ms={"count": 100, "p99": 1500.0},
        order_to_postgres_ms={"count": 30000, "p99": 900.0},
        position_to_postgres_ms={"count": 900, "p99": 800.0},
        hops_ms={},
        cpu_cores={"streams": 0.5},
        rss_mb={},
        client_cpu_cores=0.1,
        ticks_cpu_cores=0.1,
        max_late_ms=3.0,
        offsets_per_order=4.0,
        lags={"brokerstream-orders": {"grows": False}},
    )
    base.update(over)
    return system.StepResult(**base)


def test_slope_of_a_rising_lag_is_its_rate():
    assert probe.slope([(t, 500 * t) for t in range(10)]) == pytest.approx(500)
    assert probe.slope([(t, 7) for t in range(10)]) == 0
    assert probe.slope([(0, 1), (1, 5)]) == 0  # too few points to call a trend


def test_a_lag_grows_only_when_it_rises_and_ends_above_the_floor():
    rising = [(t, 1000 * t) for t in range(30)]
    wobble = [(t, 30000 if t % 2 else 10000) for t in range(30)]
    small = [(t, 100 * t) for t in range(30)]
    lags = system.lag_report({"a": rising, "b": wobble, "c": small}, SLO)
    assert lags["a"]["grows"] and lags["a"]["end"] == 29000
    assert not lags["b"]["grows"]
    assert not lags["c"]["grows"]


def test_a_step_holding_every_target_is_sustained():
    s = step()
    system.judge(s, SLO, window_ms=1000)
    assert s.sustained and s.failures == []


@pytest.mark.parametrize(
    "over, expect",
    [
        ({"missing": 3}, "3 orders without a result"),
        ({"lags": {"connect-sink-marks": {"grows": True}}}, "lag grows: connect-sink-marks"),
        ({"committed_ms": {"count": 10, "p99": 1500.0}}, "commit p99"),
        ({"tick_to_pnl_ms": {"count": 10, "p99": 2500.0}}, "tick>P&L p99"),
        ({"position_to_postgres_ms": {"count": 10, "p99": 6000.0}}, "position>Postgres p99"),
        ({"achieved_rate": 800.0}, "client fell behind"),
        ({"max_late_ms": 2500.0}, "client fell behind"),
    ],
)
def test_each_missed_target_is_named(over, expect):
    s = step(**over)
    system.judge(s, SLO, window_ms=1000)
    assert not s.sustained
    assert any(expect in f for f in s.failures), s.failures


def test_http_steps_are_also_held_to_the_gateway_targets():
    s = step(mode="http", accept_ms={"count": 5, "p99": 35.0}, visible_ms={"count": 5, "p99": 200.0})
    system.judge(s, SLO, window_ms=1000)
    assert s.sustained and not s.gateway_ok
    assert s.http_failures == ["accept p99 35ms > 20 ms"]


def test_capacities_are_the_highest_passing_steps():
    steps = [
        step(index=1, mode="http", rate=500, achieved_rate=500.0),
        step(index=2, mode="kafka", rate=5000, achieved_rate=4990.0),
        step(index=3, mode="kafka", rate=10000, achieved_rate=9990.0, missing=5),
    ]
    for s in steps:
        system.judge(s, SLO, 1000)
    result = system.SystemResult("r", 10000, 0, 1000, 100_000.0, steps, {})
    assert result.sustained_capacity == 4990.0
    assert result.gateway_capacity == 500.0
    assert any("sustained capacity / ceiling = 0.050" in line for line in result.lines())


def test_hop_shares_split_computing_from_waiting():
    s = step(
        hops_ms={
            "gateway": {"count": 9, "mean": 1.0, "p99": 2.0},
            "queue": {"count": 9, "mean": 2.0, "p99": 4.0},
            "decide": {"count": 9, "mean": 1.0, "p99": 1.0},
            "commit": {"count": 9, "mean": 6.0, "p99": 9.0},
        }
    )
    lines = system.hop_lines(s)
    assert "computing 20 %, waiting and communication 80 %" in lines[0]
    assert any(line.split()[0] == "commit" and line.rstrip().endswith("60.0 %") for line in lines[1:])


def test_order_flow_topics_are_what_an_order_writes():
    assert probe.order_flow_topic("orders") and probe.order_flow_topic("order-results")
    assert probe.order_flow_topic("brokerstream-orders-positions-changelog")  # the positions topic
    assert probe.order_flow_topic("brokerstream-orders-order-ids-changelog")
    assert not probe.order_flow_topic("positions")  # no longer written: the changelog is the topic
    assert not probe.order_flow_topic("pnl.positions")
    assert not probe.order_flow_topic("brokerstream-orders-positions-repartition")


def test_the_ceiling_is_read_from_the_tools_summary_line():
    out = (
        "1000 records sent, 200.0 records/sec (0.03 MB/sec), 3.0 ms avg latency, 9.0 ms max latency.\n"
        "2000000 records sent, 212345.6 records/sec (30.37 MB/sec), 21.3 ms avg latency, 300.0 ms max latency, "
        "5 ms 50th, 60 ms 95th, 90 ms 99th, 200 ms 99.9th.\n"
    )
    assert ceiling.parse(out) == 212345.6
    with pytest.raises(RuntimeError):
        ceiling.parse("Exception in thread main")


def test_each_steps_cost_is_printed_by_service_api_key_topic_and_table_with_its_check():
    s = step(
        index=2,
        rate=1000,
        cpu_cores={"streams": 0.5, "kafka": 0.3},
        cost_us={"streams": 450.0, "kafka": 250.5},
        per_order={
            "requests": {"Produce": 0.3, "Fetch": 0.2},
            "records": {"orders": 1.0, "order-results": 1.0},
            "bytes": {"orders": 100.0},
            "rows": {"order_results": 1.0},
        },
        kernel_cores=0.81,
        cost_check=None,
    )
    out = "\n".join(system.cost_lines([s]))
    assert (
        "cost per order at step 2 (1,000/s, ticks included, idle subtracted): CPU 700 us: streams 450, kafka 250" in out
    )
    assert "broker requests 0.50: Produce 0.30, Fetch 0.20" in out
    assert "records to Kafka 2.00" in out and "rows to Postgres 1.00: order_results 1.00" in out
    assert "the services' CPU 0.80 cores, the kernel's count for the stack 0.81: they add up" in out
    assert system.cost_lines([step(index=1)]) == []  # a step without figures prints none
    assert "JIT" not in out  # no compiler figures, no line
    warm = step(index=3, rate=1000, cost_us={"streams": 450.0}, jit_us={"streams": 120.0, "kafka": 0.2})
    assert "  of which the JIT compilers 120 us (warm-up): streams 120" in system.cost_lines([warm])


def test_a_group_that_commits_at_checkpoints_is_judged_on_its_troughs_over_two_periods_at_least():
    # keeps up: a sawtooth of one 10 s period's records (committed at each checkpoint), troughs flat
    saw = [(t, 3000 * (t % 10)) for t in range(30)]
    # falls behind: the troughs rise 2,500 records a second
    behind = [(t, 3000 * (t % 10) + 2500 * t) for t in range(30)]
    lags = system.lag_report({"brokerstream-pnl": saw, "other": saw}, SLO, {"brokerstream-pnl": 10})
    assert not lags["brokerstream-pnl"]["grows"]
    assert lags["other"]["grows"]  # judged as every group is, the sawtooth's slope reads as growth
    late = system.lag_report({"brokerstream-pnl": behind}, SLO, {"brokerstream-pnl": 10})["brokerstream-pnl"]
    assert late["grows"] and late["slope_per_s"] == pytest.approx(2500)
    # a step shorter than two periods cannot tell the one from the other: not judged, and said so
    short = system.lag_report({"brokerstream-pnl": behind[:10]}, SLO, {"brokerstream-pnl": 10})["brokerstream-pnl"]
    assert not short["grows"] and short["judged"].startswith("not judged")
    # a 20 s window sampled once a second (last sample at 19 s) holds two whole periods
    assert system.lag_report({"brokerstream-pnl": behind[:20]}, SLO, {"brokerstream-pnl": 10})["brokerstream-pnl"][
        "grows"
    ]


def test_the_pnl_jobs_commit_period_is_its_checkpoint_interval(tmp_path):
    from brokerstream.common import config

    cfg = config.load(environ={"BS_DATA_DIR": str(tmp_path)})
    assert system.commit_periods(cfg) == {"brokerstream-pnl": 10.0}
    assert system.commit_periods(cfg.with_overrides(BS_PNL_CHECKPOINT_INTERVAL_MS="4000")) == {"brokerstream-pnl": 4.0}
