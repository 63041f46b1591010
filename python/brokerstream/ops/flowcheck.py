"""Reading the order flow's topics back and checking that nothing was lost or applied twice.

Used by the integration tests and the drain benchmark: every order produced must end as exactly one
result (ACCEPTED or REJECTED with a reason) or one dead letter, and positions replayed from the
orders and their fills must equal the positions the flow published.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Callable, Iterable

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from brokerstream.clients.kafka_clients import client_conf
from brokerstream.clients.schemas import registry_client
from brokerstream.common.config import Config
from brokerstream.common.topics import POSITIONS
from brokerstream.ops.books import Book


@dataclass(frozen=True)
class Message:
    key: str | None
    value: dict | None
    partition: int
    offset: int
    timestamp_ms: int


def read_topic(
    cfg: Config,
    topic: str,
    *,
    decode: bool = True,
    timeout: float = 120.0,
    until: dict[int, int] | None = None,
    keys: Callable[[str | None], bool] | None = None,
) -> list[Message]:
    """Every committed record of a topic up to its end offsets now (or `until`), in partition order;
    only those whose key passes `keys` when given (checked before decoding, which is the slow part).

    The end is the high watermark, not the last stable offset: a record below it in a transaction still
    open is not decided yet, so the read waits for that transaction to end. A producer that died in the
    middle of one (a killed instance) holds the read until the broker aborts it (transaction.timeout.ms),
    and whatever others committed after it is read then, not silently left out."""
    consumer = Consumer(
        client_conf(
            cfg,
            **{
                "group.id": f"flowcheck-{time.time_ns()}",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
                "auto.offset.reset": "earliest",
            },
        )
    )
    try:
        meta = consumer.list_topics(topic, timeout=10).topics[topic]
        ends = until if until is not None else high_watermarks(cfg, topic, list(meta.partitions))
        deserializer = AvroDeserializer(registry_client(cfg)) if decode else None
        ctx = SerializationContext(topic, MessageField.VALUE)
        consumer.assign([TopicPartition(topic, p, 0) for p, end in ends.items() if end > 0])
        remaining = {p: end for p, end in ends.items() if end > 0}
        out: list[Message] = []
        deadline = time.monotonic() + timeout
        while remaining and time.monotonic() < deadline:
            for msg in consumer.consume(5000, 0.5):
                if msg.error():
                    continue
                p = msg.partition()
                key = msg.key().decode() if msg.key() else None
                if msg.offset() < ends[p] and (keys is None or keys(key)):
                    raw = msg.value()
                    value = raw
                    if decode and raw is not None:
                        try:
                            value = deserializer(raw, ctx)
                        except Exception:  # not ours to judge here: the flow dead-letters these
                            value = None
                    out.append(Message(key, value, p, msg.offset(), msg.timestamp()[1]))
            # The position, not the last record, says when a partition is done: transaction markers
            # and aborted records take offsets too.
            for p in list(remaining):
                position = consumer.position([TopicPartition(topic, p)])[0].offset
                if position >= remaining[p]:
                    remaining.pop(p)
        if remaining:
            raise TimeoutError(f"{topic}: partitions {sorted(remaining)} not read to their end within {timeout} s")
        return out
    finally:
        consumer.close()


def high_watermarks(cfg: Config, topic: str, partitions: list[int]) -> dict[int, int]:
    """Each partition's high watermark. A read_committed client's watermark query answers the last stable
    offset instead (librdkafka asks ListOffsets at the client's isolation level), which stops short of
    everything behind an open transaction; hence a read_uncommitted client of its own."""
    consumer = Consumer(
        client_conf(cfg, **{"group.id": f"flowcheck-ends-{time.time_ns()}", "isolation.level": "read_uncommitted"})
    )
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in partitions}
    finally:
        consumer.close()


def wait_drained(
    cfg: Config,
    *,
    group: str = "brokerstream-orders",
    topic: str = "orders",
    timeout: float = 300.0,
    transactional: bool = False,
) -> float:
    """Waits until the group has committed the topic to its end (every record decided and its
    results committed, under exactly-once); returns the seconds it took. A topic written in
    transactions (`transactional`) may end with a commit marker the group never commits past; the
    orders topic is written by idempotent producers only, so there its end must be reached exactly."""
    slack = 1 if transactional else 0
    consumer = Consumer(client_conf(cfg, **{"group.id": group, "enable.auto.commit": False}))
    t0 = time.monotonic()
    try:
        parts = [TopicPartition(topic, p) for p in consumer.list_topics(topic, timeout=10).topics[topic].partitions]
        while True:
            ends = [consumer.get_watermark_offsets(tp, timeout=10)[1] for tp in parts]
            committed = consumer.committed(parts, timeout=10)
            behind = sum(max(0, end - max(c.offset, 0) - slack) for end, c in zip(ends, committed))
            if behind == 0 and all(c.offset >= 0 or end == 0 for end, c in zip(ends, committed)):
                return time.monotonic() - t0
            if time.monotonic() - t0 > timeout:
                raise TimeoutError(f"{group} still {behind} records behind on {topic} after {timeout} s")
            time.sleep(0.25)
    finally:
        consumer.close()


@dataclass
class Reconciliation:
    produced: int
    results: int = 0
    accepted: int = 0
    cancelled: int = 0
    expired: int = 0
    rejected: collections.Counter = field(default_factory=collections.Counter)
    dead_lettered: int = 0
    duplicates: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def balanced(self) -> bool:
        return (
            not self.duplicates
            and self.accepted + sum(self.rejected.values()) + self.cancelled + self.expired + self.dead_lettered
            == self.produced
        )

    def summary(self) -> dict:
        return {
            "produced": self.produced,
            "accepted": self.accepted,
            "rejected": sum(self.rejected.values()),
            "cancelled": self.cancelled,
            "expired": self.expired,
            "rejected_by_reason": dict(sorted(self.rejected.items())),
            "dead_lettered": self.dead_lettered,
            "duplicates": len(self.duplicates),
            "missing": len(self.missing),
            "balanced": self.balanced,
        }


def result_key(member_id: str, order_id: str) -> str:
    """An order's identity and its result's key: an order id is unique per member (FIX ClOrdID)."""
    return f"{member_id}|{order_id}"


def reconcile(
    order_keys: Iterable[str], results: list[Message], dead_letters: list[Message], orders_topic: str = "orders"
) -> Reconciliation:
    """produced = accepted + rejected + cancelled + expired + dead-lettered, with no order decided twice (an order
    still working has no result yet and counts as missing). Orders are named
    by result_key(member, order id); a retry of an order (a second record of the same member and id)
    is the same order and gets no second result."""
    wanted = list(dict.fromkeys(order_keys))
    rec = Reconciliation(produced=len(wanted))
    seen: set[str] = set()
    for msg in results:
        r = msg.value
        key = result_key(r["member_id"], r["order_id"])
        if key in seen:
            rec.duplicates.append(key)
            continue
        seen.add(key)
        rec.results += 1
        if r["status"] == "ACCEPTED":
            rec.accepted += 1
        elif r["status"] == "CANCELLED":
            rec.cancelled += 1
        elif r["status"] == "EXPIRED":
            rec.expired += 1
        else:
            rec.rejected[r["reason"]] += 1
    rec.dead_lettered = sum(1 for d in dead_letters if d.value["source_topic"] == orders_topic)
    rec.missing = [o for o in wanted if o not in seen][:100]
    return rec


def latest_positions(cfg: Config) -> dict[str, dict]:
    """The positions the flow has published: the last record per account|instrument (a key lives in
    one partition, so the last is the highest version). Only those are decoded: the topic holds
    every version until compaction catches up."""
    last: dict[str, bytes] = {}
    for m in read_topic(cfg, POSITIONS, decode=False, timeout=600):
        if m.value is not None:
            last[m.key] = m.value
    deserializer = AvroDeserializer(registry_client(cfg))
    ctx = SerializationContext(POSITIONS, MessageField.VALUE)
    return {key: deserializer(raw, ctx) for key, raw in last.items()}


EQUITY_MARKS = "pnl.equity-marks"


def read_marks(cfg: Config, instruments: set[str] | None = None) -> list[Message]:
    """The P&L job's marks as one record per instrument, in the order they were written: each record of
    pnl.equity-marks (one per equity per window, carrying every held instrument of it) opened into
    {instrument_id, underlying_id, underlying_price, mark_price, window_end, computed_ts, first_tick_ts},
    keyed by instrument; only `instruments` when given."""
    out: list[Message] = []
    for m in read_topic(cfg, EQUITY_MARKS):
        if not m.value:
            continue
        v = m.value
        for held in v["marks"]:
            if instruments is None or held["instrument_id"] in instruments:
                mark = {
                    k: v[k] for k in ("underlying_id", "underlying_price", "window_end", "computed_ts", "first_tick_ts")
                }
                mark.update(held)
                out.append(Message(held["instrument_id"], mark, m.partition, m.offset, m.timestamp_ms))
    return out


def holdings(cfg: Config) -> dict[str, dict[str, int]]:
    """{account: {instrument: quantity}} of every open position: the generators' starting point."""
    out: dict[str, dict[str, int]] = {}
    for p in latest_positions(cfg).values():
        if p["quantity"]:
            out.setdefault(p["account_id"], {})[p["instrument_id"]] = p["quantity"]
    return out


def replay_positions(
    orders: list[Message],
    fills: dict[str, tuple[Decimal, int]],
    elsewhere: frozenset[tuple[int, int]] | set[tuple[int, int]] = frozenset(),
) -> dict[str, tuple[int, Decimal, Decimal]]:
    """Positions from the orders, in the order the flow took them (per partition, by offset), with
    each accepted order's fill (price, multiplier) by result_key(member, order id):
    {account|instrument: (quantity, avg cost, realized)}. A retry (a later record of the same member
    and order id) books nothing. The same arithmetic as the flow's, in exact decimals: each position's
    cost basis kept exact, a partial close taking its share of it rounded half-even to the micro, the
    average cost it over the open quantity, rounded the same way. Records at `elsewhere` (partition,
    offset) were decided and booked by the other architecture (a baseline drain on the same stack) and
    are not the flow's."""
    books: dict[str, Book] = {}
    decided: set[str] = set()
    for msg in sorted(orders, key=lambda m: (m.partition, m.offset)):
        o = msg.value
        if o is None or (msg.partition, msg.offset) in elsewhere:
            continue
        order = result_key(msg.key or "", o["order_id"])
        if order in decided or order not in fills:
            continue
        decided.add(order)
        price, multiplier = fills[order]
        books.setdefault(f"{o['account_id']}|{o['instrument_id']}", Book()).fill(
            o["side"], o["quantity"], price, multiplier
        )
    return {key: (b.quantity, b.avg_cost, b.realized) for key, b in books.items()}
