"""A schema registry outage under load: clients retry with backoff and serve what they cached; no valid
record is dead-lettered because the registry was down, and every order gets its result."""
from __future__ import annotations

import threading
import time
import uuid

from brokerstream.flowcheck import read_topic, reconcile, result_key, wait_drained
from brokerstream.gen.orders import OrderGenerator
from brokerstream.gen.produce import produce_orders

from .conftest import launcher


def test_a_registry_down_for_10_seconds_under_load_loses_and_dead_letters_nothing(
        stack, stack_env, world, gateway_for):
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
        post = threading.Thread(target=lambda: posted.update(resp=gateway_for(member).post(
            "/orders", {"order_id": f"{tag}-gw", "account_id": account, "instrument_id": "EQ000001", "side": "BUY",
                        "quantity": 1})))
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
