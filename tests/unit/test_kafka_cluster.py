"""The launcher's description of a one-node and a three-node Kafka cluster (no broker started here)."""

from __future__ import annotations

import pytest

from brokerstream.common import config
from brokerstream.common.topics import load_catalog
from brokerstream.launcher.layout import Layout
from brokerstream.launcher.services import all_services
from brokerstream.launcher.services.kafka import ClusterSizeError, Kafka


def cfg_of(tmp_path, **env):
    return config.load(environ={"BS_DATA_DIR": str(tmp_path / "data"), **env})


def props(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line)


def test_one_broker_is_the_default_and_everything_is_replicated_once(tmp_path):
    cfg = cfg_of(tmp_path)
    assert cfg.kafka_brokers == 1
    assert cfg.kafka_bootstrap == "127.0.0.1:19092"
    services = all_services(cfg)
    assert [n for n in services if n.startswith("kafka")] == ["kafka"]
    p = props(services["kafka"].properties())
    assert p["controller.quorum.voters"] == "1@127.0.0.1:19093"
    assert p["default.replication.factor"] == p["offsets.topic.replication.factor"] == "1"
    assert p["min.insync.replicas"] == "1"
    assert {t.replication_factor for t in load_catalog(cfg)} == {1}


def test_three_brokers_form_one_quorum_on_their_own_ports(tmp_path):
    ports = {
        "BS_KAFKA_PORT": "29092",
        "BS_KAFKA_CONTROLLER_PORT": "29093",
        "BS_KAFKA_2_PORT": "29094",
        "BS_KAFKA_2_CONTROLLER_PORT": "29095",
        "BS_KAFKA_3_PORT": "29096",
        "BS_KAFKA_3_CONTROLLER_PORT": "29097",
        "BS_KAFKA_METRICS_PORT": "29098",
        "BS_KAFKA_2_METRICS_PORT": "29099",
        "BS_KAFKA_3_METRICS_PORT": "29100",
    }
    cfg = cfg_of(tmp_path, BS_KAFKA_BROKERS="3", **ports)
    assert cfg.kafka_bootstrap == "127.0.0.1:29092,127.0.0.1:29094,127.0.0.1:29096"
    assert config.load(environ={"BS_KAFKA_BROKERS": "3"}).values["BS_KAFKA_BOOTSTRAP"].count(",") == 2
    services = all_services(cfg)
    nodes = [services[n] for n in ("kafka", "kafka-2", "kafka-3")]
    listeners = set()
    for i, node in enumerate(nodes, 1):
        p = props(node.properties())
        assert p["node.id"] == str(i)
        assert p["controller.quorum.voters"] == "1@127.0.0.1:29093,2@127.0.0.1:29095,3@127.0.0.1:29097"
        assert p["default.replication.factor"] == p["transaction.state.log.replication.factor"] == "3"
        assert p["min.insync.replicas"] == p["transaction.state.log.min.isr"] == "2"
        assert p["log.dirs"].startswith(str(cfg.data_dir / node.name))
        listeners.add(p["listeners"])
        assert node.ports() == {"broker": 29090 + 2 * i, "controller": 29091 + 2 * i, "metrics": 29097 + i}
        assert f"-javaagent:{node.layout.metrics_agent}=127.0.0.1:{29097 + i}:" in " ".join(node.launch().argv)
    assert cfg.kafka_metrics_urls == [f"http://127.0.0.1:{p}/metrics" for p in (29098, 29099, 29100)]
    assert len(listeners) == 3
    # whatever needs Kafka waits for every node, so topics with 3 replicas can be made
    assert {"kafka", "kafka-2", "kafka-3"} <= set(services["streams"].needs)
    assert {"kafka", "kafka-2", "kafka-3"} <= set(services["connect"].needs)
    assert {t.replication_factor for t in load_catalog(cfg)} == {3}
    assert "replication.factor=3" in services["connect"].properties()


@pytest.mark.parametrize("count", ["2", "4", "5", "0"])
def test_a_cluster_that_cannot_lose_a_node_safely_is_refused(tmp_path, count):
    with pytest.raises(config.ConfigError, match="BS_KAFKA_BROKERS"):
        _ = cfg_of(tmp_path, BS_KAFKA_BROKERS=count).kafka_brokers


def test_a_data_folder_keeps_the_cluster_size_it_was_made_with(tmp_path):
    one = cfg_of(tmp_path)
    Kafka(one, Layout(one)).check_cluster_size()
    three = cfg_of(tmp_path, BS_KAFKA_BROKERS="3")
    with pytest.raises(ClusterSizeError, match="reset"):
        Kafka(three, Layout(three), node=2).check_cluster_size()
    Kafka(one, Layout(one)).check_cluster_size()  # the size it was made with still starts


def test_a_folder_from_before_the_marker_counts_as_one_broker(tmp_path):
    three = cfg_of(tmp_path, BS_KAFKA_BROKERS="3")
    (three.data_dir / "kafka" / "logs").mkdir(parents=True)
    (three.data_dir / "kafka" / "logs" / "meta.properties").write_text("node.id=1\n")
    with pytest.raises(ClusterSizeError, match="1 broker"):
        Kafka(three, Layout(three)).check_cluster_size()
