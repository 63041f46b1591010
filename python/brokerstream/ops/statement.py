"""An account's statement and an order's history, from Postgres (the audit trail the sinks keep).

order_results holds each order's final outcome (one row per order), order_events the steps of working
orders' lives (OPEN, AMENDED, TRIGGERED, CANCELLED, EXPIRED, refused cancels and amends). A fill's cash
movement is computed in Postgres numerics from its row: -(signed quantity) x fill price x multiplier, the
same rule the order flow books; nothing passes through binary floating point. Times are the broker's.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from dataclasses import dataclass
from decimal import Decimal

import psycopg

from brokerstream.common.config import Config

COLUMNS = (
    "ts",
    "kind",
    "order_id",
    "instrument_id",
    "side",
    "quantity",
    "price",
    "cash_movement",
    "realized_pnl",
    "status",
    "detail",
)

# One query, every line of the statement in time order. Each final outcome is one line (a fill with its
# cash and realized P&L, or a rejection, cancel, expiry with why); each step of a working order one line.
_STATEMENT = """
SELECT r.processed_ts AS ts,
       CASE r.status WHEN 'ACCEPTED' THEN 'FILL' ELSE r.status END AS kind,
       r.order_id, r.instrument_id, r.side, r.quantity, r.fill_price AS price,
       CASE WHEN r.status = 'ACCEPTED'
            THEN -(CASE r.side WHEN 'BUY' THEN r.quantity ELSE -r.quantity END) * r.fill_price * i.multiplier
       END AS cash_movement,
       CASE WHEN r.status = 'ACCEPTED' THEN r.realized_pnl END AS realized_pnl,
       r.status, COALESCE(r.reason || ': ' || r.reason_detail, r.reason_detail) AS detail
  FROM order_results r LEFT JOIN instruments i ON i.instrument_id = r.instrument_id
 WHERE r.account_id = %(account)s AND r.processed_ts >= %(start)s AND r.processed_ts < %(end)s
UNION ALL
SELECT e.ts, e.event, e.order_id, e.instrument_id, NULL, e.quantity, e.price, NULL, NULL, NULL, e.detail
  FROM order_events e
 WHERE e.account_id = %(account)s AND e.ts >= %(start)s AND e.ts < %(end)s
ORDER BY 1, 3, 2
"""

_ACCOUNT = "SELECT member_id, cash_balance FROM accounts WHERE account_id = %s"


class UnknownAccount(LookupError):
    pass


@dataclass
class Statement:
    account_id: str
    member_id: str
    start: dt.datetime
    end: dt.datetime
    deposited_cash: Decimal
    lines: list[dict]

    @property
    def cash_movement(self) -> Decimal:
        return sum((ln["cash_movement"] for ln in self.lines if ln["cash_movement"] is not None), Decimal(0))

    @property
    def realized_pnl(self) -> Decimal:
        return sum((ln["realized_pnl"] for ln in self.lines if ln["realized_pnl"] is not None), Decimal(0))

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for ln in self.lines:
            out[ln["kind"]] = out.get(ln["kind"], 0) + 1
        return dict(sorted(out.items()))

    def to_json(self) -> str:
        return json.dumps(
            {
                "account_id": self.account_id,
                "member_id": self.member_id,
                "from": self.start.isoformat(),
                "to": self.end.isoformat(),
                "deposited_cash": _text(self.deposited_cash),
                "cash_movement": _text(self.cash_movement),
                "realized_pnl": _text(self.realized_pnl),
                "counts": self.counts(),
                "lines": [{k: _text(v) for k, v in ln.items()} for ln in self.lines],
            },
            indent=2,
        )

    def to_csv(self) -> str:
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(COLUMNS)
        for ln in self.lines:
            w.writerow(["" if ln[c] is None else _text(ln[c]) for c in COLUMNS])
        return out.getvalue()


def _text(v):
    """Money as its exact decimal text (scale 6), times as ISO 8601 UTC; the rest as they are."""
    if isinstance(v, Decimal):
        return f"{v.quantize(Decimal('0.000001')):f}"
    if isinstance(v, dt.datetime):
        return v.astimezone(dt.timezone.utc).isoformat()
    return v


def statement(cfg: Config, account_id: str, start: dt.datetime, end: dt.datetime) -> Statement:
    if end <= start:
        raise ValueError(f"the range is empty: from {start.isoformat()} to {end.isoformat()}")
    with psycopg.connect(cfg.postgres_dsn()) as conn:
        row = conn.execute(_ACCOUNT, (account_id,)).fetchone()
        if row is None:
            raise UnknownAccount(f"no account {account_id}")
        cur = conn.execute(_STATEMENT, {"account": account_id, "start": start, "end": end})
        lines = [dict(zip(COLUMNS, r)) for r in cur.fetchall()]
    return Statement(account_id, row[0], start, end, row[1], lines)


# Ordered by time, then placed < working steps < end: a step never shows before the order's arrival.
_HISTORY = """
SELECT ingest_ts, 0, 'PLACED', limit_price, quantity, NULL, NULL FROM order_results
 WHERE member_id = %(member)s AND order_id = %(order)s
UNION ALL
SELECT ts, 1, event, price, quantity, reserved, detail FROM order_events
 WHERE member_id = %(member)s AND order_id = %(order)s
UNION ALL
SELECT processed_ts, 2, CASE status WHEN 'ACCEPTED' THEN 'FILLED' ELSE status END, fill_price, quantity, NULL,
       COALESCE(reason || ': ' || reason_detail, reason_detail)
  FROM order_results WHERE member_id = %(member)s AND order_id = %(order)s
ORDER BY 1, 2
"""


def history(cfg: Config, member_id: str, order_id: str) -> list[dict]:
    """Every step of one order, in time order: placed, the steps of its working life, and its end (filled,
    rejected, cancelled, expired). The arrival comes from the result row, so an order still working starts
    at its OPEN step."""
    with psycopg.connect(cfg.postgres_dsn()) as conn:
        rows = conn.execute(_HISTORY, {"member": member_id, "order": order_id}).fetchall()
    steps = [dict(zip(("ts", "event", "price", "quantity", "reserved", "detail"), (r[0],) + r[2:])) for r in rows]
    return [{k: _text(v) for k, v in s.items()} for s in steps]


def parse_time(text: str) -> dt.datetime:
    """ISO 8601; a time without a zone is UTC (the broker's clock is)."""
    t = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)
