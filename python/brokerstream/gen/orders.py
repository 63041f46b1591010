"""Orders that behave like members' flow, with invalid orders injected at configurable rates.

Instrument popularity is Zipf-like; a buy/sell mix builds positions and unwinds them; some accounts
sell short; a share of orders are on options. Each generated order carries the outcome the broker
must reach: ACCEPTED, or the reason code of the one fault injected into it. Valid orders are kept
valid: they trade active instruments of active accounts, stay far inside buying power (the
generator tracks each member's exposure at start prices), use generous limits, and never sell more
than the account holds unless the account may sell short.

Deterministic: the same reference data, seed and clock give the same orders.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import random
from dataclasses import dataclass, field
from typing import Callable, Iterator, NamedTuple, Sequence, TypeVar

from brokerstream.gen import market_model, popularity
from brokerstream.gen.refdata import MICROS, RefData

T = TypeVar("T")

# Faults and the reason code the broker must answer them with.
FAULTS = (
    "UNKNOWN_ACCOUNT",
    "ACCOUNT_INACTIVE",
    "MEMBER_INACTIVE",
    "UNKNOWN_INSTRUMENT",
    "OPTION_EXPIRED",
    "INSUFFICIENT_BUYING_POWER",
    "SHORT_NOT_ALLOWED",
    "INVALID_QUANTITY",
    "INVALID_PRICE",
)
DEFAULT_FAULT_RATE = 0.005
MAX_PRICE_MICROS = 1_000_000 * MICROS  # the broker rejects limits above this as absurd (INVALID_PRICE)
OPTION_QUANTITIES = (1, 1, 2, 3, 5, 10)
EQUITY_QUANTITIES = (1, 5, 10, 10, 20, 25, 50, 100)


@dataclass
class OrderMix:
    option_share: float = 0.3  # of valid orders, on options
    unwind: float = 0.45  # of valid orders on an account with positions, reducing one
    short_sell: float = 0.05  # of valid orders on a short-allowed account, opening a short
    limit_share: float = 0.2  # of valid orders carrying a (generous) limit price
    zipf_s: float = 1.1  # popularity: weight of the k-th most popular equity is 1/k^s
    exposure_cap: float = 0.25  # of a member's cash + credit a valid order may take it up to
    faults: dict[str, float] = field(default_factory=lambda: {f: DEFAULT_FAULT_RATE for f in FAULTS})

    def __post_init__(self) -> None:
        unknown = set(self.faults) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {', '.join(FAULTS)}")
        if sum(self.faults.values()) >= 1:
            raise ValueError("fault rates must add up to less than 1")


class GeneratedOrder(NamedTuple):
    key: str  # the member id: the orders topic's key
    order_id: str
    account_id: str
    instrument_id: str
    side: str
    quantity: int
    limit_micros: int | None
    short_sale: bool
    client_ts_ms: int
    expected: str  # ACCEPTED or a reason code

    def as_record(self) -> dict:
        """The Order as confluent-kafka / fastavro take it."""
        from decimal import Decimal

        return {
            "order_id": self.order_id,
            "account_id": self.account_id,
            "instrument_id": self.instrument_id,
            "side": self.side,
            "quantity": self.quantity,
            "limit_price": None if self.limit_micros is None else Decimal(self.limit_micros).scaleb(-6),
            "short_sale": self.short_sale,
            "client_ts": self.client_ts_ms,
            "trace_id": None,
        }


def rough_option_price(spot: int, strike: int, option_type: str, vol: float, years: float) -> int:
    """Intrinsic value plus the at-the-money time value (0.4 sigma S sqrt T), in micros: close enough
    to the broker's model price to keep generated exposure well inside buying power."""
    intrinsic = max(spot - strike, 0) if option_type == "CALL" else max(strike - spot, 0)
    return max(MICROS // 100, intrinsic + int(0.4 * vol * spot * years**0.5))


def wall_clock_ms() -> int:
    import time

    return int(time.time() * 1000)


class OrderGenerator:
    def __init__(
        self,
        data: RefData,
        seed: int,
        mix: OrderMix | None = None,
        *,
        run_tag: str = "run",
        clock: Callable[[], int] = wall_clock_ms,
        today: dt.date | None = None,
        shard: tuple[int, int] = (0, 1),
        positions: dict[str, dict[str, int]] | None = None,
    ):
        """shard (i, n): generate for the i-th of n disjoint sets of members, so n processes can
        share a prefill without two of them tracking the same member's positions.
        positions: what accounts hold already ({account: {instrument: quantity}}), when the flow has
        run before, so that sells and short-sale faults are judged against real holdings."""
        self.mix = mix or OrderMix()
        index, shards = shard
        self.rng = random.Random(f"orders:{seed}:{run_tag}:{index}/{shards}")
        self.id_prefix = f"{run_tag}-{index}"
        self.clock = clock
        self.run_tag = run_tag
        self.counter = itertools.count(1)
        today = today or data.as_of
        start_of_today = (today - dt.date(1970, 1, 1)).days * market_model.MILLIS_PER_DAY
        members = {m.member_id: m for n, m in enumerate(data.members) if n % shards == index}
        data_accounts = [a for a in data.accounts if a.member_id in members]
        active_members = {m for m, rec in members.items() if rec.status == "ACTIVE"}
        self.valid_accounts = [a for a in data_accounts if a.status == "ACTIVE" and a.member_id in active_members]
        self.suspended_accounts = [a for a in data_accounts if a.status != "ACTIVE" and a.member_id in active_members]
        self.inactive_member_accounts = [
            a for a in data_accounts if a.status == "ACTIVE" and a.member_id not in active_members
        ]
        self.no_short_accounts = [a for a in self.valid_accounts if not a.short_allowed]
        self.member_ids = sorted(members)
        starts = {s.instrument_id: s.start_price for s in data.equity_starts}
        vols = {s.instrument_id: s.volatility for s in data.equity_starts}
        self.price = dict(starts)
        instruments = {i.instrument_id: i for i in data.instruments}
        self.multiplier = {i.instrument_id: i.multiplier for i in data.instruments}
        equities = [
            i.instrument_id
            for i in data.instruments
            if i.instrument_type == "EQUITY" and i.status == "ACTIVE" and i.instrument_id in starts
        ]
        if not self.valid_accounts or not equities:
            raise ValueError("reference data has no active account or no priced active equity")
        self.equities = popularity.ranked(equities, seed)
        self.cum_weights = popularity.cumulative(popularity.zipf_weights(len(self.equities), self.mix.zipf_s))
        self.live_options: dict[str, list[str]] = {}
        self.expired_options: list[str] = []
        horizon = today + dt.timedelta(days=14)  # valid orders never race an expiry
        for inst in data.instruments:
            if inst.instrument_type != "OPTION" or inst.status != "ACTIVE" or inst.underlying_id not in starts:
                continue
            if inst.maturity < today:
                self.expired_options.append(inst.instrument_id)
            elif inst.maturity >= horizon:
                self.live_options.setdefault(inst.underlying_id, []).append(inst.instrument_id)
                self.price[inst.instrument_id] = rough_option_price(
                    starts[inst.underlying_id],
                    inst.strike,
                    inst.option_type,
                    vols[inst.underlying_id],
                    market_model.current().years_to_expiry(inst.maturity, start_of_today),
                )
        self.instruments = instruments
        # What the generator believes each account holds and each member has committed (at cost).
        self.positions: dict[str, dict[str, int]] = {}
        self.committed: dict[str, int] = {}
        self.limit: dict[str, int] = {}
        for m in members.values():
            cash = sum(a.cash_balance for a in data_accounts if a.member_id == m.member_id)
            self.limit[m.member_id] = int((cash + m.credit_limit) * self.mix.exposure_cap)
        for account in data_accounts:
            for instrument_id, quantity in (positions or {}).get(account.account_id, {}).items():
                if quantity and instrument_id in self.price:
                    self.positions.setdefault(account.account_id, {})
                    self._book(account, instrument_id, quantity)
        self.fault_kinds = [k for k, rate in self.mix.faults.items() if rate > 0 and self._fault_possible(k)]
        self.fault_cum = list(itertools.accumulate(self.mix.faults[k] for k in self.fault_kinds))

    # --- picking -------------------------------------------------------------------------------------
    def _pick(self, seq: Sequence[T]) -> T:
        # random.choice costs three times this; the prefill budget is a few microseconds an order.
        return seq[int(self.rng.random() * len(seq))]

    def _popular_equity(self) -> str:
        return self.equities[bisect.bisect(self.cum_weights, self.rng.random() * self.cum_weights[-1])]

    def _instrument(self) -> str:
        equity = self._popular_equity()
        options = self.live_options.get(equity)
        if options and self.rng.random() < self.mix.option_share:
            return self._pick(options)
        return equity

    def _quantity(self, instrument_id: str) -> int:
        if self.multiplier[instrument_id] > 1:
            return self._pick(OPTION_QUANTITIES)
        return self._pick(EQUITY_QUANTITIES)

    def _limit(self, instrument_id: str, side: str) -> int | None:
        if self.rng.random() >= self.mix.limit_share:
            return None
        # Far from the market on the safe side: an equity's buy limit at twice its start price, its sell
        # limit at half (inside the broker's erroneous-order band of 5x, with room for the price to move
        # 2.5x). Options are priced by the broker's model, which our rough price may miss by a lot, and
        # are not banded: their buy limit is 100x plus $100, their sell limit the smallest positive price.
        price = self.price[instrument_id]
        if self.multiplier[instrument_id] > 1:
            return price * 100 + 100 * MICROS if side == "BUY" else 1
        return price * 2 if side == "BUY" else max(1, price // 2)

    def _fault_possible(self, kind: str) -> bool:
        return {
            "ACCOUNT_INACTIVE": bool(self.suspended_accounts),
            "MEMBER_INACTIVE": bool(self.inactive_member_accounts),
            "OPTION_EXPIRED": bool(self.expired_options),
            "SHORT_NOT_ALLOWED": bool(self.no_short_accounts),
        }.get(kind, True)

    # --- orders --------------------------------------------------------------------------------------
    def _order(self, account, instrument_id, side, quantity, limit, short_sale, expected) -> GeneratedOrder:
        n = next(self.counter)
        return GeneratedOrder(
            key=account.member_id if account else self._pick(self.member_ids),
            order_id=f"{self.id_prefix}-{n:010d}",
            account_id=account.account_id if account else f"A-UNKNOWN-{n}",
            instrument_id=instrument_id,
            side=side,
            quantity=quantity,
            limit_micros=limit,
            short_sale=short_sale,
            client_ts_ms=self.clock(),
            expected=expected,
        )

    def next(self) -> GeneratedOrder:
        if self.fault_kinds:
            r = self.rng.random()
            if r < self.fault_cum[-1]:
                kind = self.fault_kinds[bisect.bisect(self.fault_cum, r)]
                return self._faulty(kind)
        return self._valid()

    def __iter__(self) -> Iterator[GeneratedOrder]:
        while True:
            yield self.next()

    def _valid(self) -> GeneratedOrder:
        account = self._pick(self.valid_accounts)
        held = self.positions.setdefault(account.account_id, {})
        member = account.member_id
        if held and self.rng.random() < self.mix.unwind or self.committed.get(member, 0) > self.limit[member]:
            if held:
                return self._unwind(account, held)
        if account.short_allowed and self.rng.random() < self.mix.short_sell:
            instrument_id = self._instrument()
            if held.get(instrument_id, 0) <= 0:
                qty = self._quantity(instrument_id)
                self._book(account, instrument_id, -qty)
                return self._order(
                    account, instrument_id, "SELL", qty, self._limit(instrument_id, "SELL"), True, "ACCEPTED"
                )
        instrument_id = self._instrument()
        qty = self._quantity(instrument_id)
        if held.get(instrument_id, 0) < 0:  # buying back a short reduces exposure, as an unwind does
            qty = min(qty, -held[instrument_id])
        self._book(account, instrument_id, qty)
        return self._order(account, instrument_id, "BUY", qty, self._limit(instrument_id, "BUY"), False, "ACCEPTED")

    def _unwind(self, account, held: dict[str, int]) -> GeneratedOrder:
        instrument_id = self._pick(list(held))
        position = held[instrument_id]
        qty = abs(position) if self.rng.random() < 0.3 else self.rng.randint(1, abs(position))
        side = "SELL" if position > 0 else "BUY"
        self._book(account, instrument_id, -qty if position > 0 else qty)
        return self._order(account, instrument_id, side, qty, self._limit(instrument_id, side), False, "ACCEPTED")

    def _book(self, account, instrument_id: str, delta: int) -> None:
        held = self.positions.setdefault(account.account_id, {})
        before = held.get(instrument_id, 0)
        after = before + delta
        unit = self.price[instrument_id] * self.multiplier[instrument_id]
        self.committed[account.member_id] = self.committed.get(account.member_id, 0) + (abs(after) - abs(before)) * unit
        if after:
            held[instrument_id] = after
        else:
            held.pop(instrument_id, None)

    def _faulty(self, kind: str) -> GeneratedOrder:
        rng = self.rng
        account = rng.choice(self.valid_accounts)
        instrument_id = self._popular_equity()
        qty = self._quantity(instrument_id)
        if kind == "UNKNOWN_ACCOUNT":
            return self._order(None, instrument_id, "BUY", qty, None, False, kind)
        if kind == "ACCOUNT_INACTIVE":
            return self._order(rng.choice(self.suspended_accounts), instrument_id, "BUY", qty, None, False, kind)
        if kind == "MEMBER_INACTIVE":
            return self._order(rng.choice(self.inactive_member_accounts), instrument_id, "BUY", qty, None, False, kind)
        if kind == "UNKNOWN_INSTRUMENT":
            return self._order(account, f"XX{rng.randrange(10**8):08d}", "BUY", qty, None, False, kind)
        if kind == "OPTION_EXPIRED":
            return self._order(account, rng.choice(self.expired_options), "BUY", 1, None, False, kind)
        if kind == "INSUFFICIENT_BUYING_POWER":
            # Ten times what the member could ever commit, at the start price.
            unit = self.price[instrument_id] * self.multiplier[instrument_id]
            huge = 10 * self.limit[account.member_id] // self.mix.exposure_cap // max(unit, 1) + 1
            return self._order(account, instrument_id, "BUY", int(huge), None, False, kind)
        if kind == "SHORT_NOT_ALLOWED":
            # Sell more than the account holds: whatever it holds, plus some.
            account = rng.choice(self.no_short_accounts)
            held = max(0, self.positions.get(account.account_id, {}).get(instrument_id, 0))
            return self._order(account, instrument_id, "SELL", held + qty, None, False, kind)
        if kind == "INVALID_QUANTITY":
            return self._order(account, instrument_id, "BUY", rng.choice((0, -1, -100)), None, False, kind)
        if kind == "INVALID_PRICE":
            bad = rng.choice((0, -MICROS, MAX_PRICE_MICROS * 10))
            return self._order(account, instrument_id, "BUY", qty, bad, False, kind)
        raise ValueError(kind)
