"""The single Kafka broker dies (kill -9) while members send orders through the gateway; `up` brings it
back. No order the gateway acknowledged (202) is lost, none is decided twice, and the flow decides new
orders again without any step beyond `up`.

Named to run last: the broker's death shakes every client of the stack (Connect, Flink), and the
other tests should not pay for that.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid

from .conftest import launcher
from .members import Members, check_decided_once, wait_acked


def _pid(env, service: str) -> int:
    rows = {r["service"]: r for r in json.loads(launcher(env, "status", "--json").stdout)["services"]}
    return rows[service]["pid"]


def test_kill_minus_nine_of_the_broker_loses_no_acknowledged_order(stack, stack_env, world, gateway_for):
    tag = f"kb{uuid.uuid4().hex[:6]}"
    with Members(gateway_for, world, tag) as members:
        time.sleep(4)
        before_kill = len(members.acked)
        victim = _pid(stack_env, "kafka")
        os.kill(victim, signal.SIGKILL)
        time.sleep(3)
        out = launcher(stack_env, "up", "--no-install", timeout=600).stdout
        assert _pid(stack_env, "kafka") != victim, out
        wait_acked(members, 50, 120, "no orders acknowledged after the broker came back")
    assert before_kill > 0, "no order was acknowledged before the kill"
    check_decided_once(stack, tag, members)

    # the flow decides a new order without any manual step
    member, account = members.picks[0]
    result = gateway_for(member).order(
        order_id=f"{tag}-after", account_id=account, instrument_id=members.equity, side="BUY", quantity=1
    )
    assert result["status"] in ("ACCEPTED", "REJECTED")
