"""Order integrity on the real stack: idempotent orders, the broker's clock, checked ticks, and what
the gateway answers to hostile requests (and that none of them writes anything)."""

from __future__ import annotations

import concurrent.futures
import time
import uuid
from decimal import Decimal

import requests
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource

from brokerstream.gen.avro_binary import StringCache, encode_order, encode_tick
from brokerstream.gen.produce import schema_header
from brokerstream.ops.flowcheck import read_topic, result_key, wait_drained

from .conftest import launcher

M1, M2 = "M000001", "M000002"


def account_of(world, member):
    return next(a.account_id for a in world.accounts if a.member_id == member and a.status == "ACTIVE")


def quantity(gw, account, instrument):
    positions = gw.get(f"/accounts/{account}/positions").json()["positions"]
    return next((p["quantity"] for p in positions if p["instrument_id"] == instrument), 0)


def raw_get(gw, path: str) -> int:
    """The status of a GET of exactly this path: requests would re-quote an invalid escape as %25."""
    import http.client
    from urllib.parse import urlsplit

    url = urlsplit(gw.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        conn.request("GET", path, headers={"X-Api-Key": gw.http.headers["X-Api-Key"]})
        return conn.getresponse().status
    finally:
        conn.close()


def end_offsets(cfg, topic):
    consumer = Consumer({"bootstrap.servers": cfg.kafka_bootstrap, "group.id": f"it-{uuid.uuid4().hex}"})
    try:
        parts = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in parts}
    finally:
        consumer.close()


def test_a_retry_books_once_across_a_restart_and_another_members_same_id_is_its_own(
    stack, stack_env, world, gateway_for
):
    order_id = f"dup-{uuid.uuid4().hex[:8]}"
    m1, m2 = gateway_for(M1), gateway_for(M2)
    a1, a2 = account_of(world, M1), account_of(world, M2)
    instrument = "EQ000003"
    before = quantity(m1, a1, instrument)
    order = {"order_id": order_id, "account_id": a1, "instrument_id": instrument, "side": "BUY", "quantity": 3}
    assert m1.post("/orders", order).status_code == 202
    first = m1.get(f"/orders/{order_id}", wait_ms=10000).json()
    assert first["status"] == "ACCEPTED"
    # the retry, with other values even: accepted for writing, but the first result stands
    assert m1.post("/orders", dict(order, quantity=50)).status_code == 202
    # and a long poll for it answers that result: the retry's own result never comes, so the poll, which
    # waits for an announcement of an order pending here, finds the first one in the store by its recheck
    # (were it left to its wait, it would end in 202 PENDING)
    again = m1.get(f"/orders/{order_id}", wait_ms=10000)
    assert again.status_code == 200 and again.json() == first, again.text
    # the same for the retry's own wait, which is another poll for an order pending here
    waited = m1.post("/orders?wait_ms=10000", dict(order, quantity=51))
    assert waited.status_code == 200 and waited.json() == first, waited.text
    theirs = m2.post("/orders", dict(order, account_id=a2, quantity=2))
    assert theirs.status_code == 202
    assert m2.get(f"/orders/{order_id}", wait_ms=10000).json()["account_id"] == a2
    wait_drained(stack)
    assert m1.get(f"/orders/{order_id}", wait_ms=0).json() == first
    assert quantity(m1, a1, instrument) == before + 3

    # across a restart of the order flow the id is still known
    launcher(stack_env, "down", "streams")
    launcher(stack_env, "up", "--no-install", "streams")
    assert m1.post("/orders", order).status_code == 202
    wait_drained(stack)
    assert quantity(m1, a1, instrument) == before + 3
    results = read_topic(stack, "order-results", keys=lambda k: k.partition("|")[2] == order_id)
    assert sorted(m.key for m in results) == sorted([result_key(M1, order_id), result_key(M2, order_id)])


def test_an_order_written_twice_to_kafka_is_decided_once(stack, world, gateway_for):
    order_id = f"kdup-{uuid.uuid4().hex[:8]}"
    a1 = account_of(world, M1)
    before = quantity(gateway_for(M1), a1, "EQ000004")
    value = encode_order(
        schema_header(stack, "orders", "Order"),
        StringCache(),
        order_id,
        a1,
        "EQ000004",
        "BUY",
        4,
        None,
        False,
        int(time.time() * 1000),
        None,
    )
    producer = Producer({"bootstrap.servers": stack.kafka_bootstrap, "partitioner": "murmur2_random"})
    errors = []
    for _ in range(2):
        producer.produce("orders", value, M1.encode(), on_delivery=lambda err, msg: errors.append(err) if err else None)
    assert producer.flush(10) == 0 and errors == []
    wait_drained(stack)
    results = read_topic(stack, "order-results", keys=lambda k: k == result_key(M1, order_id))
    assert len(results) == 1 and results[0].value["status"] == "ACCEPTED"
    assert quantity(gateway_for(M1), a1, "EQ000004") == before + 4


