"""The system of record under faults of the world, with members trading through the gateway: Postgres
read-only (a failover to a standby), killed (-9) and restarted, a sink table locked, a statement timeout,
Connect killed (-9) mid-batch, a sink table's column dropped and restored. After each, every order the
gateway acknowledged is in Postgres exactly once, no record was dead-lettered for the fault, and
Postgres's positions equal a fold of its own fills.

Each fault lasts BS_FAULT_WINDOW_S seconds (10 here; `./brokerstream faults` runs the same rounds for
longer, 30 s by default).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
import uuid

import psycopg
import pytest

from brokerstream.clients.connectors import Connect, ConnectorSpec, check, load_specs, wait_running
from brokerstream.ops import reconcile
from brokerstream.ops.flowcheck import read_topic

from .conftest import launcher
from .members import Members, check_decided_once

WINDOW = float(os.environ.get("BS_FAULT_WINDOW_S", "10"))


def _pid(env, service: str) -> int:
    rows = {r["service"]: r for r in json.loads(launcher(env, "status", "--json").stdout)["services"]}
    return rows[service]["pid"]


def _sql(stack, *statements: str) -> None:
    with psycopg.connect(stack.postgres_dsn(), autocommit=True) as conn:
        # the test's own session, always: neither read-only nor timed out by the faults it makes
        conn.execute("SET default_transaction_read_only = off")
        conn.execute("SET statement_timeout = 0")
        for s in statements:
            conn.execute(s)


def _end_sink_sessions(stack) -> None:
    """What a failover does to the sink: its sessions end, and it connects again."""
    _sql(
        stack,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'brokerstream-sink%'",
    )


@contextlib.contextmanager
def read_only(stack, env):
    db = stack["BS_POSTGRES_DB"]
    _sql(stack, f'ALTER DATABASE "{db}" SET default_transaction_read_only = on')
    _end_sink_sessions(stack)
    try:
        yield
    finally:
        _sql(stack, f'ALTER DATABASE "{db}" RESET default_transaction_read_only')


@contextlib.contextmanager
def statement_timeout(stack, env):
    """The sink's statements cancelled by its own statement_timeout (57014): a lock held on positions while
    the sink runs with a 300 ms limit. The limit is the sink's (a connection option), so nothing else that
    shares the database is timed out."""
    connect = Connect(stack.connect_url, patience=60)
    spec = next(s for s in load_specs() if s.name == "sink-orders")
    short = ConnectorSpec(spec.name, {**spec.config, "statement.timeout.ms": "300"}, spec.path)
    connect.put_config(short)
    wait_running(connect, [spec.name], 60, {spec.name: 1})
    try:
        with table_locked(stack, env):
            yield
    finally:
        connect.put_config(spec)


@contextlib.contextmanager
def table_locked(stack, env):
    conn = psycopg.connect(stack.postgres_dsn())
    conn.execute("LOCK TABLE positions IN ACCESS EXCLUSIVE MODE")
    try:
        yield
    finally:
        conn.rollback()
        conn.close()


@contextlib.contextmanager
def column_dropped(stack, env):
    _sql(stack, "ALTER TABLE order_results DROP COLUMN trace_id")
    try:
        yield
    finally:
        _sql(stack, "ALTER TABLE order_results ADD COLUMN trace_id text")


def killed(service: str):
    @contextlib.contextmanager
    def fault(stack, env):
        victim = _pid(env, service)
        os.kill(victim, signal.SIGKILL)
        try:
            yield
        finally:
            launcher(env, "up", "--no-install", timeout=600)
            assert _pid(env, service) != victim

    return fault


FAULTS = {
    "postgres read-only": read_only,
    "postgres killed": killed("postgres"),
    "positions locked": table_locked,
    "statement timeout": statement_timeout,
    "connect killed": killed("connect"),
    "column dropped": column_dropped,
}


def _connect_letters(stack) -> int:
    return len(read_topic(stack, "dlq.connect", decode=False))


@pytest.mark.parametrize("name", list(FAULTS))
def test_a_fault_of_the_world_loses_nothing_and_letters_nothing(stack, stack_env, world, gateway_for, name):
    tag = f"sf{uuid.uuid4().hex[:6]}"
    letters_before = _connect_letters(stack)
    with Members(gateway_for, world, tag, threads=2) as members:
        time.sleep(2)
        with FAULTS[name](stack, stack_env):
            time.sleep(WINDOW)
        time.sleep(2)
    assert members.acked, "no order was acknowledged"
    ours = check_decided_once(stack, tag, members)
    # Connect may have restarted a task that met the fault as it started: whatever is FAILED now is a finding
    problems = check(stack)
    assert not problems, problems

    behind = reconcile.wait_synced(stack, reconcile.SINK, reconcile.SYNCED, timeout=180)
    assert not behind, f"the sync did not catch up: {behind}"
    with psycopg.connect(stack.postgres_dsn()) as conn:
        rows = conn.execute(
            "SELECT member_id || '|' || order_id, count(*) FROM order_results WHERE order_id LIKE %s GROUP BY 1",
            (tag + "-%",),
        ).fetchall()
        assert {k for k, _ in rows} == set(ours), "Postgres holds other orders than the flow decided"
        assert all(n == 1 for _, n in rows)
        positions, fills, unordered, differ = reconcile.check_books(conn)
    assert not differ, differ[:10]
    assert unordered == 0
    assert _connect_letters(stack) == letters_before, "a record was dead-lettered for a fault of the world"


def test_reconcile_passes_on_the_stack_after_the_faults(stack, stack_env):
    out = launcher(stack_env, "reconcile", "--timeout", "180", check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "reconcile: passed" in out.stdout
    prom = (stack.data_dir / "metrics" / "reconcile.prom").read_text()
    assert "brokerstream_reconcile_last_passed 1" in prom


def test_reconcile_fails_on_a_fill_missing_from_postgres_or_a_cost_of_the_wrong_sign(stack, stack_env):
    """The proof can fail: a fill taken out of order_results (as the old sink's dead-lettering did) shows as a
    position whose version is ahead of its fills; a cost basis of the wrong sign on another position is a
    difference too (a cost is never negative, a short's included); the command exits 1."""
    with psycopg.connect(stack.postgres_dsn()) as conn:
        row = conn.execute(
            "SELECT member_id, order_id, ingest_ts, account_id, instrument_id FROM order_results "
            "WHERE status = 'ACCEPTED' LIMIT 1"
        ).fetchone()
        assert row, "no fill in Postgres"
        order = row[:3]
        flipped = conn.execute(
            "SELECT account_id, instrument_id FROM positions WHERE cost_basis > 0 "
            "AND account_id IN (SELECT account_id FROM accounts) AND (account_id, instrument_id) <> (%s, %s) "
            "LIMIT 1",
            row[3:],
        ).fetchone()
        assert flipped, "no other open position in Postgres"
        saved = conn.execute(
            "SELECT * FROM order_results WHERE member_id = %s AND order_id = %s AND ingest_ts = %s", order
        ).fetchone()
        cols = [d.name for d in conn.execute("SELECT * FROM order_results LIMIT 0").description]
        conn.execute("DELETE FROM order_results WHERE member_id = %s AND order_id = %s AND ingest_ts = %s", order)
        flip = "UPDATE positions SET cost_basis = -cost_basis WHERE account_id = %s AND instrument_id = %s"
        conn.execute(flip, flipped)
        conn.commit()
        try:
            out = launcher(stack_env, "reconcile", "--timeout", "60", check=False)
        finally:
            conn.execute(
                f"INSERT INTO order_results ({', '.join(cols)}) VALUES ({', '.join(['%s'] * len(cols))})", saved
            )
            conn.execute(flip, flipped)
            conn.commit()
    assert out.returncode == 1, out.stdout
    assert "outcomes missing in postgres" in out.stdout and "but" in out.stdout
    assert f"{flipped[0]}|{flipped[1]}: cost basis -" in out.stdout, out.stdout
