"""A scalability model that states its limits: the stack's fixed overhead taken out, the Universal
Scalability Law fitted to what is left, every term and projection with a band, the largest step held
out to test the model, and projections drawn only as far as that test supports.

- **Overhead.** A stack spends CPU whatever the load (brokers, Connect, the P&L job, Postgres,
  heartbeats). With a quota of Q vCPU and an idle stack using O cores, the flow has Q - O; fitting the
  law to Q instead makes small quotas look starved and the curve superlinear (sigma < 0). The model is
  X(Q) = USL(Q - O), O measured at each step (the idle stack under that step's quota).
- **Uncertainty.** A bootstrap over repeats: each resample draws, at every resource level, that many
  runs from the level's own runs; a level measured once takes its single run with a relative error
  drawn from the other levels' run-to-run spread, or (no repeats anywhere) from the fit's residuals,
  which understates the spread, and the verdict says so. Bands are the 5th and 95th percentiles.
- **Validation.** With four or more levels the largest is held out: the law fitted to the others
  predicts it, and the error is printed. A prediction off by more than `tolerance` (or outside its
  band widened by it) fails.
- **Support.** A model that passed is drawn as far beyond the largest step as the held-out test
  reached beyond the rest (largest x largest / second largest); one that failed, or could not be
  tested, is not drawn beyond what was measured.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

import numpy as np

from brokerstream.lab import usl as usl_law

BAND = (5.0, 95.0)


@dataclass(frozen=True)
class Run:
    """One measured run: the step's quota (vCPU), the idle stack's cores under it (None: not measured),
    and the throughput."""

    vcpus: float
    idle_cores: float | None
    throughput: float


@dataclass(frozen=True)
class Holdout:
    vcpus: float
    measured: float
    predicted: float
    lo: float
    hi: float
    tolerance: float

    @property
    def error(self) -> float:
        """Relative error of the prediction: (predicted - measured) / measured."""
        return self.predicted / self.measured - 1

    @property
    def passed(self) -> bool:
        within = self.lo * (1 - self.tolerance) <= self.measured <= self.hi * (1 + self.tolerance)
        return abs(self.error) <= self.tolerance and within


@dataclass
class Model:
    law: usl_law.Usl  # over the flow's resources: quota minus the idle stack's cores
    overhead: float  # cores the idle stack uses (mean over the steps that measured it)
    overhead_measured: bool
    levels: list[float]  # distinct quotas measured
    boots: list[usl_law.Usl] = field(default_factory=list)
    repeats_known: bool = False  # the band comes from run-to-run spread, not only from residuals
    holdout: Holdout | None = None
    supported_to: float = 0.0  # the largest quota a curve may be drawn to

    def throughput(self, vcpus: float, law: usl_law.Usl | None = None) -> float:
        net = vcpus - self.overhead
        return (law or self.law).throughput(net) if net > 0 else 0.0

    def band(self, vcpus: float) -> tuple[float, float]:
        """The 90 % band of the throughput at `vcpus` over the bootstrap's fits (the fit itself when
        there are none)."""
        values = [self.throughput(vcpus, b) for b in self.boots] or [self.throughput(vcpus)]
        lo, hi = np.percentile(values, BAND)
        return float(lo), float(hi)

    def term_bands(self) -> dict[str, tuple[float, float, float]]:
        """Each fitted term: (value, lo, hi)."""
        out = {}
        for name in ("lam", "sigma", "kappa"):
            values = [getattr(b, name) for b in self.boots] or [getattr(self.law, name)]
            lo, hi = np.percentile(values, BAND)
            out[name] = (getattr(self.law, name), float(lo), float(hi))
        return out

    def verdict(self) -> str:
        """What a reader may trust of the model, in words."""
        h = self.holdout
        parts = []
        if not self.overhead_measured:
            parts.append("the idle stack's CPU was not measured, so no overhead was taken out")
        if h is None:
            parts.append(
                f"{len(self.levels)} resource levels: too few to hold one out and test the model, so it is not "
                "drawn beyond the measured steps"
            )
        elif not h.passed:
            parts.append(
                f"held out, the {h.vcpus:g} vCPU step was predicted at {h.predicted:,.0f}/s against "
                f"{h.measured:,.0f}/s measured ({h.error:+.0%}, band {h.lo:,.0f} to {h.hi:,.0f}): the model fails "
                f"its test and is not drawn beyond the measured steps"
            )
        else:
            parts.append(
                f"held out, the {h.vcpus:g} vCPU step was predicted at {h.predicted:,.0f}/s against "
                f"{h.measured:,.0f}/s measured ({h.error:+.0%}, within {h.tolerance:.0%}): the model is drawn to "
                f"{self.supported_to:g} vCPU, as far beyond the largest step as the test reached, and no further"
            )
        if not self.repeats_known:
            parts.append("one run per step: the bands come from the fit's residuals and understate run-to-run spread")
        return "; ".join(parts) + "."


def _levels(runs: list[Run]) -> dict[float, list[Run]]:
    out: dict[float, list[Run]] = {}
    for r in runs:
        out.setdefault(r.vcpus, []).append(r)
    return dict(sorted(out.items()))


def _overhead(runs: list[Run]) -> tuple[float, bool]:
    idle = [r.idle_cores for r in runs if r.idle_cores is not None and math.isfinite(r.idle_cores)]
    return (float(np.mean(idle)), True) if idle else (0.0, False)


def _fit(runs: list[Run], overhead: float, start=None) -> usl_law.Usl:
    # each run's own idle measurement where it has one: the overhead under that very quota
    net = [r.vcpus - (r.idle_cores if r.idle_cores is not None else overhead) for r in runs]
    return usl_law.fit(net, [r.throughput for r in runs], start=start)


def _resample(levels: dict[float, list[Run]], spread: list[float], rng: random.Random) -> list[Run]:
    out = []
    for runs in levels.values():
        if len(runs) > 1:
            out += [rng.choice(runs) for _ in runs]
        else:
            r = runs[0]
            out.append(Run(r.vcpus, r.idle_cores, r.throughput * (1 + rng.choice(spread))))
    return out


def _bootstrap(runs: list[Run], law, overhead, boots: int, seed: int) -> tuple[list[usl_law.Usl], bool]:
    levels = _levels(runs)
    spread = [
        r.throughput / float(np.mean([x.throughput for x in rs])) - 1
        for rs in levels.values()
        if len(rs) > 1
        for r in rs
    ]
    repeats_known = bool(spread)
    if not spread:  # no repeats: the fit's own relative residuals
        fitted = [(r, law.throughput(r.vcpus - overhead)) for r in runs if r.vcpus > overhead]
        spread = [r.throughput / x - 1 for r, x in fitted if x > 0]
    rng = random.Random(seed)
    fits = []
    for _ in range(boots):
        sample = _resample(levels, spread or [0.0], rng)
        try:
            fits.append(_fit(sample, overhead, start=(law.sigma, law.kappa)))
        except ValueError:
            continue
    return fits, repeats_known


def build(runs: list[Run], *, boots: int = 200, seed: int = 7, tolerance: float = 0.15, validate: bool = True) -> Model:
    """The model of `runs` (three quota levels at least; ValueError otherwise); `validate` holds out the
    largest level (the model that predicts it needs no test of its own)."""
    runs = [r for r in runs if r.vcpus > 0 and r.throughput > 0 and math.isfinite(r.throughput)]
    overhead, measured = _overhead(runs)
    law = _fit(runs, overhead)
    levels = list(_levels(runs))
    fits, repeats_known = _bootstrap(runs, law, overhead, boots, seed)
    model = Model(law, overhead, measured, levels, fits, repeats_known)
    if validate and len(levels) >= 4:
        largest = levels[-1]
        rest = [r for r in runs if r.vcpus != largest]
        reduced = build(rest, boots=boots, seed=seed, tolerance=tolerance, validate=False)
        measured_x = float(np.mean([r.throughput for r in runs if r.vcpus == largest]))
        lo, hi = reduced.band(largest)
        model.holdout = Holdout(largest, measured_x, reduced.throughput(largest), lo, hi, tolerance)
    model.supported_to = (
        levels[-1] * levels[-1] / levels[-2] if model.holdout is not None and model.holdout.passed else levels[-1]
    )
    return model
