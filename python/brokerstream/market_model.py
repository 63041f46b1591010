"""The market model both flows price options with (pricing/src/main/resources/market-model.properties),
for the Python tools and tests: read from the same file the Java flows are built with."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .config import ROOT

MODEL_FILE = ROOT / "pricing" / "src" / "main" / "resources" / "market-model.properties"


@dataclass(frozen=True)
class MarketModel:
    rate: float
    american_put_horizon_years: float


def load(path: Path = MODEL_FILE) -> MarketModel:
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            values[key.strip()] = value.strip()
    return MarketModel(rate=float(values["rate"]),
                       american_put_horizon_years=float(values["american-put-horizon-years"]))