def test_the_brokers_clock_decides_expiry_not_the_clients(stack, world):
    admin = AdminClient({"bootstrap.servers": stack.kafka_bootstrap})
    res = ConfigResource(ConfigResource.Type.TOPIC, "orders")
    assert admin.describe_configs([res])[res].result()["message.timestamp.type"].value == "LogAppendTime"
    expired = next(i for i in world.instruments if i.instrument_type == "OPTION" and i.maturity < world.as_of)
    order_id = f"clock-{uuid.uuid4().hex[:8]}"
    a1 = account_of(world, M1)
    long_ago = int(time.mktime(expired.maturity.timetuple()) * 1000) - 86_400_000
    value = encode_order(
        schema_header(stack, "orders", "Order"),
        StringCache(),
        order_id,
        a1,
        expired.instrument_id,
        "BUY",
        1,
        None,
        False,
        long_ago,
        None,
    )
    producer = Producer({"bootstrap.servers": stack.kafka_bootstrap, "partitioner": "murmur2_random"})
    errors = []
    # the producer claims a record time too: the topic's append time overrides it
    producer.produce(
        "orders",
        value,
        M1.encode(),
        timestamp=long_ago,
        on_delivery=lambda err, msg: errors.append(err) if err else None,
    )
    assert producer.flush(10) == 0 and errors == []
    wait_drained(stack)
    [result] = read_topic(stack, "order-results", keys=lambda k: k == result_key(M1, order_id))
    assert result.value["status"] == "REJECTED" and result.value["reason"] == "OPTION_EXPIRED"
    assert result.value["client_ts"].timestamp() * 1000 == long_ago
    assert abs(result.value["ingest_ts"].timestamp() - time.time()) < 60


def test_refused_ticks_are_dead_lettered_and_never_price_an_order(stack, world, gateway_for):
    equity = "EQ000005"
    gw = gateway_for(M1)
    a1 = account_of(world, M1)
    good = gw.order(account_id=a1, instrument_id=equity, side="BUY", quantity=1)
    assert good["status"] == "ACCEPTED"
    price = Decimal(good["fill_price"])
    bad = [
        (equity, 0, "NON_POSITIVE_PRICE"),
        (equity, -5_000_000, "NON_POSITIVE_PRICE"),
        (equity, 2_000_000_000_000, "PRICE_TOO_HIGH"),
        ("EQ999999", 10_000_000, "UNKNOWN_INSTRUMENT"),
        ("OP00000001", 10_000_000, "NOT_AN_EQUITY"),
    ]
    header = schema_header(stack, "price-ticks", "PriceTick")
    where: dict[tuple[int, int], str] = {}
    producer = Producer({"bootstrap.servers": stack.kafka_bootstrap, "partitioner": "murmur2_random"})
    for n, (instrument, micros, fault) in enumerate(bad):
        producer.produce(
            "price-ticks",
            encode_tick(header, StringCache(), instrument, micros, int(time.time() * 1000), n + 1),
            instrument.encode(),
            on_delivery=lambda err, msg, f=fault: where.setdefault((msg.partition(), msg.offset()), f),
        )
    assert producer.flush(10) == 0 and len(where) == len(bad)
    deadline = time.monotonic() + 30
    while True:
        letters = {
            (d.value["source_partition"], d.value["source_offset"]): d.value["error_class"]
            for d in read_topic(stack, "dlq.ticks")
            if d.value and d.value["source_topic"] == "price-ticks"
        }
        if set(where) <= set(letters) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert {k: letters.get(k) for k in where} == where
    # the order flow still prices at the last accepted price, and so does the P&L job's input
    again = gw.order(account_id=a1, instrument_id=equity, side="SELL", quantity=1)
    assert again["status"] == "ACCEPTED" and Decimal(again["fill_price"]) == price
    latest = {m.key: m.value for m in read_topic(stack, "prices.latest", keys=lambda k: k == equity)}
    assert latest[equity]["price"] == price


