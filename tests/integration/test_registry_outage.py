"""A schema registry outage under load: clients retry with backoff and serve what they cached; no valid
record is dead-lettered because the registry was down, every order gets its result, and the connectors go
on with the schemas they hold."""

from __future__ import annotations

import threading
import time
import uuid

import psycopg

from brokerstream.clients.connectors import check
from brokerstream.gen.orders import OrderGenerator
from brokerstream.gen.produce import produce_orders
from brokerstream.ops.flowcheck import read_topic, reconcile, result_key, wait_drained

from .conftest import launcher
from .test_connectors import postgres_rows, wait_for


def every_result_in_postgres(stack, tag: str, orders: int) -> None:
    """Once the flow has drained, each of the run's orders has its result, and Postgres holds each one."""
    wait_drained(stack, timeout=240)
    decided = len(read_topic(stack, "order-results", keys=lambda k: k.partition("|")[2].startswith(tag)))
    assert decided == orders
    wait_for(
        lambda: (
            postgres_rows(stack, "SELECT count(*) FROM order_results WHERE order_id LIKE %s", tag + "%")[0][0]
            == decided
        ),
        timeout=180,
        what="every result in Postgres",
    )


def test_a_registry_down_for_10_seconds_under_load_loses_and_dead_letters_nothing(stack, stack_env, world, gateway_for):
    tag = f"reg{uuid.uuid4().hex[:6]}"
    gen = OrderGenerator(world, 31, run_tag=tag, today=world.as_of)
    orders = [gen.next() for _ in range(2000)]
    letters_before = len(read_topic(stack, "dlq.streams", decode=False))
    # a fresh order flow: nothing cached, so the outage is felt by the first record of each schema
    launcher(stack_env, "down", "streams")
    launcher(stack_env, "up", "--no-install", "streams")
    launcher(stack_env, "down", "registry")
    stopped = time.monotonic()
    try:
        # the producer registered (and cached) its schema before; the flow must fetch it meanwhile
        produced = threading.Thread(target=lambda: produce_orders(stack, iter(orders), rate=400))
        produced.start()
        member = world.members[0].member_id
        account = next(a.account_id for a in world.accounts if a.member_id == member and a.status == "ACTIVE")
        posted = {}
        post = threading.Thread(
            target=lambda: posted.update(
                resp=gateway_for(member).post(
                    "/orders",
                    {
                        "order_id": f"{tag}-gw",
                        "account_id": account,
                        "instrument_id": "EQ000001",
                        "side": "BUY",
                        "quantity": 1,
                    },
                )
            )
        )
        post.start()
        time.sleep(max(0.0, 10 - (time.monotonic() - stopped)))
    finally:
        launcher(stack_env, "up", "--no-install", "registry")
    produced.join(120)
    post.join(120)
    assert posted["resp"].status_code == 202, posted["resp"].text  # answered once the registry was back

    wait_drained(stack, timeout=240)
    wanted = {result_key(o.key, o.order_id) for o in orders} | {result_key(member, f"{tag}-gw")}
    results = read_topic(stack, "order-results", keys=lambda k: k in wanted)
    rec = reconcile(wanted, results, [])
    assert not rec.missing and not rec.duplicates, rec.summary()
    assert len(read_topic(stack, "dlq.streams", decode=False)) == letters_before


def test_the_connectors_ride_out_a_registry_outage_longer_than_they_hold_a_schema(stack, stack_env, world):
    # Apicurio's converter asks the registry again for a schema it has held 30 s. Down for 45 s, with orders
    # flowing to the sinks and Debezium's heartbeat every 10 s, each converter asks while it is down.
    tag = f"rcn{uuid.uuid4().hex[:6]}"
    gen = OrderGenerator(world, 37, run_tag=tag, today=world.as_of)
    orders = [gen.next() for _ in range(9_000)]
    member = world.members[-1].member_id

    def touch() -> None:  # a change event for the member, its value the same
        with psycopg.connect(stack.postgres_dsn(), autocommit=True) as conn:
            conn.execute("UPDATE members SET name = name WHERE member_id = %s", (member,))

    def member_events() -> int:
        return len(read_topic(stack, "ref.members", keys=lambda k: k == member))

    events_before = member_events()
    touch()  # the source holds the Member schema from here
    wait_for(lambda: member_events() > events_before, what="the first change event")
    letters_before = len(read_topic(stack, "dlq.connect", decode=False))

    # 200 orders/s for 45 s: the producer has its schema id before the registry goes
    produced = threading.Thread(target=lambda: produce_orders(stack, iter(orders), rate=200))
    produced.start()
    time.sleep(1)
    launcher(stack_env, "down", "registry")
    try:
        time.sleep(32)
        touch()
        time.sleep(13)
    finally:
        launcher(stack_env, "up", "--no-install", "registry")
    produced.join(120)

    every_result_in_postgres(stack, tag, len(orders))
    assert member_events() >= events_before + 2, "the change made while the registry was down arrived"
    assert check(stack) == [], "every connector and task still running"
    assert len(read_topic(stack, "dlq.connect", decode=False)) == letters_before


def test_a_connect_worker_started_while_the_registry_is_down_waits_for_it_and_dead_letters_nothing(
    stack, stack_env, world
):
    # A worker that starts during an outage holds no schema: every record it reads needs the registry.
    # Connect dead-letters whatever a converter throws under errors.tolerance=all, so without the
    # registry-faults converter each of these fills would go to dlq.connect and never reach Postgres.
    tag = f"rcc{uuid.uuid4().hex[:6]}"
    gen = OrderGenerator(world, 41, run_tag=tag, today=world.as_of)
    orders = [gen.next() for _ in range(1_500)]
    letters_before = len(read_topic(stack, "dlq.connect", decode=False))
    launcher(stack_env, "down", "registry")
    try:
        launcher(stack_env, "down", "connect")
        produced = threading.Thread(target=lambda: produce_orders(stack, iter(orders), rate=300))
        produced.start()
        launcher(stack_env, "up", "--no-install", "connect")
        time.sleep(15)  # the sinks' tasks meet records they cannot read while the registry is away
        assert check(stack) == [], "every connector and task running while it waits"
    finally:
        launcher(stack_env, "up", "--no-install", "registry")
    produced.join(120)

    every_result_in_postgres(stack, tag, len(orders))
    assert check(stack) == [], "every connector and task still running"
    assert len(read_topic(stack, "dlq.connect", decode=False)) == letters_before
