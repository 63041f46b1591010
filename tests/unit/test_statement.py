"""The account statement's documents: money as exact decimal text, times in UTC, totals exact."""

import csv
import datetime as dt
import io
import json
from decimal import Decimal

import pytest

from brokerstream.ops.statement import COLUMNS, Statement, parse_time

T0 = dt.datetime(2026, 11, 24, 14, 30, tzinfo=dt.timezone.utc)


def _line(kind, cash=None, pnl=None, **kw):
    line = dict.fromkeys(COLUMNS)
    line.update(ts=T0, kind=kind, order_id="o-1", instrument_id="EQ1", cash_movement=cash, realized_pnl=pnl, **kw)
    return line


def _statement(lines):
    return Statement("A1", "M1", T0, T0 + dt.timedelta(days=1), Decimal("1000.000000"), lines)


def test_totals_add_exactly_and_json_carries_money_as_text():
    # 0.1 + 0.2 in binary floating point is not 0.3; the statement never goes through it
    s = _statement(
        [
            _line("FILL", Decimal("-0.100000"), Decimal("0")),
            _line("FILL", Decimal("-0.200000"), Decimal("0.000001")),
            _line("OPEN", price=Decimal("99.5")),
            _line("REJECTED", detail="NO_PRICE: x"),
        ]
    )
    assert s.cash_movement == Decimal("-0.3") and s.realized_pnl == Decimal("0.000001")
    doc = json.loads(s.to_json())
    assert doc["cash_movement"] == "-0.300000" and doc["realized_pnl"] == "0.000001"
    assert doc["counts"] == {"FILL": 2, "OPEN": 1, "REJECTED": 1}
    assert doc["lines"][2]["price"] == "99.500000" and doc["lines"][0]["ts"] == "2026-11-24T14:30:00+00:00"


def test_csv_has_the_columns_and_empty_cells_for_nothing():
    rows = list(csv.reader(io.StringIO(_statement([_line("CANCELLED", detail="by the member")]).to_csv())))
    assert rows[0] == list(COLUMNS)
    assert rows[1][COLUMNS.index("cash_movement")] == "" and rows[1][COLUMNS.index("detail")] == "by the member"


def test_times_without_a_zone_are_utc_and_garbage_is_refused():
    assert parse_time("2026-11-24T14:30") == T0
    assert parse_time("2026-11-24T15:30+01:00") == T0
    assert parse_time("2026-11-24T14:30Z") == T0
    with pytest.raises(ValueError):
        parse_time("yesterday")
