"""The sustained-capacity search: which rung comes next and what the rungs found."""

import math

import pytest

from brokerstream.loadtest.bench.capacity import Found, Search


def run(search: Search, capacity: float) -> list[tuple[float, bool]]:
    """Rungs against a system that holds every rate up to `capacity` and none above it."""
    tried = []
    while (rate := search.next_rate(tried)) is not None:
        tried.append((rate, rate <= capacity))
    return tried


@pytest.mark.parametrize(
    "tried, expected",
    [
        ([], 400.0),  # the first rung is the guess
        ([(400, True)], 600.0),  # held: climb by the factor
        ([(400, True), (600, True)], 900.0),
        ([(400, False)], 400 / 1.5),  # failed: descend by it
        ([(400, True), (600, False)], math.sqrt(400 * 600)),  # bracketed: bisect once
        ([(400, True), (600, False), (490, True)], None),  # bisected once: done
        ([(400, False), (266.7, True)], math.sqrt(266.7 * 400)),
        ([(30, False)], None),  # below the lowest rate worth trying: done
    ],
)
def test_the_next_rung(tried, expected):
    got = Search(start=400, factor=1.5, refine=1, max_rungs=6, min_rate=25).next_rate(tried)
    assert got == pytest.approx(expected) if expected is not None else got is None


@pytest.mark.parametrize(
    "tried, found",
    [
        ([(400, True), (600, False), (490, True)], Found(490, False, 600)),
        ([(400, True), (600, False), (490, False)], Found(400, False, 490)),
        ([(400, True), (600, True)], Found(600, True, None)),  # never broke: a floor
        ([(400, False), (266, False)], Found(None, False, 266)),  # never held: below the lowest rung
        # noise: a rung above the lowest failure that held does not count
        ([(400, True), (600, False), (900, True)], Found(400, False, 600)),
    ],
)
def test_what_the_rungs_found(tried, found):
    assert Search.found(tried) == found


@pytest.mark.parametrize("capacity", [60, 120, 399, 400, 401, 777, 2_000, 2_900])
def test_the_search_brackets_a_capacity_within_its_rungs(capacity):
    search = Search(start=400, factor=1.5, refine=2, max_rungs=8, min_rate=25)
    tried = run(search, capacity)
    found = Search.found(tried)
    assert len(tried) <= 8
    assert not found.is_floor
    assert found.rate <= capacity < found.ceiling
    # two bisections of a factor-1.5 bracket leave at most 1.5 ** 0.25 between what held and what failed
    assert found.ceiling / found.rate <= 1.5**0.25 + 1e-9


def test_a_system_the_rungs_cannot_break_is_reported_as_a_floor():
    tried = run(Search(start=400, factor=2, max_rungs=4), capacity=1e9)
    assert [r for r, _ in tried] == [400, 800, 1600, 3200]
    assert Search.found(tried) == Found(3200, True, None)
    assert "floor" in Search.found(tried).describe()


def test_a_system_that_holds_nothing_is_reported_as_a_ceiling():
    tried = run(Search(start=400, factor=2, max_rungs=8, min_rate=50), capacity=10)
    assert [r for r, _ in tried] == [400, 200, 100, 50]
    assert Search.found(tried).rate is None
    assert "ceiling" in Search.found(tried).describe()


@pytest.mark.parametrize(
    "kwargs", [{"start": 0}, {"start": 100, "factor": 1}, {"start": 100, "refine": -1}, {"start": 100, "max_rungs": 0}]
)
def test_a_search_that_cannot_run_is_refused(kwargs):
    with pytest.raises(ValueError):
        Search(**kwargs)
