"""The exact fold of fills that the flow check and the reconciliation share, against hand-computed books."""

from decimal import Decimal as D

import pytest

from brokerstream.ops.books import Book

CASES = [
    # fills (side, quantity, price, multiplier) -> quantity, exact cost, average cost, realized, cash
    ("open", [("BUY", 10, "1.5", 1)], 10, "15.0", "1.500000", "0", "-15.0"),
    ("add", [("BUY", 1, "1", 1), ("BUY", 2, "2", 1)], 3, "5", "1.666667", "0", "-5"),
    (
        "close a third",
        [("BUY", 1, "1", 1), ("BUY", 2, "2", 1), ("SELL", 1, "3", 1)],
        2,
        "3.333333",
        "1.666666",  # 3.333333 / 2 = 1.6666665, half-even
        "1.333333",
        "-2",
    ),
    ("close all", [("BUY", 4, "2", 1), ("SELL", 4, "3", 1)], 0, "0", "0.000000", "4", "4"),
    ("short then cover at a loss", [("SELL", 2, "10", 1), ("BUY", 2, "11", 1)], 0, "0", "0.000000", "-2", "-2"),
    (
        "flip long to short opens at the fill price",
        [("BUY", 2, "10", 1), ("SELL", 5, "12", 1)],
        -3,
        "36",
        "12.000000",
        "4",
        "40",
    ),
    (
        "an option's multiplier scales P&L and cash, not cost",
        [("BUY", 1, "2", 100), ("SELL", 1, "3", 100)],
        0,
        "0",
        "0.000000",
        "100",
        "100",
    ),
]


@pytest.mark.parametrize("name,fills,quantity,cost,avg,realized,cash", CASES, ids=[c[0] for c in CASES])
def test_fold(name, fills, quantity, cost, avg, realized, cash):
    b = Book()
    for side, q, price, multiplier in fills:
        b.fill(side, q, D(price), multiplier)
    assert (b.quantity, b.cost, b.avg_cost, b.realized, b.cash) == (
        quantity,
        D(cost),
        D(avg),
        D(realized),
        D(cash),
    )
    assert b.fills == len(fills)
