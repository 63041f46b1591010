"""The order flow under the authenticated profile: TLS and SCRAM for every client (gateway, streams app,
Connect, Flink, the tools), ACLs that let only the gateway write orders, no password on a command line."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import psycopg
import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from brokerstream.clients import kafka_security
from brokerstream.clients.kafka_clients import client_conf
from brokerstream.common.topics import POSITIONS
from brokerstream.gen.produce import produce_prices


def _wait_row(cfg, sql: str, args: tuple, timeout: float):
    deadline = time.monotonic() + timeout
    with psycopg.connect(cfg.postgres_dsn(), autocommit=True) as conn:
        while True:
            row = conn.execute(sql, args).fetchone()
            if row or time.monotonic() > deadline:
                return row
            time.sleep(1)


def test_orders_flow_through_gateway_streams_connect_and_flink(secure_stack, secure_world, secure_gateway_for):
    cfg, world = secure_stack, secure_world
    member = next(
        m.member_id
        for m in world.members
        if m.status == "ACTIVE" and any(a.member_id == m.member_id and a.status == "ACTIVE" for a in world.accounts)
    )
    account = next(a.account_id for a in world.accounts if a.member_id == member and a.status == "ACTIVE")
    equity = next(i.instrument_id for i in world.instruments if i.instrument_type == "EQUITY" and i.status == "ACTIVE")
    order_id = f"sec-{uuid.uuid4().hex[:8]}"
    # the gateway writes the order as its principal; the streams app decides it as its own
    result = secure_gateway_for(member).order(
        order_id=order_id, account_id=account, instrument_id=equity, side="BUY", quantity=3
    )
    assert result["status"] == "ACCEPTED", result
    # Connect (Debezium's JDBC sink) logs in as connect and carries the result to Postgres
    row = _wait_row(
        cfg, "SELECT status FROM order_results WHERE order_id = %s AND member_id = %s", (order_id, member), 120
    )
    assert row == ("ACCEPTED",)
    # a tick written by the tools principal reaches the P&L job (flink), whose output Connect syncs
    produce_prices(cfg, {equity: 123_450_000})
    row = _wait_row(
        cfg,
        "SELECT underlying_price, mark_price FROM pnl_positions WHERE account_id = %s "
        "AND instrument_id = %s AND mark_price = 123.45",
        (account, equity),
        180,
    )
    assert row is not None, "the P&L job's revaluation never reached Postgres"


@pytest.mark.parametrize("principal", ["tools", "streams", "connect", "flink"])
def test_no_principal_but_the_gateway_may_write_orders(secure_stack, principal):
    errors = []
    p = Producer(client_conf(secure_stack, principal, **{"message.timeout.ms": 20000, "partitioner": "murmur2_random"}))
    p.produce("orders", b"forged", b"M000001", on_delivery=lambda err, msg, errors=errors: errors.append(err))
    assert p.flush(30) == 0
    assert len(errors) == 1 and errors[0] is not None, errors
    assert errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, errors[0]
    # the ACLs deny orders, not everything: the same principal makes a topic of its own and writes it
    scratch = f"secure-test-{principal}"
    admin = AdminClient(client_conf(secure_stack, principal))
    admin.create_topics([NewTopic(scratch, 1)])[scratch].exception(30)  # None, or "already exists"
    ok = []
    for _ in range(30):
        p.produce(scratch, b"x", b"k", on_delivery=lambda err, msg: ok.append(err))
        p.flush(30)
        if ok[-1] is None:
            break
        time.sleep(1)  # the new topic's metadata may lag its creation
    assert ok[-1] is None, ok


def test_only_the_order_flow_may_write_the_book_its_triggers_the_positions_and_the_results(secure_stack):
    # a trigger names the price an order fills at, the positions topic is what a restoring task books, and a
    # result is an order id its member task counts as decided: a forged record from any other service is refused
    topics = ("order-triggers.fast", "order-triggers", "orders.resting", POSITIONS, "order-results")
    for principal in ("tools", "connect", "flink"):
        p = Producer(client_conf(secure_stack, principal, **{"message.timeout.ms": 20000}))
        errors = []
        for topic in topics:
            p.produce(topic, b"forged", b"M000001", on_delivery=lambda err, msg, errors=errors: errors.append(err))
        assert p.flush(30) == 0
        assert [e.code() if e else None for e in errors] == [KafkaError.TOPIC_AUTHORIZATION_FAILED] * len(topics), (
            principal,
            errors,
        )


def _refused(conf: dict) -> None:
    admin = AdminClient({**conf, "log_level": 0})
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=3)  # refused, the call raises at its timeout at the latest


def test_a_client_without_a_valid_login_is_refused(secure_stack):
    cfg = secure_stack
    _refused({"bootstrap.servers": cfg.kafka_bootstrap})  # plaintext against the TLS listener
    _refused(client_conf(cfg, **{"sasl.password": "not-the-password"}))
    _refused({**client_conf(cfg), "ssl.ca.location": "/etc/ssl/certs/ca-certificates.crt"})  # another CA
    assert AdminClient(client_conf(cfg)).list_topics(timeout=30).topics  # and the right login works


def test_no_kafka_password_is_on_a_command_line_or_in_an_environment(secure_stack):
    cfg = secure_stack
    secrets = set(json.loads(kafka_security.credentials_file(cfg).read_text()).values())
    assert len(secrets) == len(kafka_security.PRINCIPALS)
    seen = 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
            environ = (proc / "environ").read_bytes().decode(errors="replace")
        except OSError:
            continue  # gone, or not ours
        seen += 1
        leaked = [s for s in secrets if s in cmdline or s in environ]
        assert not leaked, f"pid {proc.name}: {cmdline[:200]}"
    assert seen > 10
    assert not list(cfg.data_dir.glob("kafka*/format.args"))  # the format's argument file is gone
