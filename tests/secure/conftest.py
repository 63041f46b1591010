"""A stack in the authenticated profile (BS_KAFKA_SECURITY=sasl_ssl): every service, the P&L job and the
connectors, each Kafka client logged in as its own principal over TLS.

Its own ports (26xxx) and data folder (.data-test-secure/). `./brokerstream test` runs this suite after
the integration suite has stopped its stack. BS_TEST_KEEP_STACK=1 reuses a running
secure stack and leaves it running.
"""

from __future__ import annotations

import pytest

from ..integration.conftest import gateway_factory, load_world, running_stack, shifted_environ

PORT_SHIFT = 7000  # below 32768, clear of the integration suite's 29xxx


def secure_environ() -> dict[str, str]:
    env = shifted_environ(PORT_SHIFT, ".data-test-secure")
    env["BS_KAFKA_SECURITY"] = "sasl_ssl"
    return env


@pytest.fixture(scope="session")
def secure_env() -> dict[str, str]:
    return secure_environ()


@pytest.fixture(scope="session")
def secure_stack(secure_env):
    with running_stack(secure_env) as cfg:
        yield cfg


@pytest.fixture(scope="session")
def secure_world(secure_stack):
    return load_world(secure_stack)


@pytest.fixture(scope="session")
def secure_gateway_for(secure_stack, secure_world):
    return gateway_factory(secure_stack)
