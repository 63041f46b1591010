"""What an order costs, from two readings: the broker's counters parsed, per-unit figures, the check that
the services add up to the kernel's count, and the table against the budget."""

import pytest

from brokerstream.loadtest.bench import cost, costrun

SCRAPE = """# HELP kafka_requests_total Requests
# TYPE kafka_requests_total counter
kafka_requests_total{request="Produce",version="10",} 100.0
kafka_requests_total{request="Produce",version="13",} 50.0
kafka_requests_total{request="Fetch",version="17",} 30.0
kafka_requests_total{request="FetchConsumer",version="17",} 28.0
kafka_requests_total{request="FetchFollower",version="17",} 2.0
kafka_topic_messages_in_total{topic="orders",} 1000.0
kafka_topic_bytes_in_total{topic="orders",} 150000.0
kafka_topic_bytes_out_total{topic="orders",} 999.0
jvm_memory_bytes_used{area="heap",} 1.0E8
"""


def test_the_exporters_text_is_read_by_api_key_and_topic_versions_summed_each_fetch_once():
    # the broker counts each fetch as Fetch and again as FetchConsumer or FetchFollower
    assert cost.parse_prometheus(SCRAPE) == {
        ("requests", "Produce"): 150.0,
        ("requests", "Fetch"): 30.0,
        ("records", "orders"): 1000.0,
        ("bytes", "orders"): 150000.0,
    }


def reading(at, cpu, broker=None, rows=None, groups=None):
    return cost.Reading(at, cpu, broker or {}, rows or {}, groups or {})


def test_per_order_figures_are_the_windows_differences_over_its_orders():
    a = reading(
        0.0,
        {"streams": 10.0, "kafka": 5.0},
        {("requests", "Produce"): 100, ("records", "orders"): 0},
        {"order_results": 7},
    )
    b = reading(
        10.0,
        {"streams": 13.0, "kafka": 6.0},
        {("requests", "Produce"): 1100, ("records", "orders"): 2000},
        {"order_results": 2007, "positions": 40},
    )
    c = cost.Cost.between(a, b, label="orders alone", unit="order", units=2000)
    assert c.rate == 200.0
    assert c.cpu_cores == {"streams": 0.3, "kafka": 0.1}
    assert c.us_per_unit() == pytest.approx({"streams": 1500.0, "kafka": 500.0})
    assert c.per_unit("requests") == {"Produce": 0.5}
    assert c.per_unit("records") == {"orders": 1.0}
    assert c.per_unit("rows") == {"order_results": 1.0, "positions": 0.02}
    idle = cost.Cost.between(
        reading(0, {"streams": 0.0, "kafka": 0.0}),
        reading(10, {"streams": 1.0, "kafka": 0.5}),
        label="idle",
        unit="second",
        units=10,
    )
    assert c.us_per_unit(idle) == pytest.approx({"streams": 1000.0, "kafka": 250.0})  # (0.3 - 0.1) cores / 200 per s


def test_a_service_restarted_in_the_window_never_counts_negative():
    c = cost.Cost.between(reading(0, {"streams": 50.0}), reading(5, {"streams": 2.0}), label="x", unit="order", units=5)
    assert c.cpu_cores == {"streams": 0.0}


def test_the_services_must_add_up_to_the_kernels_count_for_the_stacks_groups():
    a = reading(0, {"kafka": 0.0, "streams": 0.0}, groups={"orders": 0.0, "clients": 0.0, "sync": 0.0})
    ok = reading(10, {"kafka": 4.0, "streams": 6.0}, groups={"orders": 10.2, "clients": 30.0, "sync": 0.0})
    assert cost.check_adds_up(cost.Cost.between(a, ok, label="w", unit="order", units=1)) is None
    missed = reading(10, {"kafka": 4.0, "streams": 2.0}, groups={"orders": 10.0, "clients": 0.0, "sync": 3.0})
    problem = cost.check_adds_up(cost.Cost.between(a, missed, label="w", unit="order", units=1))
    assert problem and "0.600 cores" in problem and "1.300" in problem
    assert (
        cost.check_adds_up(
            cost.Cost.between(reading(0, {"kafka": 0.0}), reading(1, {"kafka": 9.0}), label="w", unit="order", units=1)
        )
        is None
    )  # no cpuacct: nothing to check


