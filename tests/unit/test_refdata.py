import datetime as dt

import pytest

from brokerstream.gen import refdata

AS_OF = dt.date(2026, 11, 22)


def test_same_scale_seed_and_date_give_the_same_rows():
    assert refdata.generate("tiny", 42, AS_OF) == refdata.generate("tiny", 42, AS_OF)
    other = refdata.generate("tiny", 43, AS_OF)
    assert other.equity_starts != refdata.generate("tiny", 42, AS_OF).equity_starts


@pytest.mark.parametrize("scale", ["tiny", "small"])
def test_counts_follow_the_scale(scale):
    size = refdata.SCALES[scale]
    data = refdata.generate(scale, 1, AS_OF)
    assert len(data.members) == size.members
    assert len(data.accounts) == size.members * size.accounts_per_member
    options = size.equities * size.maturities * size.strikes * 2
    assert len(data.instruments) == size.equities + options
    assert len(data.equity_starts) == size.equities


def test_thesis_scale_is_about_800k_instruments():
    size = refdata.SCALES["thesis"]
    instruments = size.equities * (1 + size.maturities * size.strikes * 2)
    assert 750_000 <= instruments <= 850_000


def test_option_chains_have_expired_and_live_maturities_and_strikes_around_the_start_price():
    data = refdata.generate("small", 3, AS_OF)
    starts = {s.instrument_id: s.start_price for s in data.equity_starts}
    options = [i for i in data.instruments if i.instrument_type == "OPTION"]
    assert any(o.maturity < AS_OF for o in options) and any(o.maturity > AS_OF for o in options)
    assert {o.option_type for o in options} == {"PUT", "CALL"}
    assert {o.exercise_style for o in options} == {"EUROPEAN", "AMERICAN"}
    for o in options:
        assert o.underlying_id in starts and o.strike > 0 and o.multiplier == 100
        assert 0.5 * starts[o.underlying_id] <= o.strike <= 1.5 * starts[o.underlying_id] + 5_000_000
        assert o.maturity.weekday() == 4  # third Fridays


def test_every_kind_of_account_and_member_the_order_faults_need_exists_at_tiny_scale():
    data = refdata.generate("tiny", 42, AS_OF)
    assert {m.status for m in data.members} == {"ACTIVE", "SUSPENDED"}
    assert {a.status for a in data.accounts} == {"ACTIVE", "SUSPENDED"}
    assert {a.short_allowed for a in data.accounts} == {True, False}


def test_generated_keys_are_derived_from_the_seed_stored_hashed_and_labelled_as_test_data():
    data = refdata.generate("tiny", 42, AS_OF)
    assert [k.member_id for k in data.api_keys] == [m.member_id for m in data.members]
    k = data.api_keys[0]
    key = refdata.api_key(42, k.member_id)
    assert k.key_sha256 == refdata.sha256_hex(key) and key not in k.key_sha256
    assert k.key_id == "k_" + k.key_sha256[:12] and key not in k.key_id
    assert k.label == "generated test data (seed 42)" and k.status == "ACTIVE"
    # the member rows no longer carry a key
    assert "api_key_sha256" not in refdata.Member.__dataclass_fields__


def test_money_is_written_exactly_with_six_places():
    assert refdata.micros_text(123_456_789) == "123.456789"
    assert refdata.micros_text(-5) == "-0.000005"
    table, columns, rows = next(refdata.rows(refdata.generate("tiny", 42, AS_OF)))
    assert table == "members" and rows[0][3].split(".")[1].__len__() == 6


def test_tickers_are_distinct():
    assert len({refdata.ticker(i) for i in range(20_000)}) == 20_000
