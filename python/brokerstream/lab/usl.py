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


def _grid_best(n: np.ndarray, x: np.ndarray, sigmas: np.ndarray, kappas: np.ndarray, n_max: float):
    """(sse, sigma, kappa) of the best valid grid point, every pair at once."""
    sg, kp = np.meshgrid(sigmas, kappas, indexing="ij")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # invalid pairs are masked below
        shape = n / (1 + sg[..., None] * (n - 1) + kp[..., None] * n * (n - 1))
        lam = (shape @ x) / (shape * shape).sum(-1)
        sse = ((x - lam[..., None] * shape) ** 2).sum(-1)

    # validity: the denominator's minimum over [1, n_max] (at an end, or at the parabola's vertex)
    def den(v):
        return 1 + sg * (v - 1) + kp * v * (v - 1)

    with np.errstate(divide="ignore", invalid="ignore"):
        vertex = np.where(kp > 0, (kp - sg) / (2 * kp), 0.0)
    inside = (vertex > 1) & (vertex < n_max)
    low = np.minimum(den(1.0), den(n_max))
    low = np.where(inside, np.minimum(low, den(np.clip(vertex, 1, n_max))), low)
    sse = np.where((low > 0.05) & np.isfinite(sse), sse, np.inf)
    i = np.unravel_index(int(np.argmin(sse)), sse.shape)
    return float(sse[i]), float(sg[i]), float(kp[i])


def fit(
    resources: list[float], throughput: list[float], horizon: float = 64.0, start: tuple[float, float] | None = None
) -> Usl:
    """Fits the law to (resources, throughput) pairs (three distinct resource levels at least); the
    model must stay defined up to `horizon` resources. `start` (sigma, kappa) skips the coarse grid:
    a bootstrap refits near the full fit's terms."""
    pairs = [(r, x) for r, x in zip(resources, throughput) if r > 0 and x > 0 and math.isfinite(x)]
    if len({r for r, _ in pairs}) < 3:
        raise ValueError("a USL fit needs measurements at three or more resource levels")
    unit = min(r for r, _ in pairs)
    n_max = max(horizon, max(r for r, _ in pairs)) / unit
    n = np.array([r / unit for r, _ in pairs])
    x = np.array([x for _, x in pairs])
    # a coarse grid (kappa on a log scale: it is often orders of magnitude below sigma), then a
    # pattern search from its best point with halving steps
    if start is not None:
        # a refit near known terms: a local grid around them
        sigmas = np.linspace(max(SIGMA_MIN, start[0] - 0.3), min(1.0, start[0] + 0.3), 61)
        kappas = np.concatenate(([0.0], np.linspace(0, 4 * start[1] + 1e-4, 61)[1:]))
    else:
        sigmas = np.linspace(SIGMA_MIN, 1, 191)
        kappas = np.concatenate(([0.0], np.logspace(-7, 0, 120)))
    sse, sg, kp = _grid_best(n, x, sigmas, kappas, n_max)
    if not math.isfinite(sse):
        raise ValueError("no valid USL terms fit these points")
    # a pattern search from the grid's best point, with halving steps
    ds, dk = 0.01, max(kp, 1e-6)
    for _ in range(2000):
        if ds <= 1e-9 and dk <= 1e-12:
            break
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
    r2 = 1 - sse / total if total > 0 else 1.0
    return Usl(lam=lam, sigma=float(sigma), kappa=float(kappa), unit=unit, r2=r2)
