"""The benches' open positions: the same draws for a seed whichever architecture holds them, and a
draw that ends on a data set with few instruments."""

import datetime as dt

from brokerstream.gen import refdata
from brokerstream.loadtest.bench.pnl import draw_positions

AS_OF = dt.date(2026, 1, 5)


def test_more_positions_than_a_few_accounts_can_hold_still_draw_distinct_keys():
    data = refdata.generate("tiny", 42, AS_OF)
    drawn = draw_positions(data, 300, 0.3, 7)
    keys = {(p["account_id"], p["instrument_id"]) for p in drawn}
    assert len(drawn) == len(keys) == 300
    assert all(p["account_id"].startswith("BENCH-") and p["quantity"] != 0 for p in drawn)


def test_closing_walks_through_the_same_keys_at_zero():
    data = refdata.generate("tiny", 42, AS_OF)
    opened, closed = draw_positions(data, 120, 0.3, 7), draw_positions(data, 120, 0.3, 7, close=True)
    assert [(p["account_id"], p["instrument_id"]) for p in opened] == [
        (p["account_id"], p["instrument_id"]) for p in closed
    ]
    assert all(p["quantity"] == 0 and p["version"] == 2 for p in closed)


def test_drawn_positions_encode_as_the_position_schema_and_read_back():
    import io

    import fastavro

    from brokerstream.clients.schemas import load_schema
    from brokerstream.loadtest.bench.pnl import encode_position

    schema = fastavro.parse_schema(load_schema("Position"))
    for p in draw_positions(refdata.generate("tiny", 42, AS_OF), 50, 0.3, 7):
        framed = encode_position(schema, b"\x00\x00\x00\x00\x01", p)
        assert fastavro.schemaless_reader(io.BytesIO(framed[5:]), schema) == {
            **p,
            "updated_ts": dt.datetime.fromtimestamp(p["updated_ts"] / 1000, dt.timezone.utc),
        }


def test_a_deadlock_victim_is_run_again_and_other_errors_are_not():
    import psycopg
    import pytest

    from brokerstream.loadtest.bench.pnl import retry_deadlocks

    calls = []

    def victim_twice():
        calls.append(1)
        if len(calls) < 3:
            raise psycopg.errors.DeadlockDetected("deadlock detected")
        return "deleted"

    assert retry_deadlocks(victim_twice, pause_s=0) == "deleted" and len(calls) == 3

    def always_victim():
        calls.append(1)
        raise psycopg.errors.DeadlockDetected("deadlock detected")

    calls.clear()
    with pytest.raises(psycopg.errors.DeadlockDetected):
        retry_deadlocks(always_victim, attempts=4, pause_s=0)
    assert len(calls) == 4

    def broken():
        calls.append(1)
        raise psycopg.errors.UndefinedTable("no such table")

    calls.clear()
    with pytest.raises(psycopg.errors.UndefinedTable):
        retry_deadlocks(broken, pause_s=0)
    assert len(calls) == 1
