"""The floors bench's arithmetic: per-part medians above the part's own idle, the streams process's floor as an
HTTP part's JVM plus the flow part's against the budget, windows that measured something else refused, and the
rows stored."""

import pytest

from brokerstream.common import config
from brokerstream.loadtest.bench import cost, floors


def window(cores: dict[str, float], rate: float, seconds: float = 10.0, requests: float = 0.0, records: float = 0.0):
    """A window of `rate` orders/s for `seconds`, each service at `cores`."""
    per_second = {("requests", "Produce"): requests * rate, ("records", "bsfloor.results"): records * rate}
    return cost.Cost("w", "order", rate * seconds, seconds, dict(cores), {k: v for k, v in per_second.items() if v})


def idle(cores: dict[str, float]):
    return cost.Cost("idle", "second", 15, 15, dict(cores), {})


def part(name, idle_cores, windows_by_rate):
    return floors.PartResult(name, idle(idle_cores), windows_by_rate)


def test_a_parts_figure_is_the_median_window_above_its_own_idle():
    p = part(
        "flow",
        {"floor": 0.02, "kafka": 0.07},
        {
            1000.0: [
                window({"floor": 0.12, "kafka": 0.17}, 1000, requests=0.4, records=3.0),
                window({"floor": 0.14, "kafka": 0.20}, 1000, requests=0.3, records=3.2),
                window({"floor": 0.22, "kafka": 0.19}, 1000, requests=0.5, records=3.1),
            ]
        },
    )
    m = p.medians(1000.0)
    assert m["floor"] == pytest.approx(120.0)  # (0.14 - 0.02) cores / 1,000 orders/s
    assert m["kafka"] == pytest.approx(120.0)
    assert p.ranges(1000.0, "floor") == pytest.approx((100.0, 200.0))
    assert p.count(1000.0, "requests") == pytest.approx(0.4)
    assert p.count(1000.0, "records") == pytest.approx(3.1)


def test_the_streams_processs_floor_adds_the_edge_to_the_flow_and_says_which_budget_it_breaks():
    result = floors.FloorsResult(
        "r",
        None,
        [
            part("http", {"floor": 0.0, "kafka": 0.05}, {1000.0: [window({"floor": 0.10, "kafka": 0.05}, 1000)]}),
            part("flow", {"floor": 0.0, "kafka": 0.05}, {1000.0: [window({"floor": 0.05, "kafka": 0.09}, 1000)]}),
        ],
        {},
        {"orders": {"cpu_us": {"streams": 110, "kafka": 50, "total": 250}}},
    )
    (line,) = result.summary()
    assert "streams process 150 us per order (http 100 + flow 50) (budget 110: ABOVE)" in line
    assert "kafka 40 (budget 50: under)" in line
    assert "the two 190 (the whole order's budget 250: under)" in line


def test_no_summary_without_the_flow_part_or_at_a_rate_only_one_part_ran():
    http = part("http", {"floor": 0.0}, {1000.0: [window({"floor": 0.1}, 1000)]})
    assert floors.FloorsResult("r", None, [http], {}).summary() == []
    flow = part("flow", {"floor": 0.0}, {2000.0: [window({"floor": 0.1}, 2000)]})
    assert floors.FloorsResult("r", None, [http, flow], {}).summary() == []


def test_every_window_is_printed_with_its_range_and_counts():
    p = part(
        "flow", {"floor": 0.01, "kafka": 0.02}, {1000.0: [window({"floor": 0.11, "kafka": 0.12}, 1000, requests=0.37)]}
    )
    lines = floors.FloorsResult("r", None, [p], {}).lines()
    assert "ALONE" in lines[0]
    text = "\n".join(lines)
    assert "its JVM 100 us per order (100-100; JIT 0)" in text
    assert "broker requests 0.37" in text


@pytest.mark.parametrize(
    "part_name, answer",
    [
        ("flow", {"sent": 100, "processed": 99}),
        ("http", {"sent": 100, "errors": {"timeout": 1}, "results": {"in_flight": 0}}),
        ("http1", {"sent": 100, "errors": {}, "results": {"in_flight": 3}}),
    ],
)
def test_a_window_that_left_orders_unanswered_is_refused(part_name, answer):
    with pytest.raises(RuntimeError):
        floors.check_window(part_name, answer)


def test_a_window_that_answered_every_order_is_kept():
    floors.check_window("flow", {"sent": 100, "processed": 100})
    floors.check_window("http", {"sent": 100, "errors": {}, "results": {"in_flight": 0}})


@pytest.mark.parametrize("kwargs", [{"parts": ["flow", "grpc"]}, {"repeats": 0}])
def test_unknown_parts_and_no_windows_are_refused_before_anything_starts(kwargs):
    with pytest.raises(ValueError):
        floors.run(config.load(), rates=[1000.0], **kwargs)


