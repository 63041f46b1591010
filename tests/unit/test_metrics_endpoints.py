"""The stack's Prometheus endpoints as the launcher describes them, and the text format reader."""

from __future__ import annotations

import pytest

from brokerstream.clients.prometheus import samples
from brokerstream.common import config
from brokerstream.launcher.stack import Stack
from brokerstream.metrics.scrape import prometheus_config, targets

PROMETHEUS_FILE = config.ROOT / "platform" / "metrics" / "prometheus.yml"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a_total 3.0", [("a_total", {}, 3.0)]),
        ('x{route="ORDERS",status="202"} 2', [("x", {"route": "ORDERS", "status": "202"}, 2.0)]),
        ('# HELP x what\n# TYPE x counter\n\nx{le="+Inf"} 1.5e3', [("x", {"le": "+Inf"}, 1500.0)]),
        ('q{a="with \\"quote\\", comma"} NaN', [("q", {"a": 'with \\"quote\\", comma'}, float("nan"))]),
    ],
)
def test_samples_are_read_by_name_labels_and_value(text, expected):
    got = [(s.name, s.labels, s.value) for s in samples(text)]
    assert [(n, lbl) for n, lbl, _ in got] == [(n, lbl) for n, lbl, _ in expected]
    for (_, _, value), (_, _, want) in zip(got, expected):
        assert value == want or (value != value and want != want)


def test_the_committed_scrape_configuration_is_the_rendering_of_the_defaults():
    stack = Stack(config.load(environ={}))
    assert PROMETHEUS_FILE.read_text() == prometheus_config(stack.services), (
        "platform/metrics/prometheus.yml is stale: ./brokerstream metrics config --optional > it"
    )


def test_every_jvm_service_serves_metrics_on_the_stack_address_each_instance_on_its_own_port(tmp_path):
    cfg = config.load(
        environ={
            "BS_DATA_DIR": str(tmp_path),
            "BS_STREAMS_INSTANCES": "2",
            "BS_FLINK_TASKMANAGERS": "2",
            "BS_BIND": "127.0.0.1",
        }
    )
    stack = Stack(cfg)
    found = targets(stack.services)
    assert {"kafka", "registry", "connect", "flink-jobmanager", "flink-taskmanager", "streams", "baseline"} <= set(
        found
    )
    assert len(found["streams"]) == 2 and len(found["flink-taskmanager"]) == 2
    urls = [u for us in found.values() for u in us]
    assert len(urls) == len(set(urls))
    assert all(u.startswith("http://127.0.0.1:") for u in urls)
    # the agents are told the same address and port the launcher scrapes
    for name in ("connect", "flink-jobmanager", "flink-taskmanager-2"):
        service = stack.services[name]
        launch = service.launch()
        opts = " ".join(launch.argv) + " " + " ".join((launch.env or {}).values())
        port = service.ports()["metrics"]
        assert f"=127.0.0.1:{port}:" in opts, name
    envs = [stack.services[n].environment() for n in ("streams", "streams-2")]
    assert [e["BROKER_METRICS_PORT"] for e in envs] == [u.rsplit(":", 1)[1].split("/")[0] for u in found["streams"]]
    ports = [p for s in stack.services.values() for p in s.ports().values()]
    assert len(ports) == len(set(ports)), "two services share a port"
