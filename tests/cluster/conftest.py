"""A second, smaller stack for the multi-broker tests: three Kafka nodes (BS_KAFKA_BROKERS=3) with
Postgres, the registry, Connect (Debezium carries the reference data) and the order flow; no Flink.

Its own ports (24xxx) and data folder (.data-test-cluster/). `./brokerstream test` runs this suite after
the integration suite has stopped its stack, so the two never share the machine's two cores.
BS_TEST_KEEP_STACK=1 reuses a running cluster stack and leaves it running. The suite runs in either Kafka
profile: `BS_KAFKA_SECURITY=sasl_ssl` in the environment runs the three nodes with TLS, SCRAM and ACLs.
"""

from __future__ import annotations

import pytest

from ..integration.conftest import gateway_factory, load_world, running_stack, shifted_environ

# The default ports are 19xxx, the integration stack's 29xxx; these stay below 32768, where Linux
# starts handing out ephemeral ports to outgoing connections (a 39xxx listener once found its port taken).
PORT_SHIFT = 5000
SERVICES = ("streams", "connect")  # and what they need: postgres, the three nodes, the registry


def cluster_environ() -> dict[str, str]:
    env = shifted_environ(PORT_SHIFT, ".data-test-cluster")
    env["BS_KAFKA_BROKERS"] = "3"
    env["BS_KAFKA_HEAP"] = "512m"
    return env


@pytest.fixture(scope="session")
def cluster_env() -> dict[str, str]:
    return cluster_environ()


@pytest.fixture(scope="session")
def cluster(cluster_env):
    with running_stack(cluster_env, *SERVICES) as cfg:
        yield cfg


@pytest.fixture(scope="session")
def cluster_world(cluster):
    return load_world(cluster)


@pytest.fixture(scope="session")
def cluster_gateway_for(cluster, cluster_world):
    return gateway_factory(cluster)