def test_the_table_marks_each_figure_against_its_budget():
    a = reading(0, {"streams": 0.0, "kafka": 0.0}, {("records", "orders"): 0, ("requests", "Produce"): 0})
    b = reading(10, {"streams": 2.0, "kafka": 0.1}, {("records", "orders"): 10_000, ("requests", "Produce"): 30_000})
    c = cost.Cost.between(a, b, label="orders alone", unit="order", units=10_000)
    out = "\n".join(
        cost.lines(c, None, {"cpu_us": {"total": 250, "streams": 110, "kafka": 50}, "records": 4, "requests": 1})
    )
    assert "210 us in all (budget 250 us)" in out
    assert "streams                    200 us  budget    110  OVER" in out
    assert "kafka                       10 us  budget     50  ok" in out
    assert "records written to Kafka per order: 1.0 (budget 4: ok)" in out
    assert "broker requests per order: 3.0 (budget 1: OVER)" in out


def test_rows_for_clickhouse_carry_each_figure_per_unit_and_per_second():
    a = reading(0, {"streams": 0.0}, {("records", "orders"): 0})
    b = reading(2, {"streams": 1.0}, {("records", "orders"): 400})
    rows = cost.rows("r1", 2, "orders", cost.Cost.between(a, b, label="o", unit="order", units=400))
    assert ["r1", 2, "orders", "order", 200.0, "cpu_us", "streams", 2500.0, 0.5] in rows
    assert ["r1", 2, "orders", "order", 200.0, "records", "orders", 1.0, 200.0] in rows
    assert all(len(r) == len(cost.COST_COLUMNS) for r in rows)


def test_the_budget_file_gives_every_service_a_share_that_adds_up_to_its_total():
    budget = costrun.load_budget()
    for unit in ("orders", "ticks"):
        cpu = dict(budget[unit]["cpu_us"])
        total = cpu.pop("total")
        assert sum(cpu.values()) == total, unit
    assert budget["orders"]["records"] == 4 and budget["orders"]["requests"] == 1
    assert budget["orders"]["cpu_us"]["total"] == 250 and budget["ticks"]["cpu_us"]["total"] == 100


def test_the_idle_stack_is_each_service_at_the_lower_of_two_readings():
    first = cost.Cost("idle", "second", 20, 20, {"kafka": 0.19, "streams": 0.01}, {}, {"orders": 0.2})
    last = cost.Cost("idle", "second", 20, 20, {"kafka": 0.05, "streams": 0.02}, {}, {"orders": 0.07})
    idle = costrun.lowest(first, last)
    assert idle.cpu_cores == {"kafka": 0.05, "streams": 0.01} and idle.group_cores == {"orders": 0.07}


def test_the_jit_compilers_share_is_shown_apart_above_idle_and_never_beyond_the_service():
    a = cost.Reading(0.0, {"streams": 0.0, "kafka": 0.0}, {}, {}, {}, {"streams": 0.0, "kafka": 0.0})
    b = cost.Reading(10.0, {"streams": 3.0, "kafka": 1.0}, {}, {}, {}, {"streams": 1.0, "kafka": 0.8})
    c = cost.Cost.between(a, b, label="orders alone", unit="order", units=2000)
    assert c.jit_cores == {"streams": 0.1, "kafka": 0.08}
    assert c.jit_us_per_unit() == pytest.approx({"streams": 500.0, "kafka": 400.0})
    # idle: streams compiled 0.02 cores and spent 0.05; kafka spent 0.09 of which 0.0 compiling
    idle = cost.Cost("idle", "second", 20, 20, {"streams": 0.05, "kafka": 0.09}, {}, jit_cores={"streams": 0.02})
    assert c.us_per_unit(idle)["kafka"] == pytest.approx(50.0)
    # kafka's compilers (0.08 cores) are more than its figure above idle (0.01): its figure bounds them
    assert c.jit_us_per_unit(idle) == pytest.approx({"streams": 400.0, "kafka": 50.0})
    out = "\n".join(cost.lines(c, idle, {"cpu_us": {"streams": 110}}))
    assert "streams                  1,250 us  budget    110  OVER  (JIT 400)" in out
    assert "of which the JVMs' JIT compilers: 450 us per order" in out and "the rest 850 us" in out
    rows = cost.rows("r1", 2, "orders", c, idle)
    assert ["r1", 2, "orders", "order", 200.0, "jit_us", "streams", pytest.approx(400.0), 0.1] in rows


