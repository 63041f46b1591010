"""Price ticks: geometric Brownian motion per equity.

new price = p * exp((mu - sigma^2 / 2) * dt + sigma * sqrt(dt) * Z), Z ~ N(0, 1), each new price the
next start; mu = 0 by default, sigma and the first p from the equity's start data. Every round (one
`interval`), each equity ticks with its own probability, proportional to its popularity so that the
expected ticks per second is `rate`. Each equity draws from its own random stream, seeded by the run
seed and its id: the same seed gives the same path for an equity whatever else is generated.

The GBM state is a float (model maths); the emitted price is rounded to the micro (scale 6).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from brokerstream.gen import market_model, popularity
from brokerstream.gen.refdata import RefData

SECONDS_PER_YEAR = market_model.current().days_per_year * 24 * 3600  # volatilities are per model year


@dataclass
class Equity:
    instrument_id: str
    price: float  # current GBM state, in currency units
    sigma: float
    p_tick: float  # probability of a tick in one round
    rng: random.Random
    last_round: int = 0
    sequence: int = 0


@dataclass(frozen=True)
class Tick:
    instrument_id: str
    price_micros: int
    event_ts_ms: int
    sequence: int


def gbm_step(price: float, mu: float, sigma: float, dt_years: float, z: float) -> float:
    return price * math.exp((mu - 0.5 * sigma * sigma) * dt_years + sigma * math.sqrt(dt_years) * z)


class TickGenerator:
    def __init__(
        self,
        data: RefData,
        seed: int,
        *,
        rate: float = 10_000,
        interval: float | None = None,
        mu: float = 0.0,
        time_scale: float = 1.0,
        zipf_s: float = 1.1,
    ):
        """interval None: the longest round from 0.1 s down to 5 ms in which at most a few popular
        equities need more than one tick. An equity whose share of a round is above one tick ticks
        several times in it (each a GBM step over its part of the round), so the rate is as asked."""
        if rate <= 0 or (interval is not None and interval <= 0):
            raise ValueError("rate and interval must be positive")
        self.mu, self.time_scale = mu, time_scale
        starts = {s.instrument_id: s for s in data.equity_starts}
        active = [
            i.instrument_id
            for i in data.instruments
            if i.instrument_type == "EQUITY" and i.status == "ACTIVE" and i.instrument_id in starts
        ]
        ranked = popularity.ranked(active, seed)
        weights = popularity.zipf_weights(len(ranked), zipf_s)
        total = sum(weights)
        if interval is None:
            interval = 0.1
            while (
                interval > 0.005 and sum(min(1.0, rate * interval * w / total) for w in weights) < 0.9 * rate * interval
            ):
                interval = max(0.005, interval / 2)
        self.interval = interval
        per_round = rate * interval
        self.equities = [
            Equity(
                instrument_id=i,
                price=starts[i].start_price / 1e6,
                sigma=starts[i].volatility,
                p_tick=per_round * w / total,
                rng=random.Random(f"ticks:{seed}:{i}"),
            )
            for i, w in zip(ranked, weights)
        ]
        self.round_no = 0

    @property
    def expected_rate(self) -> float:
        """Ticks per second this generator will produce on average."""
        return sum(e.p_tick for e in self.equities) / self.interval

    def snapshot(self, now_ms: int) -> list[Tick]:
        """One tick per equity at its current price: the opening prices every order needs."""
        ticks = []
        for e in self.equities:
            e.sequence += 1
            ticks.append(Tick(e.instrument_id, max(1, round(e.price * 1e6)), now_ms, e.sequence))
        return ticks

    def next_round(self, now_ms: int) -> list[Tick]:
        self.round_no += 1
        ticks = []
        for e in self.equities:
            count = int(e.p_tick)
            if e.rng.random() < e.p_tick - count:
                count += 1
            if not count:
                continue
            dt_years = (self.round_no - e.last_round) * self.interval * self.time_scale / SECONDS_PER_YEAR / count
            for _ in range(count):
                e.price = gbm_step(e.price, self.mu, e.sigma, dt_years, e.rng.gauss(0.0, 1.0))
                e.sequence += 1
                ticks.append(Tick(e.instrument_id, max(1, round(e.price * 1e6)), now_ms, e.sequence))
            e.last_round = self.round_no
        return ticks
