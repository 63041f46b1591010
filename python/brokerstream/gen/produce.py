"""Producing generated orders and ticks to Kafka in the Confluent wire format.

Producers partition with murmur2, as Java clients do: the streams app's interactive queries find a
member's partition with the Java partitioner, so the orders topic must agree with it.
"""

from __future__ import annotations

import collections
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from confluent_kafka import Producer

from brokerstream.clients.kafka_clients import TOOLS, client_conf
from brokerstream.clients.kafka_security import GATEWAY, ORDERS_TOPIC
from brokerstream.clients.schemas import Registry, schema_str
from brokerstream.common.config import Config
from brokerstream.gen.avro_binary import StringCache, encode_order, encode_tick, framed
from brokerstream.gen.orders import GeneratedOrder
from brokerstream.gen.ticks import Tick, TickGenerator

PRODUCER_DEFAULTS = {
    "partitioner": "murmur2_random",
    "enable.idempotence": True,
    "acks": "all",
    "compression.type": "lz4",
    "linger.ms": 20,
    "batch.size": 1_000_000,
    "batch.num.messages": 20_000,
    "queue.buffering.max.messages": 2_000_000,
    "queue.buffering.max.kbytes": 1_048_576,
}


def producer(cfg: Config, principal: str = TOOLS, **overrides) -> Producer:
    return Producer(client_conf(cfg, principal, **{**PRODUCER_DEFAULTS, **overrides}))


def schema_header(cfg: Config, topic: str, record: str) -> bytes:
    """Registers (or finds) the record's schema under <topic>-value; the wire-format header for it."""
    return framed(Registry(cfg.registry_url).register(f"{topic}-value", schema_str(record)).schema_id)


def command_value(cfg: Config, order_id: str, action: str = "CANCEL", **fields) -> bytes:
    """An OrderCommand (a member's cancel or amend) as the value of an order-commands record."""
    import io

    import fastavro

    from brokerstream.clients.schemas import load_schema

    out = io.BytesIO()
    record = {"order_id": order_id, "action": action, "client_ts": int(time.time() * 1000), "trace_id": None, **fields}
    fastavro.schemaless_writer(out, fastavro.parse_schema(load_schema("OrderCommand")), record)
    return schema_header(cfg, "order-commands", "OrderCommand") + out.getvalue()


@dataclass
class ProduceReport:
    produced: int = 0
    seconds: float = 0.0
    expected: collections.Counter = field(default_factory=collections.Counter)
    errors: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.produced / self.seconds if self.seconds else 0.0

    def to_json(self) -> dict:
        return {
            "produced": self.produced,
            "seconds": round(self.seconds, 3),
            "rate": round(self.rate),
            "expected": dict(self.expected),
            "errors": self.errors[:20],
        }


