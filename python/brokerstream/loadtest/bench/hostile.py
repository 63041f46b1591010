"""The hostile-member soak: a member with a valid key sending everything it should not (at most 200
requests/s on loopback: malformed ids, numbers, bodies and chunking, slow and idle connections, methods
that are not allowed, other members' accounts, long polls past its cap, poison records straight to Kafka)
beside normal load through the gateway (500 orders/s, the open-loop client of `bench system`) with every
service on. It passes when every normal order is decided exactly once, /health answered 200 the whole time,
no consumer group's lag grows, and every hostile request got one of the answers it must get.

    ./brokerstream bench hostile [--duration 600] [--rate 500] [--hostile-rate 200]

`--hostile-rate 0` is the control run: the same normal load without the hostile member.
"""

from __future__ import annotations

import collections
import random
import socket
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import requests

from brokerstream.common.config import Config
from brokerstream.gen import pgload
from brokerstream.gen.refdata import api_key

# The consumer groups an order passes through, from the gateway's write to its rows in Postgres.
ORDER_PATH = ("brokerstream-orders", "connect-sink-orders")


@dataclass(frozen=True)
class Attack:
    name: str
    expected: frozenset[int]
    weight: int = 1


@dataclass
class Tally:
    sent: collections.Counter = field(default_factory=collections.Counter)
    statuses: dict[str, collections.Counter] = field(
        default_factory=lambda: collections.defaultdict(collections.Counter)
    )
    unexpected: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, attack: Attack, status: int | str) -> None:
        with self.lock:
            self.sent[attack.name] += 1
            self.statuses[attack.name][status] += 1
            if status not in attack.expected and len(self.unexpected) < 50:
                self.unexpected.append(f"{attack.name}: got {status}, expected one of {sorted(attack.expected)}")

    def total(self) -> int:
        return sum(self.sent.values())

    def surprises(self) -> int:
        expected = {**{a.name: a.expected for a in ATTACKS.values()}, SLOW.name: SLOW.expected}
        return sum(
            n for name, counts in self.statuses.items() for status, n in counts.items() if status not in expected[name]
        )


ATTACKS = {
    a.name: a
    for a in (
        Attack("cancel with a 380 KB id", frozenset({414})),
        Attack("cancel with a 1 KB id", frozenset({400})),
        Attack("ids with a bar, a space, a lookalike or a control", frozenset({400}), 2),
        Attack("prices in other scripts' digits", frozenset({400})),
        Attack("client_ts that overflows a difference", frozenset({400})),
        Attack("TRACE and DELETE", frozenset({405})),
        Attack("no key or a wrong one", frozenset({401})),
        Attack("a body over its limit", frozenset({413})),
        Attack("malformed JSON", frozenset({400})),
        Attack("chunk sizes that do not fit", frozenset({400, 413})),
        Attack("headers too large", frozenset({431})),
        Attack("another member's account", frozenset({403})),
        Attack("long polls for orders that do not exist", frozenset({404, 429}), 3),
        Attack("cancels and amends of orders that do not exist", frozenset({202, 404}), 2),
        Attack("absurd but well-formed orders", frozenset({202}), 2),
        Attack("a batch with one bad order", frozenset({400})),
    )
}
SLOW = Attack("a slow connection held open until its deadline", frozenset({408, "closed"}))


