"""Open-loop load on the gateway (run as its own process: gevent must patch before anything else).

Reads a plan as JSON on stdin: {"url", "rate", "duration", "clients": [{"key", "accounts", "instruments"}]}.
Sends single orders at a fixed rate whatever the answers' speed, and for each measures the accept
latency (POST -> 202) and the time until its result is visible (POST start -> GET /orders/{id} 200,
long-polling). Prints the measurements as JSON on stdout.
"""
from gevent import monkey

monkey.patch_all()

import collections  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import gevent  # noqa: E402
from gevent.pool import Group  # noqa: E402
from geventhttpclient import HTTPClient, URL  # noqa: E402


def main() -> None:
    plan = json.load(sys.stdin)
    url = URL(plan["url"])
    http = HTTPClient(url.host, url.port, concurrency=int(plan.get("connections", 400)),
                      connection_timeout=5, network_timeout=40)
    rng = random.Random(plan.get("seed", 1))
    accept, visible, errors = [], [], collections.Counter()
    statuses = collections.Counter()

    def one(client: dict) -> None:
        headers = {"X-Api-Key": client["key"], "Content-Type": "application/json"}
        body = json.dumps({"account_id": rng.choice(client["accounts"]), "instrument_id": rng.choice(client["instruments"]),
                           "side": "BUY", "quantity": 1})
        t0 = time.perf_counter()
        try:
            resp = http.post("/orders", body=body, headers=headers)
            data = resp.read()
            t1 = time.perf_counter()
            if resp.status_code != 202:
                errors[f"POST {resp.status_code}"] += 1
                return
            accept.append((t1 - t0) * 1000)
            order_id = json.loads(data)["order_id"]
            result = http.get(f"/orders/{order_id}?wait_ms=10000", headers=headers)
            payload = result.read()
            t2 = time.perf_counter()
            if result.status_code != 200:
                errors[f"GET {result.status_code}"] += 1
                return
            visible.append((t2 - t0) * 1000)
            statuses[json.loads(payload)["status"]] += 1
        except Exception as exc:  # a refused or reset connection is an error of the run, not a crash
            errors[type(exc).__name__] += 1

    clients = plan["clients"]
    total = int(plan["rate"] * plan["duration"])
    group = Group()
    start = time.perf_counter()
    for i in range(total):
        due = start + i / plan["rate"]
        delay = due - time.perf_counter()
        if delay > 0:
            gevent.sleep(delay)
        group.spawn(one, clients[i % len(clients)])
    sent_for = time.perf_counter() - start
    group.join(timeout=60)
    json.dump({"sent": total, "send_seconds": sent_for, "accept_ms": accept, "visible_ms": visible,
               "errors": dict(errors), "statuses": dict(statuses)}, sys.stdout)


if __name__ == "__main__":
    main()