def murmur2(data: bytes) -> int:
    """Kafka's Java murmur2 (org.apache.kafka.common.utils.Utils.murmur2), as a signed 32-bit int."""
    m, r, mask = 0x5BD1E995, 24, 0xFFFFFFFF
    length = len(data)
    h = (0x9747B28C ^ length) & mask
    for i in range(0, length - length % 4, 4):
        k = data[i] | data[i + 1] << 8 | data[i + 2] << 16 | data[i + 3] << 24
        k = (k * m) & mask
        k ^= k >> r
        k = (k * m) & mask
        h = ((h * m) & mask) ^ k
    tail = length & ~3
    extra = length % 4
    if extra == 3:
        h ^= data[tail + 2] << 16
    if extra >= 2:
        h ^= data[tail + 1] << 8
    if extra >= 1:
        h ^= data[tail]
        h = (h * m) & mask
    h ^= h >> 13
    h = (h * m) & mask
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def java_partition(key: bytes, partitions: int) -> int:
    """The partition Java's default partitioner (and Kafka Streams) gives a key."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


def _send(p: Producer, topic: str, value: bytes, key: bytes, report: ProduceReport, partition: int = -1) -> None:
    """One record; partition -1 (librdkafka's unassigned) leaves it to the producer's partitioner."""
    while True:
        try:
            p.produce(topic, value, key, partition=partition)
            return
        except BufferError:  # the local queue is full: let librdkafka drain it
            p.poll(0.05)


def produce_orders(
    cfg: Config, orders: Iterable[GeneratedOrder], *, topic: str = "orders", rate: float | None = None, progress=None
) -> ProduceReport:
    """Orders as fast as possible, or at `rate` per second; returns counts by expected outcome."""
    header = schema_header(cfg, topic, "Order")
    strings = StringCache()
    keys: dict[str, bytes] = {}
    report = ProduceReport()
    errors = report.errors

    def delivered(err, msg):
        if err is not None:
            errors.append(str(err))

    # Orders written straight to Kafka stand in for the gateway: in the secure profile only it may write them.
    p = producer(cfg, GATEWAY if topic == ORDERS_TOPIC else TOOLS, on_delivery=delivered)
    t0 = time.monotonic()
    next_report = t0 + 5
    for n, o in enumerate(orders, 1):
        value = encode_order(
            header,
            strings,
            o.order_id,
            o.account_id,
            o.instrument_id,
            o.side,
            o.quantity,
            o.limit_micros,
            o.short_sale,
            o.client_ts_ms,
            None,
        )
        key = keys.get(o.key) or keys.setdefault(o.key, o.key.encode())
        _send(p, topic, value, key, report)
        report.expected[o.expected] += 1
        if n % 1000 == 0:
            p.poll(0)
            now = time.monotonic()
            if rate:
                ahead = n / rate - (now - t0)
                if ahead > 0:
                    time.sleep(ahead)
            if progress and now >= next_report:
                progress(f"[orders] {n:,} produced, {n / (now - t0):,.0f}/s")
                next_report = now + 5
    remaining = p.flush(60)
    report.seconds = time.monotonic() - t0
    report.produced = sum(report.expected.values()) - remaining
    if remaining:
        errors.append(f"{remaining} records still queued after 60 s")
    return report


def produce_ticks(
    cfg: Config,
    generator: TickGenerator,
    *,
    duration: float,
    snapshot: bool = True,
    topic: str = "price-ticks",
    progress=None,
    stop=None,
) -> ProduceReport:
    """An opening snapshot (every equity once), then a round every interval for `duration` seconds
    or until stop() says so."""
    header = schema_header(cfg, topic, "PriceTick")
    strings = StringCache()
    report = ProduceReport()
    # a feed handler batches: librdkafka sends a produce request per partition, not per broker, so
    # every partition a round touches is a request of its own until the linger gathers several rounds
    p = producer(cfg, **{"linger.ms": cfg.int("BS_TICKS_LINGER_MS")})

    def send(ticks: list[Tick]) -> None:
        for t in ticks:
            _send(
                p,
                topic,
                encode_tick(header, strings, t.instrument_id, t.price_micros, t.event_ts_ms, t.sequence),
                t.instrument_id.encode(),
                report,
            )
        report.expected["ticks"] += len(ticks)
        p.poll(0)

    t0 = time.monotonic()
    if snapshot:
        send(generator.snapshot(int(time.time() * 1000)))
    rounds = int(duration / generator.interval)
    next_report = t0 + 5
    for n in range(1, rounds + 1):
        if stop is not None and stop():
            break
        send(generator.next_round(int(time.time() * 1000)))
        now = time.monotonic()
        if progress and now >= next_report:
            progress(f"[ticks] {report.expected['ticks']:,} ticks, {report.expected['ticks'] / (now - t0):,.0f}/s")
            next_report = now + 5
        wait = t0 + n * generator.interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)
    remaining = p.flush(30)
    report.seconds = time.monotonic() - t0
    report.produced = report.expected["ticks"] - remaining
    return report


def write_report(report: ProduceReport, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report.to_json(), indent=2))


def _prefill_worker(cfg, make_generator, shard, count, rate, out):
    generator = make_generator(shard)
    report = produce_orders(cfg, (generator.next() for _ in range(count)), rate=rate)
    out.put(report)


def prefill(
    cfg: Config, make_generator, count: int, *, workers: int = 1, rate: float | None = None, progress=None
) -> ProduceReport:
    """`count` orders from `workers` processes, each generating for its own shard of the members.
    make_generator(shard) builds the generator for shard (i, workers)."""
    if workers == 1:
        generator = make_generator((0, 1))
        return produce_orders(cfg, (generator.next() for _ in range(count)), rate=rate, progress=progress)
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    shares = [count // workers + (1 if i < count % workers else 0) for i in range(workers)]
    t0 = time.monotonic()
    procs = [
        ctx.Process(
            target=_prefill_worker,
            args=(cfg, make_generator, (i, workers), shares[i], rate / workers if rate else None, out),
        )
        for i in range(workers)
    ]
    for p in procs:
        p.start()
    reports = [out.get() for _ in procs]
    for p in procs:
        p.join()
    total = ProduceReport(seconds=time.monotonic() - t0)
    for r in reports:
        total.produced += r.produced
        total.expected.update(r.expected)
        total.errors.extend(r.errors)
    return total


def produce_prices(
    cfg: Config, prices: dict[str, int], *, event_ts_ms: int | None = None, topic: str = "price-ticks"
) -> int:
    """One tick per instrument at the given price (micros): for tests and experiments that need to
    know exactly which price the flow saw last."""
    header = schema_header(cfg, topic, "PriceTick")
    strings = StringCache()
    report = ProduceReport()
    p = producer(cfg)
    ts = event_ts_ms or int(time.time() * 1000)
    for n, (instrument, micros) in enumerate(sorted(prices.items())):
        _send(
            p, topic, encode_tick(header, strings, instrument, micros, ts, ts * 1000 + n), instrument.encode(), report
        )
    remaining = p.flush(30)
    if remaining:
        raise RuntimeError(f"{remaining} ticks not delivered within 30 s")
    return len(prices)
