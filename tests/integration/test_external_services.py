"""The external-services mode on the real stack: a second launcher configuration for which Postgres,
Kafka, the registry, Connect and Flink run elsewhere (they are the test stack's, started by another
configuration with its own data folder). Its `up` waits for each at its address, provisions there
(idempotently: everything exists), and starts only our app; its `status` reports the external services
by address; its `down` stops only what it started."""

from __future__ import annotations

import time

from brokerstream.common import config

from .conftest import launcher

EXTERNAL = "postgres,kafka,registry,connect,flink"


def test_a_launcher_whose_infrastructure_is_external_starts_only_our_app_against_it(
    stack, stack_env, world, gateway_for, tmp_path
):
    port = stack.port("gateway") + 50
    env = dict(
        stack_env,
        BS_DATA_DIR=str(tmp_path / "data"),
        BS_EXTERNAL_SERVICES=EXTERNAL,
        BS_KAFKA_BOOTSTRAP=stack.kafka_bootstrap,
        BS_REGISTRY_URL=stack.registry_url,
        BS_CONNECT_URL=stack.connect_url,
        BS_FLINK_URL=stack.flink_url,
        BS_SQL_GATEWAY_URL=stack.sql_gateway_url,
        BS_POSTGRES_HOST=stack["BS_POSTGRES_HOST"],
        BS_POSTGRES_PORT=str(stack.port("postgres")),
        BS_GATEWAY_PORT=str(port),
        BS_GATEWAY_URL=f"http://{stack.bind}:{port}",
        # the second app's own metrics port beside the test stack's app
        BS_STREAMS_METRICS_PORT=str(stack.port("streams_metrics") + 50),
    )
    outside = config.load(environ=env)
    before = {p.name: p.read_text() for p in stack.run_dir.glob("*.pid")}
    try:
        out = launcher(env, "up", "--no-install").stdout
        for name in ("postgres", "kafka", "registry", "connect", "flink-jobmanager"):
            assert f"{name}" in out and "external at" in out, out
        assert "already RUNNING" in out  # the P&L job found where it runs, not submitted twice
        pids = {p.name for p in outside.run_dir.glob("*.pid")}
        assert pids == {"streams.pid"}, pids  # only our app was started by this configuration
        status = launcher(env, "status", "--json", check=False).stdout
        assert '"state": "external"' in status and f'"at": "{stack.kafka_bootstrap}"' in status
        # an order through this configuration's gateway is decided by the flow on the external Kafka
        member = "M000001"
        account = next(a.account_id for a in world.accounts if a.member_id == member and a.status == "ACTIVE")
        mine = gateway_for(member, outside.gateway_url)
        deadline = time.monotonic() + 90
        while mine.get("/health").status_code != 200:
            assert time.monotonic() < deadline, "the app on the external services never became healthy"
            time.sleep(1)
        placed = mine.post(
            "/orders", {"account_id": account, "instrument_id": "EQ000001", "side": "BUY", "quantity": 1}
        )
        assert placed.status_code == 202, placed.text
        assert mine.get(placed.json()["result"], wait_ms=10000).status_code == 200
    finally:
        down = launcher(env, "down").stdout
    assert "external: left running" in down and "streams" in down
    # the stack that owns those services runs on, every process as it was
    assert {p.name: p.read_text() for p in stack.run_dir.glob("*.pid")} == before
    deadline = time.monotonic() + 90
    while gateway_for("M000001").get("/health").status_code != 200:  # it takes every partition back
        assert time.monotonic() < deadline
        time.sleep(1)
