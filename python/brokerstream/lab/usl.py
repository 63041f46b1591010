"""The Universal Scalability Law fitted to measured steps, and projected beyond them.

    X(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1))

N is resources in units of the smallest measured step (so N >= 1), lambda the throughput of one unit
without contention, sigma the contention (serialized share), kappa the coherency (crosstalk) cost.
The fit is least squares (a grid, then a pattern search; lambda has a closed form for each pair), so
it needs no solver. kappa >= 0. sigma may be negative: Gunther's superlinear case, which a stack shows
when a fixed share of its CPU goes to services beside the measured flow, so that a small quota leaves
that flow less than its proportional share. Any pair whose denominator would reach zero before the
projection's horizon is refused, so the model never divides by zero or turns negative where it is drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Usl:
    lam: float
    sigma: float
    kappa: float
    unit: float  # resources (vCPUs) of N = 1
    r2: float

    def throughput(self, resources: float) -> float:
        n = resources / self.unit
        return self.lam * n / (1 + self.sigma * (n - 1) + self.kappa * n * (n - 1))

    def peak(self) -> float | None:
        """Resources where throughput peaks (None when it never does: kappa = 0)."""
        if self.kappa <= 0:
            return None
        return math.sqrt(max(1 - self.sigma, 0) / self.kappa) * self.unit


def _lam(n: np.ndarray, x: np.ndarray, sigma: float, kappa: float) -> tuple[float, float]:
    shape = n / (1 + sigma * (n - 1) + kappa * n * (n - 1))
    lam = float(shape @ x / (shape @ shape))
    return lam, float(((x - lam * shape) ** 2).sum())


SIGMA_MIN = -0.9


def _valid(sigma: float, kappa: float, n_max: float) -> bool:
    """The denominator stays above a margin for every N in [1, n_max] (it is convex in N)."""
    ends = [1 + sigma * (n - 1) + kappa * n * (n - 1) for n in (1.0, n_max)]
    n_min = (kappa - sigma) / (2 * kappa) if kappa > 0 else None
    if n_min is not None and 1 < n_min < n_max:
        ends.append(1 + sigma * (n_min - 1) + kappa * n_min * (n_min - 1))
    return min(ends) > 0.05


def fit(resources: list[float], throughput: list[float], horizon: float = 64.0) -> Usl:
    """Fits the law to (resources, throughput) pairs (three distinct resource levels at least); the
    model must stay defined up to `horizon` resources."""
    pairs = [(r, x) for r, x in zip(resources, throughput) if r > 0 and x > 0 and math.isfinite(x)]
    if len({r for r, _ in pairs}) < 3:
        raise ValueError("a USL fit needs measurements at three or more resource levels")
    unit = min(r for r, _ in pairs)
    n_max = max(horizon, max(r for r, _ in pairs)) / unit
    n = np.array([r / unit for r, _ in pairs])
    x = np.array([x for _, x in pairs])
    # a coarse grid (kappa on a log scale: it is often orders of magnitude below sigma), then a
    # pattern search from its best point with halving steps
    best = min(
        (_lam(n, x, sg, kp)[1], sg, kp)
        for sg in np.linspace(SIGMA_MIN, 1, 191)
        for kp in np.concatenate(([0.0], np.logspace(-7, 0, 120)))
        if _valid(sg, kp, n_max)
    )
    sse, sg, kp = best
    ds, dk = 0.01, max(kp, 1e-6)
    while ds > 1e-10 or dk > 1e-12:
        moved = False
        for cs, ck in ((sg + ds, kp), (sg - ds, kp), (sg, kp + dk), (sg, kp - dk)):
            if cs < SIGMA_MIN or ck < 0 or not _valid(cs, ck, n_max):
                continue
            e = _lam(n, x, cs, ck)[1]
            if e < sse:
                sse, sg, kp, moved = e, cs, ck, True
                break
        if not moved:
            ds, dk = ds / 2, dk / 2
    best = (sse, _lam(n, x, sg, kp)[0], sg, kp)
    sse, lam, sigma, kappa = best
    total = float(((x - x.mean()) ** 2).sum())
    return Usl(lam=lam, sigma=sigma, kappa=kappa, unit=unit, r2=1 - sse / total if total > 0 else 1.0)
