"""The load driver's own choices, without a stack."""

import pytest

from brokerstream.common import config
from brokerstream.loadtest import driver


@pytest.mark.parametrize(
    "setting, argv",
    [("1", []), ("", []), ("2", ["--processes", "2"]), ("8", ["--processes", "8"])],
)
def test_locust_runs_one_process_or_its_own_master_and_workers(setting, argv):
    assert driver.locust_processes(config.load(environ={"BS_LOAD_PROCESSES": setting})) == argv


@pytest.mark.parametrize("setting", ["0", "65", "-1"])
def test_a_process_count_out_of_range_is_refused(setting):
    with pytest.raises(ValueError, match="BS_LOAD_PROCESSES"):
        driver.locust_processes(config.load(environ={"BS_LOAD_PROCESSES": setting}))
