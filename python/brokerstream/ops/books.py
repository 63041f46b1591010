"""A position folded from its fills in exact decimals: the flow's arithmetic (PositionMath), written once for
every check that replays fills (the flow check over Kafka, the reconciliation over Postgres)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal

MICRO = Decimal("0.000001")


@dataclass
class Book:
    """One position folded from its fills, in exact decimals (the flow's arithmetic, PositionMath)."""

    quantity: int = 0
    cost: Decimal = Decimal(0)  # exact cost of the open units, without the multiplier
    realized: Decimal = Decimal(0)
    cash: Decimal = Decimal(0)
    fills: int = 0

    def fill(self, side: str, quantity: int, price: Decimal, multiplier: int) -> None:
        d = quantity if side == "BUY" else -quantity
        q0, q1 = self.quantity, self.quantity + d
        if q0 == 0 or (q0 > 0) == (d > 0):
            self.cost += price * abs(d)
        else:
            closed = min(abs(d), abs(q0))
            share = (
                self.cost
                if closed == abs(q0)
                else (self.cost * closed / abs(q0)).quantize(MICRO, rounding=ROUND_HALF_EVEN)
            )
            proceeds = price * closed
            self.realized += (proceeds - share if q0 > 0 else share - proceeds) * multiplier
            if q1 == 0:
                self.cost = Decimal(0)
            elif (q1 > 0) == (q0 > 0):
                self.cost -= share
            else:
                self.cost = price * abs(q1)
        self.quantity = q1
        self.cash -= d * price * multiplier
        self.fills += 1

    @property
    def avg_cost(self) -> Decimal:
        """The exact cost over the open quantity, rounded half-even to the micro (as the flow shows it)."""
        if self.quantity == 0:
            return Decimal(0).quantize(MICRO)
        return (self.cost / abs(self.quantity)).quantize(MICRO, rounding=ROUND_HALF_EVEN)
