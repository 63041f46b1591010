"""Reference data: members, accounts, instruments (equities and option chains), equity start prices.

Deterministic: the same scale, seed and as-of date give the same rows. Option chains have several
maturities (the first one already expired as of the as-of date) and strikes around each equity's
start price, PUT and CALL. Money is exact: prices and cash are integer micros (scale 6), written
to Postgres as NUMERIC(18,6); only volatilities are floats (a model parameter).

Loaded into Postgres with COPY; Debezium carries the rows to Kafka (connectors/).
"""

from __future__ import annotations

import calendar
import datetime as dt
import hashlib
import hmac
import math
import random
from dataclasses import dataclass, field
from typing import Iterator

MICROS = 1_000_000


@dataclass(frozen=True)
class Scale:
    members: int
    accounts_per_member: int
    equities: int
    maturities: int  # per equity; the first is already expired
    strikes: int  # per maturity, each as PUT and CALL
    # each member's max_orders_per_second (the gateway's per-member rate): room for the scale's benches,
    # which spread their load evenly over the members, up to twice the stack's capacity each
    orders_per_second: int = 1000


SCALES = {
    "tiny": Scale(members=6, accounts_per_member=2, equities=20, maturities=3, strikes=3, orders_per_second=5000),
    "small": Scale(members=100, accounts_per_member=4, equities=500, maturities=4, strikes=5, orders_per_second=1000),
    # about 800,000 instruments: 8,000 equities x (5 maturities x 10 strikes x 2) options
    "thesis": Scale(
        members=1000, accounts_per_member=5, equities=8000, maturities=5, strikes=10, orders_per_second=500
    ),
}
# Account ids per member: room for the most accounts any scale gives a member.
ACCOUNT_ID_STRIDE = 10
assert all(s.accounts_per_member <= ACCOUNT_ID_STRIDE for s in SCALES.values())
# Months from the as-of date of each maturity (third Friday of the month); the first is past.
MATURITY_MONTHS = (-1, 1, 2, 3, 6, 9, 12)


@dataclass(frozen=True)
class Member:
    member_id: str
    name: str
    status: str
    credit_limit: int  # micros
    # pre-trade controls: ACTIVE, REDUCING or HALTED; limits per order and per second (None: the broker's)
    trading_state: str = "ACTIVE"
    max_order_quantity: int | None = None
    max_order_notional: int | None = None  # micros
    max_orders_per_second: int | None = None


@dataclass(frozen=True)
class ApiKey:
    """A row of api_keys: never the key, only its hash."""

    key_sha256: str
    key_id: str
    member_id: str
    label: str
    status: str = "ACTIVE"


@dataclass(frozen=True)
class Account:
    account_id: str
    member_id: str
    status: str
    cash_balance: int  # micros
    short_allowed: bool


@dataclass(frozen=True)
class Instrument:
    instrument_id: str
    symbol: str
    currency: str
    exchange: str
    name: str
    instrument_type: str
    status: str
    underlying_id: str | None
    underlying_symbol: str | None
    maturity: dt.date | None
    option_type: str | None
    strike: int | None  # micros
    multiplier: int
    exercise_style: str | None


@dataclass(frozen=True)
class EquityStart:
    instrument_id: str
    start_price: int  # micros
    volatility: float


@dataclass
class RefData:
    scale: str
    seed: int
    as_of: dt.date
    members: list[Member] = field(default_factory=list)
    accounts: list[Account] = field(default_factory=list)
    instruments: list[Instrument] = field(default_factory=list)
    equity_starts: list[EquityStart] = field(default_factory=list)
    # one seed-derived key per member, labelled as generated test data (not counted: api_keys also
    # holds the keys `./brokerstream keys` issued)
    api_keys: list[ApiKey] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            "members": len(self.members),
            "accounts": len(self.accounts),
            "instruments": len(self.instruments),
            "equity_starts": len(self.equity_starts),
        }


def api_key(seed: int, member_id: str) -> str:
    """The API key of a generated member: derived from the seed, so load tests can log in.
    Generated data only; real members get random keys."""
    return hmac.new(f"brokerstream-{seed}".encode(), member_id.encode(), hashlib.sha256).hexdigest()[:32]


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


