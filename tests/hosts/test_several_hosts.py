"""The stack spread over three hosts: three Kafka nodes replicating every topic three ways, orders through
the gateway of either host, interactive queries answered across hosts, every client on TLS and SCRAM with
certificates naming the hosts; then one host's processes (a Kafka node, Connect, a streams app instance)
killed under load: the flow goes on through the other host without a manual step, every acknowledged order
is decided exactly once, and `up` on that host brings its node back into the in-sync replicas."""

from __future__ import annotations

import socket
import ssl
import time
import uuid

from confluent_kafka.admin import AdminClient, ConfigResource

from brokerstream.clients.kafka_clients import client_conf
from brokerstream.clients.kafka_security import ca_file
from brokerstream.common.topics import load_catalog
from brokerstream.launcher.layout import Layout

from ..integration.conftest import gateway_factory, load_world
from ..integration.members import Members, check_decided_once, wait_acked
from .conftest import ADDRESSES, PLACEMENT


def _certificate_names(host: str, port: int, ca: str) -> list[str]:
    """The addresses the broker certificate names, as a client dialing `host` verifies them."""
    context = ssl.create_default_context(cafile=ca)
    with socket.create_connection((host, port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=host) as tls:  # verifies the name, or raises
            return [v for k, v in tls.getpeercert()["subjectAltName"] if k == "IP Address"]


def test_the_stack_on_three_hosts_survives_one_host_killed_under_load(hosts):
    cfg = hosts.cfg
    # every broker advertises its own host, and its certificate names it
    meta = AdminClient(client_conf(cfg)).list_topics(timeout=30)
    assert sorted(b.host for b in meta.brokers.values()) == [ADDRESSES["h1"], ADDRESSES["h2"], ADDRESSES["h3"]]
    for node, host in ((1, "h1"), (2, "h2"), (3, "h3")):
        names = _certificate_names(ADDRESSES[host], cfg.kafka_node_ports(node)[0], str(ca_file(cfg)))
        assert ADDRESSES[host] in names

    # every topic (the catalog's and those the apps made: changelogs, offsets, transactions) on all three
    # nodes, and an acks=all write needs two of them
    admin = AdminClient(client_conf(cfg))
    internal = [
        n
        for n in meta.topics
        if n.startswith("brokerstream-orders-")
        or n in ("__consumer_offsets", "__transaction_state", "_connect-configs")
    ]
    assert internal, sorted(meta.topics)
    for name in sorted(t.name for t in load_catalog(cfg)) + internal:
        for pid, part in meta.topics[name].partitions.items():
            assert len(part.replicas) == 3, (name, pid, part.replicas)
    (entries,) = [f.result() for f in admin.describe_configs([ConfigResource("topic", "orders")]).values()]
    assert entries["min.insync.replicas"].value == "2"

    world = load_world(cfg)
    gateway_for = gateway_factory(cfg)
    first, second = cfg.gateway_urls
    assert (first.split("//")[1].split(":")[0], second.split("//")[1].split(":")[0]) == (
        ADDRESSES["h1"],
        ADDRESSES["h2"],
    )
    active = {m.member_id for m in world.members if m.status == "ACTIVE"}
    accounts = [a for a in world.accounts if a.status == "ACTIVE" and a.member_id in active]
    equity = next(i.instrument_id for i in world.instruments if i.instrument_type == "EQUITY" and i.status == "ACTIVE")

    # orders through either host's gateway, each result read through the other host's: a member's
    # results live with the instance holding its partition, so about half are forwarded across hosts
    placed = []
    for n, account in enumerate(accounts[:8]):
        via, other = (first, second) if n % 2 == 0 else (second, first)
        result = gateway_for(account.member_id, via).order(
            account_id=account.account_id, instrument_id=equity, side="BUY", quantity=1
        )
        assert result["status"] in ("ACCEPTED", "REJECTED"), result
        placed.append((account, result, other))
    for account, result, other in placed:
        gw = gateway_for(account.member_id, other)
        again = gw.get(f"/orders/{result['order_id']}")
        assert again.status_code == 200 and again.json()["status"] == result["status"], again.text
        positions = gw.get(f"/accounts/{account.account_id}/positions")
        assert positions.status_code == 200, positions.text

    # host 2 dies (kill -9: its Kafka node, Connect and a streams instance) while members trade on host 1
    tag = f"hk{uuid.uuid4().hex[:6]}"
    with Members(lambda m: gateway_for(m, first), world, tag) as members:
        wait_acked(members, 50, 120, "no order acknowledged before the kill")
        assert sorted(hosts.kill("h2")) == ["connect", "kafka-2", "streams-2"]
        killed_at = len(members.acked)
        t0 = time.monotonic()
        # no restart, no manual step: two of three replicas and the other instance carry on
        wait_acked(members, 200, 300, "the flow did not go on without host 2")
        resumed = time.monotonic() - t0
    assert len(members.acked) > killed_at
    # the read-back waits out the killed instance's open transaction (aborted by the broker on its timeout)
    t1 = time.monotonic()
    ours = check_decided_once(cfg, tag, members)
    assert len(ours) >= len(members.acked)
    print(
        f"host 2 killed after {killed_at} acknowledged orders; 200 more within {resumed:.0f} s; {len(ours)} decided, "
        f"read back {time.monotonic() - t1:.0f} s later"
    )

    # `up` on host 2 brings its processes back; its Kafka node rejoins and catches up its replicas
    layout = Layout(cfg)
    hosts.up({"h2": ()})
    assert all(layout.pidfile(name).live_pid() for name in PLACEMENT["h2"])
    deadline = time.monotonic() + 120
    while True:
        meta = admin.list_topics(topic="orders", timeout=30)
        isr = [len(p.isrs) for p in meta.topics["orders"].partitions.values()]
        if len(meta.brokers) == 3 and min(isr) == 3:
            break
        assert time.monotonic() < deadline, f"kafka-2 did not rejoin the in-sync replicas: {isr}"
        time.sleep(2)
