"""The search for a sustained capacity: which constant rate to try next, given the rates tried so far and
whether each held the SLO, and what the rungs found. Pure (no I/O): `bench system` runs the rungs.

From a starting guess the search climbs by `factor` while rungs hold, or descends by it while they fail,
until it has a rate that held below one that failed; it then bisects that bracket (geometrically)
`refine` times. It never runs more than `max_rungs` rungs. What it found is one of:

- a capacity: the highest rate that held below the lowest rate that failed (a measurement, bracketed);
- a floor: every rung held (the search ran out of rungs climbing): the system holds at least this much;
- a ceiling: every rung failed down to `min_rate`: the system holds less than the lowest rate tried.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Found:
    rate: float | None  # the capacity (or the floor); None when no rate held
    is_floor: bool  # no rung failed: `rate` is a lower bound, not the capacity
    ceiling: float | None  # the lowest rate that failed, when one did

    def describe(self, unit: str = "orders/s") -> str:
        if self.rate is None:
            return f"no rate held: below {self.ceiling:,.0f} {unit} (a ceiling)"
        if self.is_floor:
            return f"unbroken at {self.rate:,.0f} {unit} (a floor, not a capacity)"
        return f"{self.rate:,.0f} {unit} (held; {self.ceiling:,.0f} failed)"


@dataclass(frozen=True)
class Search:
    start: float
    factor: float = 1.5
    refine: int = 1
    max_rungs: int = 6
    min_rate: float = 25.0

    def __post_init__(self):
        if self.start <= 0 or self.factor <= 1 or self.refine < 0 or self.max_rungs < 1 or self.min_rate <= 0:
            raise ValueError("start > 0, factor > 1, refine >= 0, max_rungs >= 1 and min_rate > 0 are required")

    def next_rate(self, tried: list[tuple[float, bool]]) -> float | None:
        """The next rung's rate, or None when the search is done."""
        if len(tried) >= self.max_rungs:
            return None
        if not tried:
            return max(self.start, self.min_rate)
        held = [r for r, ok in tried if ok]
        failed = [r for r, ok in tried if not ok]
        if not failed:
            return tried[-1][0] * self.factor
        if not held or min(held) >= min(failed):
            lower = min(failed) / self.factor
            return lower if lower >= self.min_rate else None
        lo, hi = _bracket(tried)
        if self._bisections(tried) >= self.refine or hi / lo < 1.05:
            return None
        return math.sqrt(lo * hi)

    def _bisections(self, tried: list[tuple[float, bool]]) -> int:
        """Rungs run after the first bracket (a held rate below a failed one) was found."""
        for k in range(len(tried)):
            prefix = tried[: k + 1]
            held = [r for r, ok in prefix if ok]
            failed = [r for r, ok in prefix if not ok]
            if held and failed and min(held) < min(failed):
                return len(tried) - (k + 1)
        return 0

    @staticmethod
    def found(tried: list[tuple[float, bool]]) -> Found:
        failed = [r for r, ok in tried if not ok]
        held = [r for r, ok in tried if ok]
        if not failed:
            return Found(max(held) if held else None, True, None)
        below = [r for r in held if r < min(failed)]
        return Found(max(below) if below else None, False, min(failed))


def _bracket(tried: list[tuple[float, bool]]) -> tuple[float, float]:
    lowest_failed = min(r for r, ok in tried if not ok)
    return max(r for r, ok in tried if ok and r < lowest_failed), lowest_failed
