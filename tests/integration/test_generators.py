"""Reference data into the real Postgres, orders and ticks into the real Kafka."""

import time
import uuid

import psycopg
import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from brokerstream.clients.schemas import registry_client
from brokerstream.gen import pgload, refdata
from brokerstream.gen.orders import OrderGenerator
from brokerstream.gen.produce import produce_orders, produce_ticks
from brokerstream.gen.ticks import TickGenerator


@pytest.fixture(scope="module")
def loaded(world):
    """The session's reference data (tiny, seed 42, as of today), which the session loaded. Loading other
    data here, even the same seed as of another day (other maturities), would leave the later tests
    valuing and trading instruments their `world` does not describe."""
    return world


def test_loading_the_same_data_again_is_a_no_op_and_other_data_needs_replace(stack, loaded):
    assert pgload.load(stack, loaded).startswith("already loaded")
    with pytest.raises(pgload.LoadConflict, match="--replace"):
        pgload.load(stack, refdata.generate("tiny", 43, loaded.as_of))
    with psycopg.connect(stack.postgres_dsn()) as conn:
        assert conn.execute("SELECT count(*) FROM instruments").fetchone()[0] == len(loaded.instruments)


def test_postgres_holds_exactly_the_generated_rows(stack, loaded):
    assert pgload.read(stack) == loaded


def new_topic(cfg, partitions=4):
    name = f"gen-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": cfg.kafka_bootstrap})  # must outlive the future
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result()
    return name


def consume_all(cfg, topic, expected):
    consumer = Consumer({"bootstrap.servers": cfg.kafka_bootstrap, "group.id": topic, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    msgs, deadline = [], time.monotonic() + 60
    while len(msgs) < expected and time.monotonic() < deadline:
        msgs.extend(m for m in consumer.consume(10_000, 0.5) if not m.error())
    consumer.close()
    return msgs


def test_prefilled_orders_all_arrive_keyed_by_member_and_decodable(stack, loaded):
    topic = new_topic(stack)
    gen = OrderGenerator(loaded, 7, run_tag="it")
    orders = [gen.next() for _ in range(20_000)]
    report = produce_orders(stack, iter(orders), topic=topic)
    assert report.produced == 20_000 and not report.errors
    msgs = consume_all(stack, topic, 20_000)
    assert len(msgs) == 20_000
    decode = AvroDeserializer(registry_client(stack))
    by_id = {o.order_id: o for o in orders}
    partitions_of_member = {}
    for m in msgs[::97]:
        value = decode(m.value(), SerializationContext(topic, MessageField.VALUE))
        o = by_id[value["order_id"]]
        assert m.key().decode() == o.key and value["quantity"] == o.quantity and value["side"] == o.side
    for m in msgs:
        partitions_of_member.setdefault(m.key(), set()).add(m.partition())
    assert all(len(p) == 1 for p in partitions_of_member.values())  # one member, one partition


def test_ticks_start_with_a_snapshot_and_carry_sequences(stack, loaded):
    topic = new_topic(stack)
    gen = TickGenerator(loaded, 5, rate=2000)
    report = produce_ticks(stack, gen, duration=1.0, topic=topic)
    assert report.produced > len(loaded.equity_starts)
    msgs = consume_all(stack, topic, report.produced)
    assert len(msgs) == report.produced
    decode = AvroDeserializer(registry_client(stack))
    firsts = {}
    for m in msgs:
        v = decode(m.value(), SerializationContext(topic, MessageField.VALUE))
        firsts.setdefault(v["instrument_id"], v)
    starts = {s.instrument_id: s.start_price for s in loaded.equity_starts}
    assert {i: int(v["price"].scaleb(6)) for i, v in firsts.items()} == starts
    assert {v["sequence"] for v in firsts.values()} == {1}
