import collections
import datetime as dt

import pytest

from brokerstream.gen import refdata
from brokerstream.gen.orders import FAULTS, OrderGenerator, OrderMix

AS_OF = dt.date(2026, 11, 22)


@pytest.fixture(scope="module")
def data():
    return refdata.generate("small", 42, AS_OF)


def generate(data, n, seed=7, **kw):
    gen = OrderGenerator(data, seed, clock=lambda: 1_795_000_000_000, **kw)
    return [gen.next() for _ in range(n)], gen


def test_same_seed_same_orders(data):
    a, _ = generate(data, 5000)
    b, _ = generate(data, 5000)
    c, _ = generate(data, 5000, seed=8)
    assert a == b and a != c


def test_every_fault_kind_is_injected_at_about_its_rate(data):
    orders, _ = generate(data, 100_000)
    counts = collections.Counter(o.expected for o in orders)
    for kind in FAULTS:
        assert 300 <= counts[kind] <= 700, (kind, counts[kind])  # 0.5 % of 100,000
    assert counts["ACCEPTED"] == 100_000 - sum(counts[k] for k in FAULTS)


def test_each_fault_has_exactly_the_property_its_reason_names(data):
    accounts = {a.account_id: a for a in data.accounts}
    members = {m.member_id: m for m in data.members}
    instruments = {i.instrument_id: i for i in data.instruments}
    orders, _ = generate(data, 50_000)
    for o in orders:
        account = accounts.get(o.account_id)
        if o.expected == "UNKNOWN_ACCOUNT":
            assert account is None
            continue
        assert account is not None and o.key == account.member_id
        member_active = members[account.member_id].status == "ACTIVE"
        assert (o.expected == "ACCOUNT_INACTIVE") == (account.status != "ACTIVE")
        assert (o.expected == "MEMBER_INACTIVE") == (not member_active)
        inst = instruments.get(o.instrument_id)
        assert (o.expected == "UNKNOWN_INSTRUMENT") == (inst is None)
        if inst is not None:
            assert (o.expected == "OPTION_EXPIRED") == (inst.maturity is not None and inst.maturity < AS_OF)
        assert (o.expected == "INVALID_QUANTITY") == (o.quantity <= 0)
        bad_price = o.limit_micros is not None and not (0 < o.limit_micros <= 10**12)
        assert (o.expected == "INVALID_PRICE") == bad_price


def test_valid_orders_never_oversell_without_short_permission_and_stay_inside_buying_power(data):
    accounts = {a.account_id: a for a in data.accounts}
    orders, gen = generate(data, 100_000)
    held = collections.defaultdict(int)
    for o in orders:
        if o.expected == "SHORT_NOT_ALLOWED":
            assert not accounts[o.account_id].short_allowed
            assert held[(o.account_id, o.instrument_id)] < o.quantity
        if o.expected != "ACCEPTED":
            continue
        delta = o.quantity if o.side == "BUY" else -o.quantity
        after = held[(o.account_id, o.instrument_id)] + delta
        if after < 0 and o.side == "SELL" and held[(o.account_id, o.instrument_id)] >= 0 and after < 0:
            assert accounts[o.account_id].short_allowed, o
        held[(o.account_id, o.instrument_id)] = after
    sides = collections.Counter(o.side for o in orders if o.expected == "ACCEPTED")
    assert sides["SELL"] > 0.3 * sides["BUY"]  # positions are unwound, not only built
    assert any(o.short_sale for o in orders)
    assert max(gen.committed[m] / gen.limit[m] for m in gen.committed) <= 1.2


def test_short_sale_faults_stay_faults_when_accounts_already_hold_everything(data):
    # an account without short permission that holds every equity long already
    account = next(a for a in data.accounts if not a.short_allowed and a.status == "ACTIVE")
    equities = [i.instrument_id for i in data.instruments if i.instrument_type == "EQUITY"]
    start = {account.account_id: {e: 1000 for e in equities}}
    gen = OrderGenerator(data, 7, mix=OrderMix(faults={"SHORT_NOT_ALLOWED": 0.5}), positions=start, clock=lambda: 0)
    held = collections.defaultdict(int, {(account.account_id, e): 1000 for e in equities})
    faults = 0
    for o in (gen.next() for _ in range(3000)):
        if o.expected == "SHORT_NOT_ALLOWED":
            faults += 1
            assert o.side == "SELL" and o.quantity > max(0, held[(o.account_id, o.instrument_id)])
        elif o.expected == "ACCEPTED":
            held[(o.account_id, o.instrument_id)] += o.quantity if o.side == "BUY" else -o.quantity
    assert faults > 1000


def test_popular_instruments_dominate(data):
    orders, gen = generate(data, 50_000, mix=OrderMix(option_share=0.0))
    counts = collections.Counter(o.instrument_id for o in orders if o.expected == "ACCEPTED")
    top = gen.equities[0]
    assert counts.most_common(1)[0][0] == top
    assert counts[top] > 20 * counts[gen.equities[len(gen.equities) // 2]]


def test_shards_split_members_disjointly(data):
    a, _ = generate(data, 2000, shard=(0, 2))
    b, _ = generate(data, 2000, shard=(1, 2))
    members_a = {o.key for o in a if o.expected != "UNKNOWN_ACCOUNT"}
    members_b = {o.key for o in b if o.expected != "UNKNOWN_ACCOUNT"}
    assert members_a and members_b and not (members_a & members_b)
    assert not ({o.order_id for o in a} & {o.order_id for o in b})


def test_option_share_is_respected(data):
    orders, _ = generate(data, 20_000, mix=OrderMix(option_share=0.5))
    valid = [o for o in orders if o.expected == "ACCEPTED"]
    options = sum(1 for o in valid if o.instrument_id.startswith("OP"))
    assert 0.3 < options / len(valid) < 0.6
