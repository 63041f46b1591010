"""Three Kafka nodes, every topic replicated 3 ways with min.insync.replicas 2: one node dies (kill -9)
while members send orders through the gateway. Nothing is restarted by hand: the flow goes on, every
order the gateway acknowledged is decided exactly once, none is lost. `up` then brings the node back."""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from collections import Counter

from confluent_kafka.admin import AdminClient, ConfigResource

from brokerstream.clients.kafka_clients import client_conf
from brokerstream.common.topics import POSITIONS, load_catalog
from brokerstream.launcher.services.kafka import node_name

from ..integration.conftest import launcher
from ..integration.members import Members, check_decided_once, wait_acked


def _pids(env) -> dict[str, int | None]:
    return {r["service"]: r["pid"] for r in json.loads(launcher(env, "status", "--json").stdout)["services"]}


def _busiest_leader(cfg, topics) -> int:
    meta = AdminClient(client_conf(cfg)).list_topics(timeout=30)
    led = Counter(p.leader for t in topics for p in meta.topics[t].partitions.values())
    return led.most_common(1)[0][0]


def test_every_topic_is_replicated_on_three_nodes(cluster, cluster_world):
    admin = AdminClient(client_conf(cluster))
    meta = admin.list_topics(timeout=30)
    assert sorted(meta.brokers) == [1, 2, 3]
    catalog = {t.name for t in load_catalog(cluster)}
    # the catalog's topics and those the apps made for themselves (changelogs, offsets, transactions)
    internal = [
        n
        for n in meta.topics
        if n.startswith("brokerstream-orders-")
        or n in ("__consumer_offsets", "__transaction_state", "_connect-configs")
    ]
    assert internal, sorted(meta.topics)
    for name in sorted(catalog) + internal:
        for pid, part in meta.topics[name].partitions.items():
            assert len(part.replicas) == 3, (name, pid, part.replicas)
    resources = admin.describe_configs([ConfigResource("topic", "orders")])
    (entries,) = [f.result() for f in resources.values()]
    assert entries["min.insync.replicas"].value == "2"


def test_kill_minus_nine_of_one_broker_loses_nothing_and_needs_no_manual_step(
    cluster, cluster_env, cluster_world, cluster_gateway_for
):
    tag = f"kn{uuid.uuid4().hex[:6]}"
    with Members(cluster_gateway_for, cluster_world, tag) as members:
        wait_acked(members, 50, 60, "no order acknowledged before the kill")
        # the node leading most partitions of the flow's topics: its death moves the most leaders
        node = _busiest_leader(cluster, ("orders", "order-results", POSITIONS))
        name = node_name(node)
        victim = _pids(cluster_env)[name]
        os.kill(victim, signal.SIGKILL)
        killed_at = len(members.acked)
        # no `up`, no restart of any client: two of three replicas still make every write durable
        wait_acked(members, 200, 180, f"the flow did not go on with {name} dead")
        assert _pids(cluster_env)[name] is None
    assert len(members.acked) > killed_at
    ours = check_decided_once(cluster, tag, members)
    assert len(ours) >= len(members.acked)

    # `up` brings the node back; it rejoins and catches up its replicas
    out = launcher(cluster_env, "up", "--no-install", "streams", "connect", timeout=600).stdout
    assert name in out and _pids(cluster_env)[name] not in (None, victim), out
    admin = AdminClient(client_conf(cluster))
    deadline = time.monotonic() + 120
    while True:
        meta = admin.list_topics(topic="orders", timeout=30)
        isr = [len(p.isrs) for p in meta.topics["orders"].partitions.values()]
        if sorted(meta.brokers) == [1, 2, 3] and min(isr) == 3:
            break
        assert time.monotonic() < deadline, f"{name} did not rejoin the in-sync replicas: {isr}"
        time.sleep(2)
