"""Reference data into Postgres (COPY, with progress) and back out (for the order and tick generators).

Loading is idempotent: refdata_loads remembers the scale, seed and as-of date loaded; loading the
same again is a no-op, loading different data needs replace=True (the tables are emptied first,
which Debezium carries to Kafka as deletes).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from decimal import Decimal

import psycopg

from brokerstream.common.config import Config
from brokerstream.common.errors import UserError
from brokerstream.gen import refdata
from brokerstream.gen.refdata import RefData

TABLES = ("equity_starts", "instruments", "accounts", "members")  # children first


class LoadConflict(UserError):
    pass


def ensure_generated_keys(conn, data: RefData) -> int:
    """The seed-derived keys of the generated members, labelled as test data; returns how many were
    missing. Keys issued with `./brokerstream keys` are never touched."""
    missing = 0
    for k in data.api_keys:
        missing += conn.execute(
            "INSERT INTO api_keys (key_sha256, key_id, member_id, label, status) VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT (key_sha256) DO NOTHING",
            (k.key_sha256, k.key_id, k.member_id, k.label, k.status),
        ).rowcount
    return missing


def load(cfg: Config, data: RefData, *, replace: bool = False, progress=print) -> str:
    with psycopg.connect(cfg.postgres_dsn()) as conn:
        existing = conn.execute("SELECT scale, seed, as_of, counts FROM refdata_loads").fetchall()
        if existing and [(s, seed, as_of) for s, seed, as_of, _ in existing] == [(data.scale, data.seed, data.as_of)]:
            counts = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
            if counts == existing[0][3]:
                with conn.transaction():
                    ensure_generated_keys(conn, data)
                return f"already loaded: scale {data.scale}, seed {data.seed}, as of {data.as_of} {counts}"
        present = conn.execute("SELECT count(*) FROM members").fetchone()[0]
        if (existing or present) and not replace:
            loaded = ", ".join(f"{s}/seed {seed}/{as_of}" for s, seed, as_of, _ in existing) or "unknown rows"
            raise LoadConflict(f"the reference tables hold other data ({loaded}); pass --replace to reload")
        with conn.transaction():
            if existing or present:
                progress(f"[refdata] emptying {', '.join(TABLES)}")
                for table in TABLES:
                    conn.execute(f"DELETE FROM {table}")
                conn.execute("DELETE FROM refdata_loads")
                conn.execute("DELETE FROM api_keys WHERE label LIKE 'generated test data%'")
            for table, columns, rows in refdata.rows(data):
                t0 = time.monotonic()
                with conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                    for n, row in enumerate(rows, 1):
                        copy.write_row(row)
                        if n % 200_000 == 0:
                            progress(f"[refdata] {table}: {n:,} of {len(rows):,} rows")
                elapsed = time.monotonic() - t0
                progress(f"[refdata] {table}: {len(rows):,} rows in {elapsed:.1f} s")
            ensure_generated_keys(conn, data)
            progress(f"[refdata] api_keys: {len(data.api_keys):,} generated test keys (seed {data.seed})")
            conn.execute(
                "INSERT INTO refdata_loads (scale, seed, as_of, counts) VALUES (%s, %s, %s, %s)",
                (data.scale, data.seed, data.as_of, json.dumps(data.counts())),
            )
    return f"loaded scale {data.scale}, seed {data.seed}, as of {data.as_of}: {data.counts()}"


def _micros(value: Decimal | None) -> int | None:
    return None if value is None else int(value.scaleb(6))


def read(cfg: Config) -> RefData:
    """The reference data as it is now in Postgres (including edits since it was generated)."""
    with psycopg.connect(cfg.postgres_dsn()) as conn:
        load_row = conn.execute("SELECT scale, seed, as_of FROM refdata_loads").fetchone()
        scale, seed, as_of = load_row if load_row else ("unknown", 0, dt.date.today())
        data = RefData(scale=scale, seed=seed, as_of=as_of)
        data.members = [
            refdata.Member(m, n, s, _micros(c), ts, mq, _micros(mn), mr)
            for m, n, s, c, ts, mq, mn, mr in conn.execute(
                "SELECT member_id, name, status, credit_limit, trading_state, max_order_quantity, "
                "max_order_notional, max_orders_per_second FROM members ORDER BY member_id"
            )
        ]
        data.accounts = [
            refdata.Account(a, m, s, _micros(c), sh)
            for a, m, s, c, sh in conn.execute(
                "SELECT account_id, member_id, status, cash_balance, short_allowed FROM accounts ORDER BY account_id"
            )
        ]
        data.instruments = [
            refdata.Instrument(i, sym, cur, ex, name, kind, status, und, und_sym, mat, ot, _micros(k), mult, style)
            for i, sym, cur, ex, name, kind, status, und, und_sym, mat, ot, k, mult, style in conn.execute(
                "SELECT instrument_id, symbol, currency, exchange, name, instrument_type, status, underlying_id, "
                "underlying_symbol, maturity, option_type, strike, multiplier, exercise_style FROM instruments "
                "ORDER BY instrument_type, instrument_id"
            )
        ]
        data.equity_starts = [
            refdata.EquityStart(i, _micros(p), v)
            for i, p, v in conn.execute(
                "SELECT instrument_id, start_price, volatility FROM equity_starts ORDER BY instrument_id"
            )
        ]
        data.api_keys = [
            refdata.ApiKey(*row)
            for row in conn.execute(
                "SELECT key_sha256, key_id, member_id, label, status FROM api_keys WHERE label = %s ORDER BY member_id",
                (refdata.GENERATED_LABEL.format(seed=seed),),
            )
        ]
    return data