HOSTILE = [
    # (what, content type, body, expected status, field or words in the error)
    ("malformed JSON", "application/json", b'{"account_id": ', 400, "not JSON"),
    ("trailing JSON", "application/json", b'{"side":"BUY"} {"x":1}', 400, "not JSON"),
    (
        "duplicate keys",
        "application/json",
        b'{"account_id":"A","account_id":"B","instrument_id":"E","side":"BUY","quantity":1}',
        400,
        "not JSON",
    ),
    ("NaN", "application/json", b'{"account_id":"A","instrument_id":"E","side":"BUY","quantity":NaN}', 400, "not JSON"),
    (
        "Infinity limit",
        "application/json",
        b'{"account_id":"A","instrument_id":"E","side":"BUY","quantity":1,"limit_price":"Infinity"}',
        400,
        "limit_price",
    ),
    (
        "huge exponent",
        "application/json",
        b'{"account_id":"A","instrument_id":"E","side":"BUY","quantity":1,"limit_price":1e999999999}',
        400,
        "limit_price",
    ),
    (
        "quantity out of range",
        "application/json",
        b'{"account_id":"A","instrument_id":"E","side":"BUY","quantity":99999999999999999999}',
        400,
        "quantity",
    ),
    (
        "control characters in an id",
        "application/json",
        b'{"account_id":"A\\u0007","instrument_id":"E","side":"BUY","quantity":1}',
        400,
        "account_id",
    ),
    (
        "client time out of range",
        "application/json",
        b'{"account_id":"A","instrument_id":"E","side":"BUY","quantity":1,"client_ts":946684799999}',
        400,
        "client_ts",
    ),
    (
        "unknown field",
        "application/json",
        b'{"account_id":"A","instrument_id":"E","side":"BUY","quantity":1,"is_admin":true}',
        400,
        "is_admin",
    ),
    (
        "wrong content type",
        "text/plain",
        b'{"account_id":"A","instrument_id":"E","side":"BUY","quantity":1}',
        415,
        "Content-Type",
    ),
    ("no content type", None, b'{"account_id":"A","instrument_id":"E","side":"BUY","quantity":1}', 415, "Content-Type"),
    ("oversized body", "application/json", b'{"trace_id":"' + b"x" * 40_000 + b'"}', 413, "larger than"),
]


def test_hostile_requests_get_a_clear_error_and_write_nothing(stack, world, gateway_for):
    gw = gateway_for(M1)
    before = end_offsets(stack, "orders")
    for what, content_type, body, status, words in HOSTILE:
        headers = {"X-Api-Key": gw.http.headers["X-Api-Key"]}
        if content_type:
            headers["Content-Type"] = content_type
        resp = requests.post(gw.url + "/orders", data=body, headers=headers, timeout=10)
        assert resp.status_code == status, (what, resp.status_code, resp.text)
        assert words in resp.text, (what, resp.text)
        batch = requests.post(
            gw.url + "/orders:batch", data=b'{"orders": [' + body + b"]}", headers=headers, timeout=10
        )
        assert batch.status_code in (400, 413, 415), (what, batch.text)
    # paths: decoded once, strictly; another member's order and a missing one look the same
    mine = gw.order(account_id=account_of(world, M1), instrument_id="EQ000001", side="BUY", quantity=1)
    for path, expected in (
        ("/orders/50%25", 400),
        ("/orders/%E0%A4%A", 400),
        ("/orders/a%00b", 400),
        ("/orders/%C3%28", 400),
        ("/accounts/%ZZ/positions", 400),
        ("/orders/%", 400),
    ):
        assert raw_get(gw, path + "?wait_ms=0") == expected, path
    other = gateway_for(M2).get(f"/orders/{mine['order_id']}", wait_ms=0)
    missing = gateway_for(M2).get("/orders/never-placed-x", wait_ms=0)
    assert other.status_code == missing.status_code == 404
    assert other.json()["error"].replace(mine["order_id"], "ID") == missing.json()["error"].replace(
        "never-placed-x", "ID"
    )
    assert gw.get("/orders/x", wait_ms=-1).status_code == 400
    assert gw.get("/orders/x", wait_ms=10**12).status_code == 400
    wait_drained(stack)
    written = {p: end - before.get(p, 0) for p, end in end_offsets(stack, "orders").items()}
    assert sum(written.values()) == 1, written  # only the one good order


def test_long_polls_are_capped_and_leave_no_waiters(stack, stack_env, world, gateway_for):
    cap = int(stack_env.get("BROKER_GATEWAY_MAX_WAITING_POLLS_PER_MEMBER") or 0)
    assert cap, "the test stack sets a small per-member cap"
    gw = gateway_for(M1)

    def poll(n):
        return requests.get(
            f"{gw.url}/orders/none-{n}", params={"wait_ms": 3000}, headers=gw.http.headers, timeout=30
        ).status_code

    with concurrent.futures.ThreadPoolExecutor(cap + 20) as pool:
        codes = list(pool.map(poll, range(cap + 20)))
    assert codes.count(429) >= 20 - 2 and codes.count(404) >= cap - 2, codes
    assert set(codes) <= {404, 429}
    health = requests.get(gw.url + "/health", timeout=10).json()
    assert health["waiting_long_polls"] == 0 and health["result_waiters"] == 0
    # another member is not starved by the first one's polls
    assert gateway_for(M2).get("/orders/none", wait_ms=0).status_code == 404
