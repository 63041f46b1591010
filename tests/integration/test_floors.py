"""`bench floors` on the real stack, briefly: each part's JVM starts from the streams test jar, takes its load,
is metered as a service of its own and leaves nothing behind. Figures are not checked (a benchmark is not a
timed test); what is checked is that each part did the work it claims to measure."""

from __future__ import annotations

import time

from brokerstream.loadtest.bench import floors


def test_each_floor_part_does_its_work_alone_and_leaves_no_topics(stack, world):
    from confluent_kafka.admin import AdminClient

    result = floors.run(
        stack,
        rates=[300.0],
        seconds=3,
        repeats=1,
        parts=["http1", "flow"],
        idle_seconds=2,
        warmup_seconds=3,
        progress=lambda *_: None,
    )
    http1, flow = result.part("http1"), result.part("flow")
    (edge,) = http1.windows[300.0]
    (kafka_work,) = flow.windows[300.0]
    # every order of the window was answered (http1) or processed (flow): check_window refuses others
    assert edge.units > 0 and kafka_work.units > 0
    # metered as a service of their own: the floor's JVM did the work, in its own process
    assert edge.cpu_cores[floors.FLOOR] > 0 and kafka_work.cpu_cores[floors.FLOOR] > 0
    # the edge alone writes nothing; the flow writes its order, a result and a position, no more than
    # the markers and offsets of its transactions beside them
    assert http1.count(300.0, "records") < 0.5, http1.by_name(300.0, "records")
    records = flow.by_name(300.0, "records", top=10)
    assert 0.9 <= records.get(floors_topic("orders"), 0.0) <= 1.1, records  # the gateway's producer: no markers
    # the stream thread writes transactionally: besides a record per order, at most one commit marker per
    # partition per commit (the flow's 100 ms commit interval; the floor's topics have the flow topics' partitions)
    markers = (1000 / 100) * int(stack["BS_TOPIC_PARTITIONS"]) / 300.0
    for topic in (floors_topic("results"), floors_topic("positions")):
        assert 0.9 <= records.get(topic, 0.0) <= 1.1 + markers, records
    assert flow.count(300.0, "requests") > 0
    assert any(line.startswith("floor at 300 orders/s with http1") for line in result.lines())
    # its topics are gone (deleted as it exits; the metadata may say so a moment later)
    admin = AdminClient({"bootstrap.servers": stack.kafka_bootstrap})
    deadline = time.monotonic() + 30
    while left := [t for t in admin.list_topics(timeout=10).topics if t.startswith("bsfloor.")]:
        assert time.monotonic() < deadline, left
        time.sleep(1)


def floors_topic(name: str) -> str:
    return f"bsfloor.{name}"
