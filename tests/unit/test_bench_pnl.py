"""bench pnl's reading of the job's counters, against a stand-in for Flink's REST API."""

import pytest

from brokerstream.loadtest.bench import pnl


class CachedCounters:
    """Serves the same counters until `refresh_after` reads, like the JobManager's metric cache."""

    def __init__(self, values, refresh_after):
        self.values, self.refresh_after, self.reads = list(values), refresh_after, 0

    def metric_sum(self, job_id, vertex_prefix, names):
        self.reads += 1
        i = min(len(self.values) - 1, self.reads // self.refresh_after)
        return {n: self.values[i] for n in names}


def test_fresh_counters_wait_for_the_cache_to_refresh(monkeypatch):
    monkeypatch.setattr(pnl.time, "sleep", lambda s: None)
    flink = CachedCounters([5.0, 9.0], refresh_after=4)
    got, _ = pnl._fresh_counters(flink, "job")
    assert set(got) == set(pnl.METRICS) and set(got.values()) == {9.0}
    assert flink.reads == 4  # not the stale first read


def test_counters_that_never_move_are_an_error_not_a_rate_of_zero(monkeypatch):
    clock = iter(range(0, 1000, 5))
    monkeypatch.setattr(pnl.time, "sleep", lambda s: None)
    monkeypatch.setattr(pnl.time, "monotonic", lambda: next(clock))
    with pytest.raises(RuntimeError, match="did not move"):
        pnl._fresh_counters(CachedCounters([5.0], refresh_after=1), "job", timeout=30)


def test_a_savepoint_of_another_job_version_is_told_apart_from_other_failures():
    from brokerstream.clients.flinkjobs import savepoint_mismatch

    assert savepoint_mismatch(
        "Failed to rollback to checkpoint/savepoint file:/x. Cannot map checkpoint/savepoint "
        "state for operator 3539 to the new program"
    )
    assert not savepoint_mismatch("Could not execute application: Connection refused")
