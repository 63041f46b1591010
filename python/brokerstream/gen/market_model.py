"""The market model both flows price options with (pricing/src/main/resources/market-model.properties),
for the Python tools and tests: read from the same file the Java flows are built with."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from brokerstream.common.config import ROOT

MODEL_FILE = ROOT / "pricing" / "src" / "main" / "resources" / "market-model.properties"
MILLIS_PER_DAY = 86_400_000


@dataclass(frozen=True)
class MarketModel:
    rate: float
    american_put_horizon_years: float
    days_per_year: float

    def years_to_expiry(self, maturity: dt.date, at_ms: int) -> float:
        """As OptionPricer.yearsToExpiry: to the end of the maturity day (UTC), in the model's years."""
        expiry_ms = (maturity.toordinal() - dt.date(1970, 1, 1).toordinal() + 1) * MILLIS_PER_DAY
        return max(0.0, (expiry_ms - at_ms) / (self.days_per_year * MILLIS_PER_DAY))


def load(path: Path = MODEL_FILE) -> MarketModel:
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            values[key.strip()] = value.strip()
    return MarketModel(
        rate=float(values["rate"]),
        american_put_horizon_years=float(values["american-put-horizon-years"]),
        days_per_year=float(values["days-per-year"]),
    )


@lru_cache(maxsize=1)
def current() -> MarketModel:
    """The model of the checked-out file, read once."""
    return load()
