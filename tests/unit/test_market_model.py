"""One market model: the rate and the American put model are defined in one file, which both flows and the Python
side read; no flow's own settings may define them again (the order flow once priced at 4 %, the P&L job
revalued at 5 %)."""
from __future__ import annotations

from brokerstream import config, market_model

ROOT = config.ROOT
FLOW_SETTINGS = (ROOT / "streams/src/main/resources/broker-defaults.properties",
                 ROOT / "flink-jobs/src/main/resources/pnl.properties")


def test_the_model_is_read_from_the_pricing_module():
    model = market_model.load()
    assert 0 < model.rate < 1 and model.american_put_horizon_years > 0
    assert market_model.MODEL_FILE.is_file()


def test_no_flow_defines_its_own_rate_or_put_model():
    for path in FLOW_SETTINGS:
        keys = [line.split("=", 1)[0].strip() for line in path.read_text().splitlines()
                if "=" in line and not line.lstrip().startswith("#")]
        assert not [k for k in keys if k.startswith("pricing.") or k in ("rate", "american-put-horizon-years")], (path, keys)


def test_a_file_is_parsed_as_java_properties(tmp_path):
    f = tmp_path / "m.properties"
    f.write_text("# comment\nrate = 0.031\namerican-put-horizon-years=2.5\n")
    assert market_model.load(f) == market_model.MarketModel(0.031, 2.5)
