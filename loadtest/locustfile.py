"""Members trading through the gateway: Locust users and the load shape of the run.

Run through the launcher (`./brokerstream load --shape ...`), which sets BS_* for the stack and the
shape; or by hand: `locust -f loadtest/locustfile.py --host http://127.0.0.1:19080` (web UI).
Settings (environment): BS_LOAD_SHAPE constant|breaking-point|bursts, BS_LOAD_USERS, BS_LOAD_DURATION,
BS_LOAD_THINK_MIN/MAX (seconds), BS_LOAD_WEIGHTS "order,status,positions" (default 6,3,1),
breaking point: BS_LOAD_STEP_USERS, BS_LOAD_HOLD, BS_LOAD_SLO_P95_MS, BS_LOAD_MAX_USERS,
BS_LOAD_WARMUP (seconds at the first users count, not judged); BS_LOAD_RESULT_FILE gets C_SLA.
"""

from __future__ import annotations

import collections
import itertools
import json
import os
import random

from locust import FastHttpUser, LoadTestShape, between, task

from brokerstream.common import config
from brokerstream.gen import pgload
from brokerstream.gen.refdata import api_key
from brokerstream.loadtest.shapes import BreakingPoint, Constant, StepBursts, Window

_env = os.environ.get
WEIGHTS = [int(w) for w in _env("BS_LOAD_WEIGHTS", "6,3,1").split(",")]
_cfg = config.load()
_data = pgload.read(_cfg)
# Several instances of the streams app (BS_STREAMS_INSTANCES): each user trades through one of their
# gateways, as members behind a load balancer would; with one, --host names it.
GATEWAYS = _cfg.gateway_urls if _cfg.streams_instances > 1 else [""]
_next_gateway = itertools.count()
_accounts = collections.defaultdict(list)
for a in _data.accounts:
    if a.status == "ACTIVE":
        _accounts[a.member_id].append(a.account_id)
MEMBERS = [m.member_id for m in _data.members if m.status == "ACTIVE" and _accounts[m.member_id]]
EQUITIES = [i.instrument_id for i in _data.instruments if i.instrument_type == "EQUITY" and i.status == "ACTIVE"]


class Member(FastHttpUser):
    wait_time = between(float(_env("BS_LOAD_THINK_MIN", "0.5")), float(_env("BS_LOAD_THINK_MAX", "1.5")))

    def on_start(self):
        # log in: a member is whoever holds its API key
        self.member = random.choice(MEMBERS)
        self.headers = {"X-Api-Key": api_key(_data.seed, self.member)}
        self.accounts = _accounts[self.member]
        self.placed = collections.deque(maxlen=50)
        self.base = GATEWAYS[next(_next_gateway) % len(GATEWAYS)]

    @task(WEIGHTS[0])
    def place_order(self):
        body = {
            "account_id": random.choice(self.accounts),
            "instrument_id": random.choice(EQUITIES),
            "side": random.choice(["BUY", "BUY", "SELL"]),
            "quantity": random.randint(1, 20),
        }
        with self.client.post(
            self.base + "/orders", json=body, headers=self.headers, name="POST /orders", catch_response=True
        ) as resp:
            if resp.status_code == 202:
                self.placed.append(resp.json()["order_id"])
                resp.success()
            else:
                resp.failure(f"{resp.status_code}: {resp.text[:200]}")

    @task(WEIGHTS[1])
    def order_status(self):
        if self.placed:
            self.client.get(
                f"{self.base}/orders/{self.placed[0]}?wait_ms=2000", headers=self.headers, name="GET /orders/{id}"
            )

    @task(WEIGHTS[2])
    def positions(self):
        self.client.get(
            f"{self.base}/accounts/{random.choice(self.accounts)}/positions",
            headers=self.headers,
            name="GET /accounts/{id}/positions",
        )


def _shape():
    kind = _env("BS_LOAD_SHAPE", "constant")
    users, duration = int(_env("BS_LOAD_USERS", "20")), float(_env("BS_LOAD_DURATION", "60"))
    if kind == "constant":
        return Constant(users, duration)
    if kind == "breaking-point":
        return BreakingPoint(
            start_users=users,
            step_users=int(_env("BS_LOAD_STEP_USERS", "20")),
            hold_seconds=float(_env("BS_LOAD_HOLD", "15")),
            slo_p95_ms=float(_env("BS_LOAD_SLO_P95_MS", "200")),
            max_users=int(_env("BS_LOAD_MAX_USERS", "10000")),
            warmup_seconds=float(_env("BS_LOAD_WARMUP", "0")),
        )
    if kind == "bursts":
        return StepBursts(users, int(_env("BS_LOAD_STEP_USERS", "20")), 10, 5, int(duration // 15))
    raise ValueError(f"BS_LOAD_SHAPE: constant, breaking-point or bursts, not {kind!r}")


class RunShape(LoadTestShape):
    logic = _shape()
    _last = (0, 0)

    def tick(self):
        total = self.runner.stats.total
        requests, failures = total.num_requests, total.num_failures
        d_req, d_fail = requests - self._last[0], failures - self._last[1]
        self._last = (requests, failures)
        window = Window(
            rps=total.current_rps,
            p95_ms=total.get_current_response_time_percentile(0.95) or 0.0,
            error_ratio=(d_fail / d_req) if d_req else 0.0,
        )
        step = self.logic.tick(self.get_run_time(), window)
        if step is None and isinstance(self.logic, BreakingPoint) and _env("BS_LOAD_RESULT_FILE"):
            with open(_env("BS_LOAD_RESULT_FILE"), "w") as f:
                json.dump(
                    {
                        "c_sla": self.logic.c_sla,
                        "stopped_because": self.logic.stopped_because,
                        "steps": self.logic.steps,
                    },
                    f,
                )
        return step
