"""One market model across both flows, on the real stack: an option bought at its model price and
revalued by the P&L job at the same underlying price is marked at the price paid, less nothing but the
time decay between the fill and the window (micros), for a European call and an American put alike.
With the old 4 % / 5 % split, a one-year at-the-money call showed about 0.4 of P&L out of nothing."""

from __future__ import annotations

import time
from decimal import Decimal

from brokerstream.clients.flinkjobs import PNL_JOB, Flink
from brokerstream.gen.produce import produce_prices

from .test_pnl_job import wait_for_marks

MEMBER = "M000001"


def _account(world) -> str:
    return next(a.account_id for a in world.accounts if a.member_id == MEMBER and a.status == "ACTIVE")


def _options(world):
    """An active European call and an active American put a while from maturity, on two underlyings
    (the tiny data set has no underlying with both)."""

    def first(option_type, style, avoid=None):
        return next(
            i
            for i in sorted(world.instruments, key=lambda i: i.instrument_id)
            if i.instrument_type == "OPTION"
            and i.status == "ACTIVE"
            and i.option_type == option_type
            and i.exercise_style == style
            and (i.maturity - world.as_of).days >= 30
            and i.underlying_id != avoid
        )

    call = first("CALL", "EUROPEAN")
    return call, first("PUT", "AMERICAN", avoid=call.underlying_id)


def test_an_option_is_marked_at_the_price_it_was_bought_at_the_same_spot(stack, world, gateway_for):
    assert Flink(stack.flink_url).live(PNL_JOB), "up deploys the P&L job"
    gw, account = gateway_for(MEMBER), _account(world)
    options = _options(world)
    # at the money, where a rate gap shows most
    spots = {o.underlying_id: o.strike for o in options}
    produce_prices(stack, spots)
    # the order flow has the spots once orders on the underlyings fill at them
    deadline = time.monotonic() + 60
    for underlying, spot in spots.items():
        while True:
            probe = gw.order(account_id=account, instrument_id=underlying, side="BUY", quantity=1)
            if probe["status"] == "ACCEPTED" and Decimal(probe["fill_price"]) * 1_000_000 == spot:
                break
            assert time.monotonic() < deadline, f"the flow never priced {underlying} at the tick: {probe}"
            time.sleep(1)
    fills = {}
    for option in options:
        result = gw.order(account_id=account, instrument_id=option.instrument_id, side="BUY", quantity=1)
        assert result["status"] == "ACCEPTED", result
        fills[option.instrument_id] = Decimal(result["fill_price"])
    produce_prices(stack, spots)  # the same spots again: the P&L job values the new positions at them
    # each option's latest mark at these spots (a mark that did not move since is not written again)
    marks = wait_for_marks(stack, set(fills), lambda u: Decimal(spots[u]) / 1_000_000, 0, timeout=120, ticked=False)
    for instrument, v in marks.items():
        gap = abs(Decimal(v["mark_price"]) - fills[instrument])
        # seconds of time decay are micros; a rate gap of 1 % would be tenths
        assert gap <= Decimal("0.0005"), (instrument, fills[instrument], v["mark_price"])
