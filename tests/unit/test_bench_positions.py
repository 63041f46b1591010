"""The benches' open positions: the same draws for a seed whichever architecture holds them, and a
draw that ends on a data set with few instruments."""
import datetime as dt

from brokerstream.bench.pnl import draw_positions
from brokerstream.gen import refdata

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
    assert [(p["account_id"], p["instrument_id"]) for p in opened] == \
           [(p["account_id"], p["instrument_id"]) for p in closed]
    assert all(p["quantity"] == 0 and p["version"] == 2 for p in closed)