GENERATED_LABEL = "generated test data (seed {seed})"


def key_id(key_sha256: str) -> str:
    """A key's public name: enough of its hash to tell keys apart, nothing to log in with."""
    return "k_" + key_sha256[:12]


def generated_key(seed: int, member_id: str) -> ApiKey:
    """The api_keys row of a generated member's seed-derived key, labelled as test data."""
    digest = sha256_hex(api_key(seed, member_id))
    return ApiKey(digest, key_id(digest), member_id, GENERATED_LABEL.format(seed=seed))


def ticker(index: int) -> str:
    """AAA, AAB, ... : a distinct 3-4 letter ticker per equity index."""
    letters = []
    n = index + 26 * 26  # start at three letters
    while n:
        n, rem = divmod(n, 26)
        letters.append(chr(ord("A") + rem))
    return "".join(reversed(letters))


def third_friday(year: int, month: int) -> dt.date:
    first_weekday, _ = calendar.monthrange(year, month)
    first_friday = 1 + (calendar.FRIDAY - first_weekday) % 7
    return dt.date(year, month, first_friday + 14)


def maturity_dates(as_of: dt.date, count: int) -> list[dt.date]:
    dates = []
    for months in MATURITY_MONTHS[:count]:
        y, m = divmod(as_of.month - 1 + months, 12)
        dates.append(third_friday(as_of.year + y, m + 1))
    return dates


def strike_step(price_micros: int) -> int:
    """The round strike interval (0.5, 1, 2.5, 5, 10, 25, ...) nearest 5 % of the price."""
    target = price_micros * 0.05
    candidates = [int(base * 10**e * MICROS) for e in range(6) for base in (0.5, 1, 2.5, 5)]
    return min(candidates, key=lambda c: abs(c - target))


def strikes_around(price_micros: int, count: int) -> list[int]:
    """`count` strikes one step apart, centred on the price, all positive."""
    step = strike_step(price_micros)
    below = (count - 1) // 2
    center = max(round(price_micros / step), below + 1) * step
    return [center + (k - below) * step for k in range(count)]


def occ_symbol(root: str, maturity: dt.date, option_type: str, strike: int) -> str:
    return f"{root:<6}{maturity:%y%m%d}{option_type[0]}{strike // 1000:08d}"