class HostileMember(threading.Thread):
    """Sends the attacks above, paced to `rate` requests a second in all, until stopped, while holding `slow`
    connections open that never finish a request (each counted as a request when the edge lets it go)."""

    def __init__(self, cfg: Config, data, rate: float, seed: int = 7, threads: int = 32, slow: int = 100):
        super().__init__(daemon=True, name="hostile-member")
        active = [m.member_id for m in data.members if m.status == "ACTIVE"]
        self.member, self.other = active[1], active[0]
        self.key = api_key(data.seed, self.member)
        self.other_account = next(a.account_id for a in data.accounts if a.member_id == self.other)
        self.account = next(a.account_id for a in data.accounts if a.member_id == self.member)
        self.url = cfg.gateway_url.rstrip("/")
        parts = urlsplit(self.url)
        self.host, self.port = parts.hostname, parts.port
        self.rate, self.threads, self.slow = rate, threads, slow
        self.rng = random.Random(seed)
        self.names = [a.name for a in ATTACKS.values() for _ in range(a.weight)]
        self.tally = Tally()
        self.halt = threading.Event()

    def run(self) -> None:
        # The slow sockets' requests count against the rate: each is released at its 5-10 s deadline.
        slow_rate = self.slow / 7.5
        interval = self.threads / max(1.0, self.rate - slow_rate)
        workers = [threading.Thread(target=self._worker, args=(n, interval), daemon=True) for n in range(self.threads)]
        workers += [threading.Thread(target=self._slow_worker, args=(n,), daemon=True) for n in range(self.slow)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()

    def _slow_worker(self, n: int) -> None:
        rng = random.Random(f"slow-{n}")
        self.halt.wait(rng.random() * 5)
        while not self.halt.is_set():
            try:
                status = self._slow(rng)
            except OSError as e:
                status = "closed" if isinstance(e, (ConnectionResetError, BrokenPipeError)) else type(e).__name__
            self.tally.record(SLOW, status)

    def stop(self) -> None:
        self.halt.set()
        self.join(60)

    def _worker(self, n: int, interval: float) -> None:
        rng = random.Random(f"{n}")
        session = requests.Session()
        due = time.monotonic() + rng.random() * interval
        while not self.halt.is_set():
            name = rng.choice(self.names)
            attack = ATTACKS[name]
            try:
                status = self._send(session, rng, name)
            except requests.RequestException as e:
                status = type(e).__name__
            except OSError as e:
                status = "closed" if isinstance(e, (ConnectionResetError, BrokenPipeError)) else type(e).__name__
            self.tally.record(attack, status)
            due += interval
            self.halt.wait(max(0.0, due - time.monotonic()))

    # --- the attacks ------------------------------------------------------------------------------------
    def _send(self, s: requests.Session, rng: random.Random, name: str) -> int | str:
        key = {"X-Api-Key": self.key}
        json_h = {**key, "Content-Type": "application/json"}
        order = {"account_id": self.account, "instrument_id": "EQ000001", "side": "BUY", "quantity": 1}
        if name == "cancel with a 380 KB id":
            return s.post(f"{self.url}/orders/{'A' * 380_000}/cancel", headers=key, timeout=10).status_code
        if name == "cancel with a 1 KB id":
            return s.post(f"{self.url}/orders/{'A' * 1000}/cancel", headers=key, timeout=10).status_code
        if name == "ids with a bar, a space, a lookalike or a control":
            bad = rng.choice(["a%7Cb", "a%20b", "%EF%BC%A1", "a%01b", "x" * 65])
            return s.get(f"{self.url}/orders/{bad}", params={"wait_ms": 0}, headers=key, timeout=10).status_code
        if name == "prices in other scripts' digits":
            price = rng.choice(["\u0661\u0662\u0663", "\uff11\uff12", "1e3", "+5", " 7", "1.1234567"])
            return s.post(
                f"{self.url}/orders", json={**order, "limit_price": price}, headers=key, timeout=10
            ).status_code
        if name == "client_ts that overflows a difference":
            ts = rng.choice([-9223372036854775808 + int(time.time() * 1000), -1, 10**17])
            return s.post(f"{self.url}/orders", json={**order, "client_ts": ts}, headers=key, timeout=10).status_code
        if name == "TRACE and DELETE":
            method, path = rng.choice([("TRACE", "/health"), ("DELETE", "/orders/o-1"), ("PUT", "/orders")])
            return s.request(method, self.url + path, headers=key, timeout=10).status_code
        if name == "no key or a wrong one":
            return s.post(
                f"{self.url}/orders", json=order, timeout=10, headers=rng.choice([{}, {"X-Api-Key": "k" * 64}])
            ).status_code
        if name == "a body over its limit":
            return s.post(
                f"{self.url}/orders", data=b'{"trace_id":"' + b"x" * 20_000 + b'"}', headers=json_h, timeout=10
            ).status_code
        if name == "malformed JSON":
            body = rng.choice([b'{"account_id": ', b'{"a":1}{"b":2}', b"[" * 5000, b'{"quantity":NaN}'])
            return s.post(f"{self.url}/orders", data=body, headers=json_h, timeout=10).status_code
        if name == "chunk sizes that do not fit":
            size = rng.choice([b"FFFFFFFF", b"80000000", b"zz", b"7fffffff"])
            tail = b"\r\n" + b"x" * 20_000 if size == b"7fffffff" else b"\r\n{}\r\n0\r\n\r\n"
            return self._raw(
                b"POST /orders HTTP/1.1\r\nHost: h\r\nX-Api-Key: "
                + self.key.encode()
                + b"\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                + size
                + tail
            )
        if name == "headers too large":
            return self._raw(b"GET /health HTTP/1.1\r\nHost: h\r\nX-Pad: " + b"p" * 20_000 + b"\r\n\r\n")
        if name == "another member's account":
            return s.get(f"{self.url}/accounts/{self.other_account}/positions", headers=key, timeout=10).status_code
        if name == "long polls for orders that do not exist":
            return s.get(
                f"{self.url}/orders/ghost-{rng.randrange(10**9)}",
                params={"wait_ms": rng.choice([0, 500, 2000])},
                headers=key,
                timeout=30,
            ).status_code
        if name == "cancels and amends of orders that do not exist":
            ghost = f"ghost-{rng.randrange(10**9)}"
            if rng.random() < 0.5:
                return s.post(
                    f"{self.url}/orders/{ghost}/cancel", params={"wait_ms": 0}, headers=key, timeout=10
                ).status_code
            return s.patch(f"{self.url}/orders/{ghost}", json={"quantity": 5}, headers=key, timeout=10).status_code
        if name == "absurd but well-formed orders":
            absurd = rng.choice(
                [
                    {"quantity": 9_000_000_000_000_000_000},
                    {"quantity": -5},
                    {"limit_price": "0.000001"},
                    {"instrument_id": "NOPE"},
                    {"stop_price": "1", "limit_price": "2", "time_in_force": "GTC"},
                ]
            )
            return s.post(
                f"{self.url}/orders",
                json={**order, **absurd, "order_id": f"h-{rng.randrange(10**12)}"},
                headers=key,
                timeout=10,
            ).status_code
        if name == "a batch with one bad order":
            return s.post(
                f"{self.url}/orders:batch", json={"orders": [order, {**order, "side": "UP"}]}, headers=key, timeout=10
            ).status_code
        raise ValueError(name)

    def _raw(self, request: bytes, timeout: float = 15.0) -> int | str:
        with socket.create_connection((self.host, self.port), timeout=timeout) as s:
            try:
                s.sendall(request)
            except OSError:
                pass  # the edge may answer and close before it has read everything
            head = b""
            while b"\r\n" not in head:
                chunk = s.recv(4096)
                if not chunk:
                    return "closed"
                head += chunk
            return int(head[9:12])

    def _slow(self, rng: random.Random) -> int | str:
        """Half a request, then nothing: the edge must let it go at its deadline (408) without anyone noticing."""
        with socket.create_connection((self.host, self.port), timeout=20) as s:
            s.sendall(
                rng.choice([b"GET /health HT", b"POST /orders HTTP/1.1\r\nHost: h\r\nContent-Length: 99\r\n\r\n{"])
            )
            data = s.recv(4096)
            return int(data[9:12]) if data.startswith(b"HTTP/1.1 ") else "closed"


class HealthWatch(threading.Thread):
    """Asks /health twice a second; anything but 200 (or no answer in 2 s) is a moment the flow was not up."""

    def __init__(self, cfg: Config):
        super().__init__(daemon=True, name="health-watch")
        self.url = cfg.gateway_url.rstrip("/") + "/health"
        self.asked = 0
        self.down: list[str] = []
        self.slowest_ms = 0.0
        self.halt = threading.Event()

    def run(self) -> None:
        s = requests.Session()
        while not self.halt.wait(0.5):
            t0 = time.perf_counter()
            try:
                status = s.get(self.url, timeout=2).status_code
            except requests.RequestException as e:
                status = type(e).__name__
            self.slowest_ms = max(self.slowest_ms, (time.perf_counter() - t0) * 1000)
            self.asked += 1
            if status != 200:
                self.down.append(f"{time.strftime('%H:%M:%S')} {status}")

    def stop(self) -> None:
        self.halt.set()
        self.join(10)


class KafkaPoison(threading.Thread):
    """Every `every` seconds, records written around the gateway: a cancel naming a 900 KB order id and an
    order whose key is no member. Each must be dead-lettered while the flow goes on."""

    def __init__(self, cfg: Config, every: float = 30.0):
        super().__init__(daemon=True, name="kafka-poison")
        self.cfg, self.every = cfg, every
        self.sent = 0
        self.halt = threading.Event()

    def run(self) -> None:
        from confluent_kafka import Producer

        from brokerstream.gen.avro_binary import StringCache, encode_order
        from brokerstream.gen.produce import command_value, schema_header

        orders = schema_header(self.cfg, "orders", "Order")
        p = Producer({"bootstrap.servers": self.cfg.kafka_bootstrap, "message.max.bytes": 2_000_000})
        while not self.halt.wait(self.every):
            p.produce("order-commands", command_value(self.cfg, "C" * 900_000), b"M000002")
            p.produce(
                "orders",
                encode_order(
                    orders,
                    StringCache(),
                    f"poison-{self.sent}",
                    "A0000001",
                    "EQ000001",
                    "BUY",
                    1,
                    None,
                    False,
                    int(time.time() * 1000),
                    None,
                ),
                b"M1|A1",
            )
            p.flush(10)
            self.sent += 2

    def stop(self) -> None:
        self.halt.set()
        self.join(40)


def run(
    cfg: Config,
    *,
    duration: float = 600,
    rate: float = 500,
    hostile_rate: float = 200,
    tick_rate: float = 1000,
    progress=print,
) -> tuple[list[str], bool]:
    """The soak; returns its report's lines and whether it passed."""
    from brokerstream.loadtest.bench import system

    data = pgload.read(cfg)
    if not data.accounts:
        raise RuntimeError("no reference data: load it first, e.g. ./brokerstream refdata load --scale small")
    control = hostile_rate <= 0
    hostile, health, poison = HostileMember(cfg, data, max(hostile_rate, 1)), HealthWatch(cfg), KafkaPoison(cfg)
    progress(
        f"[hostile] {duration:.0f} s: normal load {rate:,.0f} orders/s, ticks {tick_rate:,.0f}/s, "
        + (
            "no hostile member (the control run)"
            if control
            else f"member {hostile.member} hostile at {hostile_rate:,.0f} requests/s, "
            "poison records to Kafka every 30 s"
        )
    )
    extra = [] if control else [hostile, poison]
    # Right after `refdata load` the gateway may not know the members' keys yet (Debezium is carrying them):
    # a valid key would be refused 401 then, which is not the hostile member's doing.
    system.wait_for_reference_data(cfg, data, progress)
    started = time.monotonic()
    for t in [health, *extra]:
        t.start()
    try:
        result = system.run(
            cfg,
            rates=[rate],
            step_seconds=duration,
            http_max=rate,
            tick_rate=tick_rate,
            positions=0,
            ceiling_records=0,
            warmup_seconds=10,
            progress=progress,
        )
    finally:
        for t in [*extra, health]:
            t.stop()
    elapsed = time.monotonic() - started
    step = result.steps[-1]
    lines = [
        *result.lines(),
        f"hostile requests: {hostile.tally.total():,} "
        f"({hostile.tally.total() / elapsed:,.0f}/s over {elapsed:,.0f} s, {hostile.slow if not control else 0} slow "
        "connections "
        f"held at a time), {hostile.tally.surprises()} answered otherwise",
    ]
    for name, counts in sorted(hostile.tally.statuses.items()):
        lines.append(
            f"  {name:<52} {sum(counts.values()):>7,}  "
            + ", ".join(f"{k}: {v:,}" for k, v in sorted(counts.items(), key=str))
        )
    lines += [f"  {u}" for u in hostile.tally.unexpected[:10]]
    lines.append(f"poison records straight to Kafka: {poison.sent}")
    lines.append(
        f"/health: asked {health.asked:,} times, not 200 {len(health.down)} times "
        f"({', '.join(health.down[:5]) or 'never'}), slowest {health.slowest_ms:,.0f} ms"
    )
    # The order path is what a member's requests and records reach; the P&L flow's output grows with the open
    # positions the normal load leaves (its sink's lag is reported, and a control run without the hostile member
    # shows what it does on its own).
    growing = [g for g, lag in step.lags.items() if lag["grows"] and g in ORDER_PATH]
    pnl_growing = [g for g, lag in step.lags.items() if lag["grows"] and g not in ORDER_PATH]
    verdict = {
        "every normal order decided exactly once": step.missing == 0 and step.duplicates == 0 and step.sent > 0,
        "the flow up the whole time": not health.down,
        "no growing lag on the order path (" + ", ".join(ORDER_PATH) + ")": not growing,
        "every hostile request answered as it must be": hostile.tally.surprises() == 0,
    }
    lines.append(
        f"normal orders: {step.sent:,} sent, {step.missing:,} without a result, {step.duplicates:,} decided twice"
    )
    lines.append(
        "lags: "
        + ", ".join(
            f"{g} {l['start']:,}->{l['end']:,} ({l['slope_per_s']:+.1f}/s)" for g, l in sorted(step.lags.items())
        )
    )
    if pnl_growing:
        lines.append("P&L flow lag growing (reported, not judged here): " + ", ".join(pnl_growing))
    lines += [f"{'PASS' if ok else 'FAIL'}: {what}" for what, ok in verdict.items()]
    return lines, all(verdict.values())
