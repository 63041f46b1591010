"""The lab's two architectures: which app, which group, where the baseline's settings come from, and
that the launcher leaves the optional baseline out of a plain `up`."""

import pytest

from brokerstream.common import config
from brokerstream.launcher.stack import Stack
from brokerstream.loadtest.bench import architectures


def test_the_baseline_settings_are_its_defaults_then_the_file_then_the_environment(tmp_path, monkeypatch):
    file = tmp_path / "b.properties"
    file.write_text("# knobs\ngroups.orders = tuned-orders\ndb.schema=tuned\n")
    cfg = config.load(environ={"BS_BASELINE_CONFIG": str(file)})
    monkeypatch.delenv("BASELINE_DB_SCHEMA", raising=False)
    assert architectures.baseline_setting(cfg, "groups.orders") == "tuned-orders"
    assert architectures.baseline_setting(cfg, "topics.results") == "order-results"  # a default
    monkeypatch.setenv("BASELINE_DB_SCHEMA", "from_env")
    assert architectures.baseline_setting(cfg, "db.schema") == "from_env"


def test_the_shipped_settings_file_names_only_known_keys():
    defaults = architectures.read_properties(architectures.BASELINE_DEFAULTS)
    shipped = architectures.read_properties(config.ROOT / "platform" / "baseline.properties")
    assert shipped and set(shipped) <= set(defaults)


def test_each_architecture_names_its_app_group_and_the_other():
    cfg = config.load(environ={})
    streams, baseline = architectures.of("streams"), architectures.of("baseline")
    assert (streams.app, streams.other, streams.orders_group(cfg)) == ("streams", "baseline", "brokerstream-orders")
    assert (baseline.app, baseline.other, baseline.orders_group(cfg)) == ("baseline", "streams", "baseline-orders")
    assert streams.revalued_survives_restart and not baseline.revalued_survives_restart
    with pytest.raises(ValueError, match="unknown architecture"):
        architectures.of("monolith")


def test_a_plain_up_leaves_the_optional_baseline_out_and_naming_it_brings_what_it_needs(tmp_path):
    stack = Stack(config.load(environ={"BS_DATA_DIR": str(tmp_path)}))
    everything = stack.closure(None)
    assert "streams" in everything and "baseline" not in everything
    assert stack.closure(["baseline"])[-1] == "baseline"
    assert {"kafka", "registry", "postgres"} <= set(stack.closure(["baseline"]))


@pytest.mark.parametrize("which", ["pnl", "sink", "gateway", "pricing", "tracing"])
def test_benches_of_one_part_refuse_the_baseline(which):
    """Only drain and system have a baseline counterpart; the others would measure the streams app
    while the user believed it was the monolith."""
    import subprocess

    proc = subprocess.run(
        [str(config.ROOT / "brokerstream"), "bench", which, "--architecture", "baseline"],
        text=True,
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert f"bench {which} measures a part of the stream-native system" in proc.stderr
