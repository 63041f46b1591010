"""The JVM serde (schemas/, io.brokerstream.serde) against confluent-kafka's Python serde and Flink's
avro-confluent format, through the real registry: each reads what the others write."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import time
import uuid
from decimal import Decimal

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from brokerstream.clients.flinksql import SqlSession, wait_job
from brokerstream.clients.schemas import Registry, registry_client, schema_str

from .conftest import ROOT

CLI_JAR = ROOT / "schemas" / "target" / "schemas-0.1.0-cli.jar"
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)

ORDERS = [
    {
        "key": "M000001",
        "value": {
            "order_id": "o-1",
            "account_id": "A0000001",
            "instrument_id": "EQ000001",
            "side": "BUY",
            "quantity": 100,
            "limit_price": "101.250000",
            "short_sale": False,
            "client_ts": 1795000000123,
            "trace_id": "t-1",
            "time_in_force": "GTC",
            "stop_price": None,
        },
    },
    {
        "key": "M000002",
        "value": {
            "order_id": "o-2",
            "account_id": "A0000003",
            "instrument_id": "OP00000007",
            "side": "SELL",
            "quantity": 3,
            "limit_price": None,
            "short_sale": True,
            "client_ts": 1795000000456,
            "trace_id": None,
            "time_in_force": "IOC",
            "stop_price": None,
        },
    },
    {
        "key": "M000001",
        "value": {
            "order_id": "o-3",
            "account_id": "A0000001",
            "instrument_id": "EQ000002",
            "side": "SELL",
            "quantity": 7,
            "limit_price": "-0.000001",
            "short_sale": False,
            "client_ts": 0,
            "trace_id": None,
            "time_in_force": "DAY",
            "stop_price": "120.500000",
        },
    },
]
TICKS = [
    {
        "key": "EQ000001",
        "value": {"instrument_id": "EQ000001", "price": "211.290000", "event_ts": 1795000000000, "sequence": 1},
    },
    {
        "key": "EQ000002",
        "value": {"instrument_id": "EQ000002", "price": "0.000001", "event_ts": 1795000000500, "sequence": 2},
    },
    {
        "key": "EQ000001",
        "value": {"instrument_id": "EQ000001", "price": "99999999.999999", "event_ts": 1795000001000, "sequence": 3},
    },
]


def java(*args: str, stdin: str | None = None) -> str:
    proc = subprocess.run(
        ["java", "-jar", str(CLI_JAR), *args], input=stdin, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def java_produce(cfg, topic, record, lines):
    java(
        "produce",
        cfg.kafka_bootstrap,
        cfg.registry_url,
        topic,
        record,
        stdin="\n".join(json.dumps(line) for line in lines),
    )


def java_consume(cfg, topic, record, count):
    out = java("consume", cfg.kafka_bootstrap, cfg.registry_url, topic, record, str(count), "60")
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def new_topic(cfg, prefix):
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": cfg.kafka_bootstrap})
    admin.create_topics([NewTopic(name, 1, 1)])[name].result()
    return name


def to_json_form(value):
    """confluent-kafka's decoded values in the tool's JSON conventions."""
    if isinstance(value, Decimal):
        return f"{value:.6f}"
    if isinstance(value, dt.datetime):
        return (value - EPOCH) // dt.timedelta(milliseconds=1)
    if isinstance(value, dict):
        return {k: to_json_form(v) for k, v in value.items()}
    return value


def from_json_form(record: dict, timestamp_fields=("client_ts", "event_ts")) -> dict:
    out = {}
    for k, v in record.items():
        if isinstance(v, str) and k in ("limit_price", "stop_price", "price"):
            v = Decimal(v)
        elif k in timestamp_fields:
            v = EPOCH + dt.timedelta(milliseconds=v)
        out[k] = v
    return out


def python_consume(cfg, topic, count):
    registry = registry_client(cfg)
    deserializer = AvroDeserializer(registry)
    consumer = Consumer(
        {"bootstrap.servers": cfg.kafka_bootstrap, "group.id": topic + "-py", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    got, deadline = [], time.monotonic() + 30
    while len(got) < count and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is None or msg.error():
            continue
        value = deserializer(msg.value(), SerializationContext(topic, MessageField.VALUE))
        got.append({"key": msg.key().decode(), "value": to_json_form(value)})
    consumer.close()
    return got


def python_produce(cfg, topic, record, lines):
    registry = registry_client(cfg)
    serializer = AvroSerializer(registry, schema_str(record), conf={"auto.register.schemas": True})
    producer = Producer({"bootstrap.servers": cfg.kafka_bootstrap, "partitioner": "murmur2_random"})
    for line in lines:
        value = serializer(from_json_form(line["value"]), SerializationContext(topic, MessageField.VALUE))
        producer.produce(topic, value, line["key"].encode())
    assert producer.flush(10) == 0


def test_python_reads_what_java_writes_and_java_reads_what_python_writes(stack):
    topic = new_topic(stack, "interop-orders")
    java_produce(stack, topic, "Order", ORDERS)
    assert python_consume(stack, topic, len(ORDERS)) == ORDERS

    python_produce(stack, topic, "Order", ORDERS)
    assert java_consume(stack, topic, "Order", 2 * len(ORDERS)) == ORDERS + ORDERS
    # Both languages sent the registry the same text: one version, one id.
    versions = Registry(stack.registry_url).http.get(f"{stack.registry_url}/subjects/{topic}-value/versions").json()
    assert versions == [1]


def test_flink_reads_what_java_writes_and_java_reads_what_flink_writes(stack):
    source = new_topic(stack, "interop-ticks")
    sink = new_topic(stack, "interop-ticks-flink")
    java_produce(stack, source, "PriceTick", TICKS)
    columns = "instrument_id STRING, price DECIMAL(18, 6), event_ts TIMESTAMP(3), `sequence` BIGINT"
    common = (
        f"'connector' = 'kafka', 'properties.bootstrap.servers' = '{stack.kafka_bootstrap}', "
        f"'format' = 'avro-confluent', 'avro-confluent.url' = '{stack.registry_url}'"
    )
    with SqlSession(stack.sql_gateway_url, {"execution.runtime-mode": "batch"}) as sql:
        sql.execute(
            f"CREATE TEMPORARY TABLE src ({columns}) WITH ({common}, 'topic' = '{source}', "
            "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset')"
        )
        rows = sql.execute(
            "SELECT instrument_id, CAST(price AS STRING), "
            "CAST(UNIX_TIMESTAMP(CAST(event_ts AS STRING), 'yyyy-MM-dd HH:mm:ss.SSS') AS BIGINT), "
            "DATE_FORMAT(event_ts, 'SSS'), `sequence` FROM src"
        ).rows
        got = sorted((r[0], r[1], r[2] * 1000 + int(r[3]), r[4]) for r in rows)
        want = sorted(
            (t["value"]["instrument_id"], t["value"]["price"], t["value"]["event_ts"], t["value"]["sequence"])
            for t in TICKS
        )
        assert got == want

        schema = schema_str("PriceTick").replace("'", "''")
        # The schema given to Flink must match the table exactly, nullability included.
        strict = (
            "instrument_id STRING NOT NULL, price DECIMAL(18, 6) NOT NULL, event_ts TIMESTAMP(3) NOT NULL, "
            "`sequence` BIGINT NOT NULL"
        )
        sql.execute(
            f"CREATE TEMPORARY TABLE dst ({strict}) WITH ({common}, 'topic' = '{sink}', "
            f"'avro-confluent.schema' = '{schema}')"
        )
        job = sql.execute("INSERT INTO dst SELECT * FROM src").job_id
        assert wait_job(stack.flink_url, job) == "FINISHED"
    read_back = java_consume(stack, sink, "PriceTick", len(TICKS))
    assert sorted(json.dumps(r["value"], sort_keys=True) for r in read_back) == sorted(
        json.dumps(t["value"], sort_keys=True) for t in TICKS
    )