def test_the_flow_parts_settings_are_the_stacks_broker_and_partitions(tmp_path):
    cfg = config.load()
    text = floors.flow_settings(cfg, tmp_path / "f.properties").read_text()
    assert f"kafka.bootstrap={cfg.kafka_bootstrap}" in text.splitlines()
    assert f"floor.partitions={cfg['BS_TOPIC_PARTITIONS']}" in text.splitlines()


def test_stored_rows_number_each_parts_idle_then_its_windows():
    result = floors.FloorsResult(
        "r",
        None,
        [
            part("http", {"floor": 0.0}, {1000.0: [window({"floor": 0.1}, 1000), window({"floor": 0.2}, 1000)]}),
            part("flow", {"floor": 0.0}, {1000.0: [window({"floor": 0.1}, 1000)]}),
        ],
        {},
    )
    rows = floors.cost_rows(result)
    steps = sorted({(r[1], r[2]) for r in rows})
    assert steps == [
        (1, "floor-http-idle"),
        (2, "floor-http"),
        (3, "floor-http"),
        (4, "floor-flow-idle"),
        (5, "floor-flow"),
    ]
    cpu = {r[1]: r[7] for r in rows if r[5] == "cpu_us"}
    assert cpu[3] == pytest.approx(200.0)


def test_a_changed_flow_setting_replaces_the_default_and_is_printed(tmp_path):
    text = floors.flow_settings(config.load(), tmp_path / "f.properties", {"commit.interval.ms": "250"}).read_text()
    assert "commit.interval.ms=250" in text.splitlines()
    p = part("flow", {"floor": 0.0}, {1000.0: [window({"floor": 0.1}, 1000)]})
    lines = floors.FloorsResult("r", None, [p], {"flow_settings": {"commit.interval.ms": "250"}}).lines()
    assert any("changed from the order flow's: commit.interval.ms=250" in line for line in lines)


@pytest.mark.parametrize("pair", ["commit.interval.ms", "=5", "commit.interval.ms="])
def test_a_flow_setting_is_key_equals_value(pair):
    with pytest.raises(ValueError):
        floors.parse_settings([pair])
    assert floors.parse_settings(["a=1", " b = 2 "]) == {"a": "1", "b": "2"}


def test_the_command_line_takes_parts_rates_and_repeated_flow_settings():
    from brokerstream.cli import bench, build_parser

    args = build_parser().parse_args(
        ["bench", "floors", "--parts", "flow", "--rates", "1000,3000", "--flow-setting", "a=1", "--flow-setting", "b=2"]
    )
    assert args.which == "floors" and bench.BENCHES["floors"] is bench.bench_floors
    assert args.flow_setting == ["a=1", "b=2"] and args.parts == "flow" and args.repeats is None


def test_requests_are_printed_by_api_key_largest_first():
    w = cost.Cost("w", "order", 1000, 1, {"floor": 0.1}, {("requests", "Produce"): 300.0, ("requests", "Fetch"): 50.0})
    p = part("flow", {"floor": 0.0}, {1000.0: [w]})
    assert p.by_name(1000.0, "requests") == {"Produce": 0.3, "Fetch": 0.05}
    assert "    requests per order: Produce 0.300, Fetch 0.050" in floors.FloorsResult("r", None, [p], {}).lines()


def test_the_idle_stacks_own_requests_are_not_the_parts():
    w = cost.Cost("w", "order", 1000, 1, {"floor": 0.1}, {("requests", "Fetch"): 150.0, ("requests", "Produce"): 80.0})
    quiet = cost.Cost("idle", "second", 15, 15, {"floor": 0.0}, {("requests", "Fetch"): 100.0})
    p = floors.PartResult("flow", quiet, {1000.0: [w]})
    assert p.by_name(1000.0, "requests") == pytest.approx({"Produce": 0.08, "Fetch": 0.05})
    assert p.count(1000.0, "requests") == pytest.approx(0.13)


def test_the_parts_idle_keeps_the_lower_of_two_readings_of_cpu_and_of_requests():
    a = cost.Cost("idle", "second", 15, 15, {"floor": 0.02, "kafka": 0.05}, {("requests", "Fetch"): 90.0})
    b = cost.Cost("idle", "second", 15, 15, {"floor": 0.01, "kafka": 0.08}, {("requests", "Fetch"): 120.0})
    idle = floors.idle_of(a, b)
    assert idle.cpu_cores == {"floor": 0.01, "kafka": 0.05}
    assert idle.per_second == {("requests", "Fetch"): 90.0}
