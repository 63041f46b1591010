"""Members posting orders through the gateway while something breaks, and the check that follows:
every order the gateway acknowledged (202) is decided exactly once, and nothing else is."""

from __future__ import annotations

import threading
import time

import requests

from brokerstream.ops.flowcheck import read_topic, result_key, wait_drained


class Members:
    """A few members posting single orders as fast as answers come back, each remembering what the
    gateway acknowledged and what it did not."""

    def __init__(self, gateway_for, world, tag: str, threads: int = 4):
        active = {m.member_id for m in world.members if m.status == "ACTIVE"}
        accounts = [a for a in world.accounts if a.status == "ACTIVE" and a.member_id in active]
        self.equity = next(
            i.instrument_id for i in world.instruments if i.instrument_type == "EQUITY" and i.status == "ACTIVE"
        )
        self.picks = [(a.member_id, a.account_id) for a in accounts[:threads]]
        self.gateway_for, self.tag = gateway_for, tag
        self.acked: list[tuple[str, str]] = []
        self.unacked: list[tuple[str, str, str]] = []
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.workers = [
            threading.Thread(target=self._run, args=(i, m, a), daemon=True) for i, (m, a) in enumerate(self.picks)
        ]

    def _run(self, i: int, member: str, account: str) -> None:
        gw = self.gateway_for(member)
        n = 0
        while not self.stop.is_set():
            order_id = f"{self.tag}-{i}-{n}"
            n += 1
            try:
                resp = gw.http.post(
                    gw.url + "/orders",
                    json={
                        "order_id": order_id,
                        "account_id": account,
                        "instrument_id": self.equity,
                        "side": "BUY",
                        "quantity": 1,
                    },
                    timeout=60,
                )
                outcome = resp.status_code
            except requests.RequestException as e:
                outcome = type(e).__name__
            with self.lock:
                if outcome == 202:
                    self.acked.append((member, order_id))
                else:
                    self.unacked.append((member, order_id, str(outcome)))
                    time.sleep(0.2)

    def __enter__(self):
        for w in self.workers:
            w.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for w in self.workers:
            w.join(90)


def check_decided_once(cfg, tag: str, members: "Members") -> dict[str, list[str]]:
    """After the flow drained: no order of the run decided twice, none acknowledged left undecided,
    and an unacknowledged order was either decided once or never written. Returns key -> statuses."""
    wait_drained(cfg, timeout=300)
    ours: dict[str, list[str]] = {}
    for m in read_topic(cfg, "order-results"):
        if m.value["order_id"].startswith(tag + "-"):
            ours.setdefault(m.key, []).append(m.value["status"])
    twice = {k: v for k, v in ours.items() if len(v) > 1}
    assert not twice, f"decided more than once: {list(twice.items())[:5]}"
    lost = [k for k in (result_key(m, o) for m, o in members.acked) if k not in ours]
    assert not lost, f"{len(lost)} of {len(members.acked)} acknowledged orders have no result, e.g. {lost[:5]}"
    unacked_keys = {result_key(m, o) for m, o, _ in members.unacked}
    assert set(ours) <= {result_key(m, o) for m, o in members.acked} | unacked_keys
    return ours


def wait_acked(members: "Members", more: int, timeout: float, why: str) -> None:
    """Until `more` orders beyond those acknowledged so far are acknowledged."""
    target = len(members.acked) + more
    deadline = time.monotonic() + timeout
    while len(members.acked) < target:
        assert time.monotonic() < deadline, f"{why}: {members.unacked[-5:]}"
        time.sleep(0.5)
