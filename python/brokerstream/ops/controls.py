"""Operators' trading controls over a running stack: halting and resuming an equity (prices.controls,
applied by the order flow's tick task, recorded in prices.status and Postgres instrument_status_changes),
and a member's trading state and per-order limits (Postgres members, captured by Debezium; every change of
state recorded in member_state_changes with the operator and the reason)."""

from __future__ import annotations

import io
import re
import time

from brokerstream.common.config import Config
from brokerstream.common.errors import UserError

ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
ACTIONS = ("HALT", "RESUME")
STATES = ("ACTIVE", "REDUCING", "HALTED")
MAX_REASON = 1024


def _id(value: str, what: str) -> str:
    if not ID.match(value or ""):
        raise UserError(f"{what} must be 1 to 64 ASCII letters, digits or . _ : - (got {value!r})")
    return value


def control_value(cfg: Config, instrument: str, action: str, operator: str, reason: str | None) -> bytes:
    """A PriceControl in the Confluent wire format, its schema registered under prices.controls-value."""
    import fastavro

    from brokerstream.clients.schemas import load_schema
    from brokerstream.gen.produce import schema_header

    out = io.BytesIO()
    record = {
        "instrument_id": instrument,
        "action": action,
        "operator": operator,
        "reason": reason,
        "ts": int(time.time() * 1000),
    }
    fastavro.schemaless_writer(out, fastavro.parse_schema(load_schema("PriceControl")), record)
    return schema_header(cfg, "prices.controls", "PriceControl") + out.getvalue()


def send_control(cfg: Config, instrument: str, action: str, operator: str, reason: str | None) -> None:
    """Writes one halt or resumption for the tick task that checks the equity's ticks (same key, same
    partitioner as the ticks), and waits for the broker's acknowledgement."""
    from brokerstream.gen.produce import producer

    action = action.upper()
    if action not in ACTIONS:
        raise UserError(f"action must be one of {', '.join(ACTIONS)}")
    if reason is not None and len(reason) > MAX_REASON:
        raise UserError(f"a reason is at most {MAX_REASON} characters")
    value = control_value(cfg, _id(instrument, "instrument"), action, _id(operator, "operator"), reason)
    p = producer(cfg, **{"linger.ms": 0})
    failed: list[str] = []
    p.produce(
        "prices.controls", value=value, key=instrument.encode(), on_delivery=lambda e, m: e and failed.append(str(e))
    )
    if p.flush(30) or failed:
        raise UserError(f"the {action.lower()} of {instrument} was not written: {failed or 'timed out'}")


def status_history(cfg: Config, instrument: str, limit: int = 20) -> list[tuple]:
    """The equity's recorded halts and resumptions, newest first (what the sync wrote to Postgres)."""
    import psycopg

    with psycopg.connect(cfg.postgres_dsn()) as conn:
        return conn.execute(
            "SELECT ts, state, reason, changed_by, reference_price, held_price, detail "
            "FROM instrument_status_changes WHERE instrument_id = %s ORDER BY ts DESC LIMIT %s",
            (_id(instrument, "instrument"), limit),
        ).fetchall()


def set_member_state(cfg: Config, member: str, state: str, operator: str, reason: str | None) -> str:
    """Sets the member's trading state; returns the state it had. The change and who made it are
    recorded by the members table's trigger in the same transaction."""
    import psycopg

    state = state.upper()
    if state not in STATES:
        raise UserError(f"state must be one of {', '.join(STATES)}")
    with psycopg.connect(cfg.postgres_dsn()) as conn, conn.transaction():
        conn.execute("SELECT set_config('brokerstream.operator', %s, true)", (_id(operator, "operator"),))
        conn.execute("SELECT set_config('brokerstream.reason', %s, true)", ((reason or "")[:MAX_REASON],))
        row = conn.execute(
            "SELECT trading_state FROM members WHERE member_id = %s FOR UPDATE", (_id(member, "member"),)
        ).fetchone()
        if row is None:
            raise UserError(f"no member {member}")
        conn.execute("UPDATE members SET trading_state = %s WHERE member_id = %s", (state, member))
        return row[0]


def set_member_limits(
    cfg: Config,
    member: str,
    *,
    max_quantity: int | None = None,
    max_notional: str | None = None,
    orders_per_second: int | None = None,
    clear: bool = False,
) -> dict:
    """Sets the member's per-order and per-second limits (clear: back to the broker's); returns them."""
    from decimal import Decimal, InvalidOperation

    import psycopg

    notional = None
    if max_notional is not None:
        try:
            notional = Decimal(max_notional)
        except InvalidOperation as e:
            raise UserError(f"max notional {max_notional!r} is not a decimal") from e
    with psycopg.connect(cfg.postgres_dsn()) as conn, conn.transaction():
        if clear:
            conn.execute(
                "UPDATE members SET max_order_quantity = NULL, max_order_notional = NULL, "
                "max_orders_per_second = NULL WHERE member_id = %s",
                (_id(member, "member"),),
            )
        for column, value in (
            ("max_order_quantity", max_quantity),
            ("max_order_notional", notional),
            ("max_orders_per_second", orders_per_second),
        ):
            if value is not None:
                conn.execute(f"UPDATE members SET {column} = %s WHERE member_id = %s", (value, _id(member, "member")))
        row = conn.execute(
            "SELECT trading_state, max_order_quantity, max_order_notional, max_orders_per_second "
            "FROM members WHERE member_id = %s",
            (member,),
        ).fetchone()
        if row is None:
            raise UserError(f"no member {member}")
        return dict(zip(("trading_state", "max_order_quantity", "max_order_notional", "max_orders_per_second"), row))
