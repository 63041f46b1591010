"""The collector reads an order result's status from its bytes without decoding it: every status of the
schema,
CANCELLED (a working order taken off) and EXPIRED (a DAY order at the close) included, lands in its own count."""

import datetime as dt
import io
from decimal import Decimal

import fastavro

from brokerstream.clients.schemas import load_schema
from brokerstream.metrics.collector import STATUS_COUNTS, result_status


def _encoded(status: str) -> bytes:
    schema = fastavro.parse_schema(load_schema("OrderResult"))
    now = dt.datetime(2026, 11, 24, tzinfo=dt.timezone.utc)
    out = io.BytesIO()
    fastavro.schemaless_writer(
        out,
        schema,
        {
            "order_id": "o-1",
            "member_id": "M1",
            "account_id": "A1",
            "instrument_id": "EQ1",
            "side": "BUY",
            "quantity": 3,
            "status": status,
            "reason": None,
            "reason_detail": None,
            "fill_price": Decimal("1.000000") if status == "ACCEPTED" else None,
            "realized_pnl": None,
            "client_ts": now,
            "ingest_ts": now,
            "processed_ts": now,
            "trace_id": None,
            "limit_price": None,
            "short_sale": False,
        },
    )
    return b"\0\0\0\0\1" + out.getvalue()


def test_every_status_symbol_has_its_count():
    symbols = load_schema("OrderStatus")["symbols"]
    assert len(symbols) == len(STATUS_COUNTS)
    for status in symbols:
        assert STATUS_COUNTS[result_status(_encoded(status))] == f"orders_{status.lower()}"
