import datetime as dt
import math
import random
import statistics

from brokerstream.gen import refdata
from brokerstream.gen.ticks import SECONDS_PER_YEAR, TickGenerator, gbm_step

AS_OF = dt.date(2026, 11, 22)


def test_gbm_log_returns_have_the_model_mean_and_variance():
    mu, sigma, dt_years = 0.05, 0.3, 1 / 252
    rng = random.Random(1)
    price, returns = 100.0, []
    for _ in range(200_000):
        new = gbm_step(price, mu, sigma, dt_years, rng.gauss(0, 1))
        returns.append(math.log(new / price))
        price = new
    mean, var = statistics.fmean(returns), statistics.pvariance(returns)
    expected_mean, expected_var = (mu - sigma**2 / 2) * dt_years, sigma**2 * dt_years
    # standard error of the mean: sqrt(var / n) ~ 4.2e-5; of the variance ~ var * sqrt(2 / n)
    assert abs(mean - expected_mean) < 4 * math.sqrt(expected_var / len(returns))
    assert abs(var - expected_var) < 4 * expected_var * math.sqrt(2 / len(returns))


def test_generated_paths_have_the_equitys_volatility():
    data = refdata.generate("tiny", 42, AS_OF)
    gen = TickGenerator(data, 3, rate=4000, interval=0.005, time_scale=SECONDS_PER_YEAR / 252 / 0.005)
    target = gen.equities[0]
    prices = [target.price]
    for n in range(20_000):
        mine = [t for t in gen.next_round(n) if t.instrument_id == target.instrument_id]
        if mine:  # the round's closing price: the top equity ticks several times a round here
            prices.append(mine[-1].price_micros / 1e6)
    returns = [math.log(b / a) for a, b in zip(prices, prices[1:])]
    # one round = one trading day of model time here; the top equity ticks in nearly every round
    assert len(returns) > 10_000
    realized = statistics.pstdev(returns) * math.sqrt(252)
    assert abs(realized - target.sigma) < 0.1 * target.sigma


def test_an_equitys_path_depends_only_on_the_seed_and_its_id():
    data = refdata.generate("tiny", 42, AS_OF)
    a = TickGenerator(data, 9, rate=1000, interval=0.01)
    b = TickGenerator(data, 9, rate=1000, interval=0.01)
    ticks_a = [t for n in range(500) for t in a.next_round(n)]
    ticks_b = [t for n in range(500) for t in b.next_round(n)]
    assert ticks_a == ticks_b
    c = TickGenerator(data, 10, rate=1000, interval=0.01)
    assert [t for n in range(500) for t in c.next_round(n)] != ticks_a


def test_snapshot_gives_every_equity_its_start_price_first():
    data = refdata.generate("tiny", 42, AS_OF)
    gen = TickGenerator(data, 9)
    snap = gen.snapshot(123)
    starts = {s.instrument_id: s.start_price for s in data.equity_starts}
    assert {t.instrument_id: t.price_micros for t in snap} == starts
    assert {t.sequence for t in snap} == {1}
    later = [t for n in range(200) for t in gen.next_round(n)]
    assert all(t.sequence >= 2 for t in later)


def test_popular_equities_tick_more_and_the_rate_is_about_as_asked():
    data = refdata.generate("small", 42, AS_OF)
    gen = TickGenerator(data, 9, rate=2000)
    rounds = 2000
    ticks = [t for n in range(rounds) for t in gen.next_round(n)]
    rate = len(ticks) / (rounds * gen.interval)
    assert abs(rate - gen.expected_rate) < 0.1 * gen.expected_rate
    assert abs(gen.expected_rate - 2000) < 1e-6 * 2000
    first, last = gen.equities[0].instrument_id, gen.equities[-1].instrument_id
    assert sum(t.instrument_id == first for t in ticks) > 10 * max(1, sum(t.instrument_id == last for t in ticks))


def test_a_rate_above_one_tick_per_equity_per_round_is_still_reached():
    # 10,000/s over 500 Zipf-ranked equities in 5 ms rounds: the most popular need several ticks a round
    data = refdata.generate("small", 42, AS_OF)
    gen = TickGenerator(data, 4, rate=10_000)
    rounds = 1000
    per_round = [gen.next_round(n) for n in range(rounds)]
    rate = sum(map(len, per_round)) / (rounds * gen.interval)
    assert abs(rate - 10_000) < 0.05 * 10_000
    top = gen.equities[0].instrument_id
    assert max(sum(t.instrument_id == top for t in r) for r in per_round) >= 2
    seqs = [t.sequence for r in per_round for t in r if t.instrument_id == top]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)  # each tick of an equity is a new sequence
