"""Which equities are popular: one seeded ranking shared by the order and tick generators, so the
instruments members trade most are also the ones that tick most."""

from __future__ import annotations

import itertools
import random


def ranked(equity_ids: list[str], seed: int) -> list[str]:
    """The equities from most to least popular: a seeded permutation."""
    order = sorted(equity_ids)
    random.Random(f"popularity:{seed}").shuffle(order)
    return order


def zipf_weights(count: int, s: float) -> list[float]:
    """Weight of the k-th most popular of `count` items: 1/k^s."""
    return [1.0 / (k**s) for k in range(1, count + 1)]


def cumulative(weights: list[float]) -> list[float]:
    return list(itertools.accumulate(weights))