def generate(scale: str, seed: int, as_of: dt.date) -> RefData:
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; known: {', '.join(SCALES)}")
    size = SCALES[scale]
    data = RefData(scale=scale, seed=seed, as_of=as_of)
    rng = random.Random(f"refdata:{seed}")

    for m in range(1, size.members + 1):
        member_id = f"M{m:06d}"
        # Every 25th member (and the last of a tiny set) is suspended, so MEMBER_INACTIVE is reachable.
        suspended = m % 25 == 0 or (size.members < 25 and m == size.members)
        data.members.append(
            Member(
                member_id=member_id,
                name=f"Member {m} Securities",
                status="SUSPENDED" if suspended else "ACTIVE",
                credit_limit=rng.randrange(10_000, 100_000) * 1000 * MICROS,
                max_orders_per_second=size.orders_per_second,
            )
        )
        data.api_keys.append(generated_key(seed, member_id))
        for a in range(size.accounts_per_member):
            n = (m - 1) * size.accounts_per_member + a + 1
            # An account id names the same member at every scale (an account's member is fixed for life, and
            # Postgres refuses a reload that would move one): member m owns A{10(m-1)+1} to A{10(m-1)+10}.
            number = (m - 1) * ACCOUNT_ID_STRIDE + a + 1
            data.accounts.append(
                Account(
                    account_id=f"A{number:07d}",
                    member_id=member_id,
                    # Every 7th account is suspended, so ACCOUNT_INACTIVE is reachable at every scale.
                    status="SUSPENDED" if n % 7 == 0 else "ACTIVE",
                    cash_balance=rng.randrange(1_000_000, 50_000_000) * MICROS + rng.randrange(0, 100) * 10_000,
                    short_allowed=(n % 2 == 1),
                )
            )

    maturities = maturity_dates(as_of, size.maturities)
    option_no = 0
    options: list[Instrument] = []
    for e in range(1, size.equities + 1):
        equity_id, symbol = f"EQ{e:06d}", ticker(e - 1)
        # Log-normal start prices between a few dollars and a few hundred.
        price = max(MICROS, int(round(math.exp(rng.gauss(math.log(60), 0.9)), 2) * MICROS))
        vol = round(rng.uniform(0.15, 0.60), 4)
        data.instruments.append(
            Instrument(
                instrument_id=equity_id,
                symbol=symbol,
                currency="USD",
                exchange="XNYS" if e % 2 else "XNAS",
                name=f"{symbol} Holdings",
                instrument_type="EQUITY",
                status="ACTIVE",
                underlying_id=None,
                underlying_symbol=None,
                maturity=None,
                option_type=None,
                strike=None,
                multiplier=1,
                exercise_style=None,
            )
        )
        data.equity_starts.append(EquityStart(equity_id, price, vol))
        style = "EUROPEAN" if e % 2 == 0 else "AMERICAN"
        for maturity in maturities:
            for strike in strikes_around(price, size.strikes):
                for option_type in ("CALL", "PUT"):
                    option_no += 1
                    options.append(
                        Instrument(
                            instrument_id=f"OP{option_no:08d}",
                            symbol=occ_symbol(symbol, maturity, option_type, strike),
                            currency="USD",
                            exchange="XCBO",
                            name=f"{symbol} {maturity:%d %b %Y} {option_type} {strike / MICROS:g}",
                            instrument_type="OPTION",
                            status="ACTIVE",
                            underlying_id=equity_id,
                            underlying_symbol=symbol,
                            maturity=maturity,
                            option_type=option_type,
                            strike=strike,
                            multiplier=100,
                            exercise_style=style,
                        )
                    )
    data.instruments.extend(options)
    return data


def micros_text(micros: int) -> str:
    sign = "-" if micros < 0 else ""
    whole, frac = divmod(abs(micros), MICROS)
    return f"{sign}{whole}.{frac:06d}"


def rows(data: RefData) -> Iterator[tuple[str, list[str], list[tuple]]]:
    """(table, columns, rows) in load order, values as Postgres COPY takes them."""
    yield (
        "members",
        [
            "member_id",
            "name",
            "status",
            "credit_limit",
            "trading_state",
            "max_order_quantity",
            "max_order_notional",
            "max_orders_per_second",
        ],
        [
            (
                m.member_id,
                m.name,
                m.status,
                micros_text(m.credit_limit),
                m.trading_state,
                m.max_order_quantity,
                None if m.max_order_notional is None else micros_text(m.max_order_notional),
                m.max_orders_per_second,
            )
            for m in data.members
        ],
    )
    yield (
        "accounts",
        ["account_id", "member_id", "status", "cash_balance", "short_allowed"],
        [(a.account_id, a.member_id, a.status, micros_text(a.cash_balance), a.short_allowed) for a in data.accounts],
    )
    yield (
        "instruments",
        [
            "instrument_id",
            "symbol",
            "currency",
            "exchange",
            "name",
            "instrument_type",
            "status",
            "underlying_id",
            "underlying_symbol",
            "maturity",
            "option_type",
            "strike",
            "multiplier",
            "exercise_style",
        ],
        [
            (
                i.instrument_id,
                i.symbol,
                i.currency,
                i.exchange,
                i.name,
                i.instrument_type,
                i.status,
                i.underlying_id,
                i.underlying_symbol,
                i.maturity,
                i.option_type,
                None if i.strike is None else micros_text(i.strike),
                i.multiplier,
                i.exercise_style,
            )
            for i in data.instruments
        ],
    )
    yield (
        "equity_starts",
        ["instrument_id", "start_price", "volatility"],
        [(s.instrument_id, micros_text(s.start_price), s.volatility) for s in data.equity_starts],
    )
