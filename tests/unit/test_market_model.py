"""One market model: the rate and the American put model are defined in one file, which both flows and the Python
side read; no flow's own settings may define them again (the order flow once priced at 4 %, the P&L job
revalued at 5 %)."""

from __future__ import annotations

import datetime as dt

from brokerstream.common import config
from brokerstream.gen import market_model

ROOT = config.ROOT
FLOW_SETTINGS = (
    ROOT / "streams/src/main/resources/broker-defaults.properties",
    ROOT / "flink-jobs/src/main/resources/pnl.properties",
)


def test_the_model_is_read_from_the_pricing_module():
    model = market_model.load()
    assert 0 < model.rate < 1 and model.american_put_horizon_years > 0
    assert market_model.MODEL_FILE.is_file()


def test_no_flow_defines_its_own_rate_or_put_model():
    for path in FLOW_SETTINGS:
        keys = [
            line.split("=", 1)[0].strip()
            for line in path.read_text().splitlines()
            if "=" in line and not line.lstrip().startswith("#")
        ]
        assert not [
            k for k in keys if k.startswith("pricing.") or k in ("rate", "american-put-horizon-years", "days-per-year")
        ], (path, keys)


def test_a_file_is_parsed_as_java_properties(tmp_path):
    f = tmp_path / "m.properties"
    f.write_text("# comment\nrate = 0.031\namerican-put-horizon-years=2.5\ndays-per-year = 360\n")
    assert market_model.load(f) == market_model.MarketModel(0.031, 2.5, 360)


def test_time_to_maturity_is_the_java_flows_convention():
    # the same cases as OptionPricerTest.timeToMaturityRunsToTheEndOfTheMaturityDayInTheModelsYears
    model = market_model.MarketModel(0.05, 5, 365)
    maturity = dt.date(2026, 12, 31)
    new_year = int(dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc).timestamp() * 1000)
    assert model.years_to_expiry(maturity, new_year) == 1.0
    assert model.years_to_expiry(maturity, new_year + 182 * 86_400_000 + 43_200_000) == 182.5 / 365
    assert model.years_to_expiry(maturity, new_year + 365 * 86_400_000) == 0.0
    assert model.years_to_expiry(maturity, new_year + 400 * 86_400_000) == 0.0
    assert market_model.MarketModel(0.05, 5, 360).years_to_expiry(maturity, new_year) == 365 / 360