def test_readings_without_compiler_threads_print_no_jit_line():
    c = cost.Cost.between(
        reading(0, {"postgres": 0.0}), reading(1, {"postgres": 0.5}), label="w", unit="tick", units=10
    )
    assert c.jit_cores == {} and not any("JIT" in line for line in cost.lines(c))


def test_the_idle_stack_keeps_the_lower_compiler_reading_too():
    first = cost.Cost("idle", "second", 20, 20, {"kafka": 0.19}, {}, jit_cores={"kafka": 0.12})
    last = cost.Cost("idle", "second", 20, 20, {"kafka": 0.05}, {}, jit_cores={"kafka": 0.01})
    assert costrun.lowest(first, last).jit_cores == {"kafka": 0.01}


def window(label, unit, per_unit_us, units=1000, seconds=10.0, records=None):
    """A window whose services spent `per_unit_us` microseconds per unit (no idle)."""
    rate = units / seconds
    cores = {s: us * rate / 1e6 for s, us in per_unit_us.items()}
    per_second = {("records", t): n * rate for t, n in (records or {}).items()}
    return cost.Cost(label, unit, units, seconds, cores, per_second)


def test_repeated_windows_print_each_service_at_its_median_with_the_range_and_the_budget_on_the_median():
    ticks = [
        window("ticks alone (1 of 3)", "tick", {"kafka": 30, "flink-taskmanager": 51}, records={"pnl": 2.0}),
        window("ticks alone (2 of 3)", "tick", {"kafka": 216, "flink-taskmanager": 138}, records={"pnl": 2.4}),
        window("ticks alone (3 of 3)", "tick", {"kafka": 18, "flink-taskmanager": 38}, records={"pnl": 2.2}),
    ]
    out = cost.spread_lines(ticks, None, {"cpu_us": {"total": 100, "kafka": 20, "flink-taskmanager": 40}})
    text = "\n".join(out)
    # totals 81, 354, 56: the median window is 81, the one that read four times the others only widens the range
    assert out[0] == (
        "ticks alone, 3 windows: CPU per tick above idle, median 81 us (windows 56-354) (budget 100 us: ok)"
    )
    assert "kafka                30 us (windows 18-216)  budget     20  OVER" in text
    assert "flink-taskmanager    51 us (windows 38-138)  budget     40  OVER" in text
    assert "records written to Kafka per tick: median 2.2 (windows 2.0-2.4)" in text
    assert "JIT" not in text  # no compiler readings, no compiler line


def test_an_even_number_of_windows_takes_the_middle_two_and_a_single_window_prints_no_spread():
    pair = [window("w", "order", {"streams": 100}), window("w", "order", {"streams": 200})]
    assert "streams              150 us (windows 100-200)" in "\n".join(cost.spread_lines(pair))
    assert cost.spread_lines(pair[:1]) == []


def test_repeated_windows_go_to_clickhouse_as_steps_of_their_own_three_apart():
    o = [window("o", "order", {"streams": 1}) for _ in range(2)]
    t = [window("t", "tick", {"kafka": 1}) for _ in range(2)]
    one = [window("r", "order", {"streams": 1}) for _ in range(2)]
    idle = cost.Cost("idle", "second", 20, 20, {}, {})
    result = costrun.CostResult("r1", idle, o, t, {}, None, {}, one)
    steps = [(step, phase) for step, phase, _ in costrun.windows(result)]
    assert steps == [
        (2, "orders"),
        (3, "ticks"),
        (4, "orders-one-request"),
        (5, "orders"),
        (6, "ticks"),
        (7, "orders-one-request"),
    ]
    # a single run keeps the steps its queries always had
    single = costrun.CostResult("r2", idle, o[:1], [], {}, None, {}, [])
    assert [(s, p) for s, p, _ in costrun.windows(single)] == [(2, "orders")]
    lines = "\n".join(costrun.CostResult("r3", idle, o, t, {}, None, {}, one).lines())
    assert "o, 2 windows: CPU per order above idle" in lines and "t, 2 windows: CPU per tick" in lines


def test_order_windows_run_first_unless_the_tick_windows_are_asked_to():
    assert costrun.window_order(False) == ("orders", "ticks")
    assert costrun.window_order(True) == ("ticks", "orders")
