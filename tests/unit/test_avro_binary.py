"""The hand-rolled encoders write what a generic Avro encoder reads back as the same record, byte
for byte the same except where fastavro pads a decimal (-128 as ff80); ours is minimal, as Java's."""

import datetime as dt
import io
import random
from decimal import Decimal

import fastavro

from brokerstream.clients.schemas import load_schema
from brokerstream.gen.avro_binary import StringCache, decimal_bytes, encode_order, encode_tick, framed, long_bytes

ORDER = fastavro.parse_schema(load_schema("Order"))
TICK = fastavro.parse_schema(load_schema("PriceTick"))
HEADER = framed(1234)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def generic(schema, record) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema, record)
    return out.getvalue()


def millis(ts: dt.datetime) -> int:
    return (ts - EPOCH) // dt.timedelta(milliseconds=1)


def read(schema, framed_bytes: bytes) -> dict:
    assert framed_bytes[:5] == HEADER
    return fastavro.schemaless_reader(io.BytesIO(framed_bytes[5:]), schema)


def test_wire_header_is_magic_byte_and_big_endian_id():
    assert HEADER == b"\x00\x00\x00\x04\xd2"


def test_orders_match_fastavro_byte_for_byte():
    rng = random.Random(5)
    strings = StringCache()
    for _ in range(2000):
        limit = rng.choice([None, rng.randrange(-(10**9), 10**13), 0, -1, 127, 128, -128, -129, 255, 256])
        record = {
            "order_id": f"o-{rng.randrange(10**9)}",
            "account_id": rng.choice(["A1", "A0000002", "Ä-ünïcode"]),
            "instrument_id": rng.choice(["EQ000001", "OP00000042"]),
            "side": rng.choice(["BUY", "SELL"]),
            "quantity": rng.choice([0, -1, 1, 63, 64, -65, 10**8, rng.randrange(-(2**62), 2**62)]),
            "limit_price": None if limit is None else Decimal(limit).scaleb(-6),
            "short_sale": rng.random() < 0.5,
            "client_ts": rng.randrange(0, 2**41),
            "trace_id": rng.choice([None, "t-1"]),
            "time_in_force": rng.choice(["IOC", "GTC", "DAY"]),
        }
        stop = rng.choice([None, 1, 250_000_000])
        record["stop_price"] = None if stop is None else Decimal(stop).scaleb(-6)
        ours = encode_order(
            HEADER,
            strings,
            record["order_id"],
            record["account_id"],
            record["instrument_id"],
            record["side"],
            record["quantity"],
            limit,
            record["short_sale"],
            record["client_ts"],
            record["trace_id"],
            record["time_in_force"],
            stop,
        )
        decoded = read(ORDER, ours)
        decoded["client_ts"] = millis(decoded["client_ts"])
        assert decoded == record
        if limit is None or limit != -128:
            assert ours == HEADER + generic(ORDER, record)


def test_ticks_match_fastavro_byte_for_byte():
    rng = random.Random(6)
    strings = StringCache()
    for _ in range(2000):
        micros = rng.choice([1, 999_999, rng.randrange(1, 10**15)])
        record = {
            "instrument_id": "EQ%06d" % rng.randrange(10**6),
            "price": Decimal(micros).scaleb(-6),
            "event_ts": rng.randrange(0, 2**41),
            "sequence": rng.randrange(1, 10**9),
        }
        ours = encode_tick(HEADER, strings, record["instrument_id"], micros, record["event_ts"], record["sequence"])
        decoded = read(TICK, ours)
        decoded["event_ts"] = millis(decoded["event_ts"])
        assert decoded == record
        assert ours == HEADER + generic(TICK, record)


def test_primitives():
    assert long_bytes(0) == b"\x00" and long_bytes(-1) == b"\x01" and long_bytes(1) == b"\x02"
    assert long_bytes(64) == b"\x80\x01"
    assert long_bytes(-(2**63)) == b"\xff" * 9 + b"\x01"
    assert decimal_bytes(0) == b"\x02\x00" and decimal_bytes(-1) == b"\x02\xff"
    # minimal two's complement, as Java's BigInteger.toByteArray()
    assert decimal_bytes(-128) == b"\x02\x80" and decimal_bytes(128) == b"\x04\x00\x80"
