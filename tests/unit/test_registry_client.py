"""The registry client the tools use gives up on a request that never gets its answer."""

from __future__ import annotations

import time

import pytest

from brokerstream.clients import schemas
from brokerstream.common import config

from .test_connect_client import Worker


def test_a_registry_that_never_answers_fails_the_call_instead_of_hanging_it(monkeypatch):
    monkeypatch.setattr(schemas, "REGISTRY_TIMEOUT_S", 0.3)
    with Worker([(4, 200, [])]) as registry:
        client = schemas.registry_client(config.load(environ={"BS_REGISTRY_URL": registry.url}))
        started = time.monotonic()
        with pytest.raises(Exception, match="(?i)timed? ?out"):
            client.get_subjects()
        assert time.monotonic() - started < 15
        assert len(registry.seen) >= 2  # retried on a fresh request before giving up


def test_the_default_limit_is_set():
    client = schemas.registry_client(config.load(environ={}))
    assert client._rest_client.timeout == schemas.REGISTRY_TIMEOUT_S
