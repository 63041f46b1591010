"""Floors: the parts of an order's path measured alone, each the least it can cost on this machine with the
frameworks the order flow is built on, to set beside what `bench cost` measures for the whole.

    ./brokerstream bench floors [--rates 1000] [--duration 30] [--repeats 3] [--parts http,http1,flow]

Each part is a JVM of the streams service's own settings (heap, collector, locale) running one thing, its
code kept with the streams module's tests (`streams/src/test/.../bench`, the streams test jar):

- http: the gateway's HTTP edge with nothing behind it, driven by the same open-loop client as `bench cost`
  (a POST, then a long poll answered by one thread every commit interval, as the order flow's commit
  announces its results);
- http1: the same, one request per order (`POST /orders?wait_ms`);
- flow: the gateway's producer and a Kafka Streams app with the order flow's own configuration (exactly-once,
  its commit interval and batching, one stream thread), one record in and a result and a position out, on
  the running broker's own topics `bsfloor.*`; no Avro, no stores, no decision, and nobody reads what it
  writes.

The stack stays up and idle around it (the broker is the stack's; the P&L job and the sinks read none of the
floor's topics): each part's idle is read with its JVM started and subtracted, as `bench cost` subtracts
the stack's. A floor is a lower bound, never the cost of an order: the whole does all of this and more.
Adding the http (or http1) part's JVM to the flow part's gives the least the streams process can spend per
order; the flow part's broker figure the least the broker can.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median

from brokerstream.common.config import Config
from brokerstream.launcher.cpugroups import CpuGroups
from brokerstream.launcher.layout import Layout
from brokerstream.launcher.services import service_names
from brokerstream.launcher.services.base import java_opts
from brokerstream.loadtest.bench import cost
from brokerstream.loadtest.bench.costrun import lowest

PARTS = {
    "http": "the gateway's HTTP edge, nothing behind it: a POST answered 202, then a long poll answered at the next "
    "commit interval's announcement",
    "http1": "the same edge, one request per order: POST /orders?wait_ms answered at the next announcement",
    "flow": "the gateway's producer and Kafka Streams with the order flow's settings (exactly-once, one stream "
    "thread): one record in, a result and a position out; no Avro, stores, decision or readers",
}
FLOOR = "floor"  # the part's JVM, as a service of the readings
TESTS_JAR = ("streams", "streams-0.1.0-tests.jar")
APP_JAR = ("streams", "streams-0.1.0.jar")
MAIN = {"http": "HttpFloor", "http1": "HttpFloor", "flow": "FlowFloor"}
# the loadgen's watchers time nothing here: long fetch waits, as in bench cost
WATCH_WAIT_MS = 500


@dataclass
class PartResult:
    part: str
    idle: cost.Cost
    windows: dict[float, list[cost.Cost]] = field(default_factory=dict)  # rate -> its windows

    def medians(self, rate: float) -> dict[str, float]:
        """Per service, the median of the windows' CPU microseconds per order above the part's idle."""
        per = [c.us_per_unit(self.idle) for c in self.windows[rate]]
        return {s: median([u.get(s, 0.0) for u in per]) for s in per[0]}

    def ranges(self, rate: float, service: str) -> tuple[float, float]:
        values = [c.us_per_unit(self.idle).get(service, 0.0) for c in self.windows[rate]]
        return min(values), max(values)

    def _above_idle(self, c: cost.Cost, kind: str) -> dict[str, float]:
        # the idle stack's own requests (its consumers' fetches, about 100 a second) are not the part's
        rate = max(c.rate, 1e-9)
        base = self.idle.per_second
        return {
            name: max(0.0, v - base.get((k, name), 0.0)) / rate for (k, name), v in c.per_second.items() if k == kind
        }

    def by_name(self, rate: float, kind: str, top: int = 4) -> dict[str, float]:
        """The median of the windows' per-order count of `kind` above idle by API key or topic, the largest
        `top`."""
        per = [self._above_idle(c, kind) for c in self.windows[rate]]
        names = {n for u in per for n in u}
        medians = {n: median([u.get(n, 0.0) for u in per]) for n in names}
        return dict(sorted(((n, m) for n, m in medians.items() if m > 0), key=lambda kv: -kv[1])[:top])

    def count(self, rate: float, kind: str) -> float:
        """The median of the windows' per-order count of `kind` (requests, records, bytes) above idle."""
        return median([sum(self._above_idle(c, kind).values()) for c in self.windows[rate]])


@dataclass
class FloorsResult:
    run_id: str
    started: dt.datetime
    parts: list[PartResult]
    settings: dict
    budget: dict | None = None

    def part(self, name: str) -> PartResult | None:
        return next((p for p in self.parts if p.part == name), None)

    def lines(self) -> list[str]:
        out = [
            f"run {self.run_id}: each part measured ALONE on the running stack's broker (every other service up "
            "and idle): a floor of what that part can cost, not a figure of the stack",
        ]
        changed = self.settings.get("flow_settings") or {}
        for p in self.parts:
            out.append(f"{p.part}: {PARTS[p.part]}")
            if p.part == "flow" and changed:
                out.append(
                    "  its settings changed from the order flow's: " + ", ".join(f"{k}={v}" for k, v in changed.items())
                )
            out.append(
                f"  idle with its JVM started: {FLOOR} {p.idle.cpu_cores.get(FLOOR, 0.0):.3f} cores, "
                f"kafka {p.idle.cpu_cores.get('kafka', 0.0):.3f}"
            )
            for rate in sorted(p.windows):
                m = p.medians(rate)
                lo, hi = p.ranges(rate, FLOOR)
                klo, khi = p.ranges(rate, "kafka")
                rest = sum(v for s, v in m.items() if s not in (FLOOR, "kafka"))
                jit = median([c.jit_us_per_unit(p.idle).get(FLOOR, 0.0) for c in p.windows[rate]])
                n = len(p.windows[rate])
                out.append(
                    f"  {rate:,.0f} orders/s, {n} window{'s' if n > 1 else ''} (median, range): "
                    f"its JVM {m.get(FLOOR, 0.0):,.0f} us per order ({lo:,.0f}-{hi:,.0f}; JIT {jit:,.0f}), "
                    f"kafka {m.get('kafka', 0.0):,.0f} ({klo:,.0f}-{khi:,.0f}), the rest of the stack {rest:,.0f}; "
                    f"above idle: broker requests {p.count(rate, 'requests'):.2f}, "
                    f"records {p.count(rate, 'records'):.2f}, bytes {p.count(rate, 'bytes'):,.0f} per order"
                )
                requests = p.by_name(rate, "requests")
                if requests:
                    out.append("    requests per order: " + ", ".join(f"{k} {v:.3f}" for k, v in requests.items()))
        out += self.summary()
        return out

    def summary(self) -> list[str]:
        """The streams process's floor (an HTTP part's JVM plus the flow part's) and the broker's, at each rate
        both measured, against the budget's lines for them."""
        flow = self.part("flow")
        if flow is None:
            return []
        cpu_budget = (self.budget or {}).get("orders", {}).get("cpu_us", {})
        out = []
        for name in ("http", "http1"):
            edge = self.part(name)
            if edge is None:
                continue
            for rate in sorted(set(edge.windows) & set(flow.windows)):
                e, f = edge.medians(rate), flow.medians(rate)
                streams = e.get(FLOOR, 0.0) + f.get(FLOOR, 0.0)
                kafka = e.get("kafka", 0.0) + f.get("kafka", 0.0)
                out.append(
                    f"floor at {rate:,.0f} orders/s with {name}: streams process {streams:,.0f} us per order "
                    f"({name} {e.get(FLOOR, 0.0):,.0f} + flow {f.get(FLOOR, 0.0):,.0f})"
                    + _against(streams, cpu_budget.get("streams"))
                    + f"; kafka {kafka:,.0f}"
                    + _against(kafka, cpu_budget.get("kafka"))
                    + f"; the two {streams + kafka:,.0f}"
                    + _against(streams + kafka, cpu_budget.get("total"), "the whole order's budget")
                )
        return out


def _against(value: float, limit: float | None, what: str = "budget") -> str:
    if limit is None:
        return ""
    return f" ({what} {limit:,.0f}: {'under' if value <= limit else 'ABOVE'})"


class FloorProcess:
    """One part's JVM, with the streams service's JVM settings, in the streams app's CPU group."""

    def __init__(self, cfg: Config, part: str, cpu: CpuGroups, port: int, settings_file: Path | None = None):
        layout = Layout(cfg)
        jars = [layout.module_jar(*TESTS_JAR), layout.module_jar(*APP_JAR)]
        for jar in jars:
            if not jar.exists():
                raise FileNotFoundError(f"{jar} is missing: ./brokerstream install builds it")
        main = f"io.brokerstream.streams.bench.{MAIN[part]}"
        args = [str(settings_file)] if part == "flow" else [cfg["BS_BIND"], str(port), "100"]
        self.proc = subprocess.Popen(
            [
                cfg.java(),
                *java_opts(cfg["BS_STREAMS_HEAP"], gc=cfg["BS_JAVA_GC"]),
                "-cp",
                ":".join(map(str, jars)),
                main,
                *args,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        cpu.place("orders", [self.proc.pid])
        self.ready = self._answer(timeout_hint=f"{main} did not start")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _answer(self, timeout_hint: str) -> str:
        # the test jar's logging writes warnings to stdout too: answers are the lines this protocol writes
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{timeout_hint}: it exited ({self.proc.wait()})")
            if line.startswith("ready") or line.startswith("{"):
                return line.strip()

    def run(self, rate: float, seconds: float) -> dict:
        self.proc.stdin.write(f"run {rate} {seconds}\n")
        self.proc.stdin.flush()
        answer = json.loads(self._answer("the floor app"))
        if "error" in answer:
            raise RuntimeError(f"floor app: {answer['error']}")
        return answer

    def close(self) -> None:
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
            self.proc.wait(60)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait(10)


def flow_settings(cfg: Config, path: Path, overrides: dict[str, str] | None = None) -> Path:
    """The app's settings for the flow part: the stack's broker and registry, the flow topics' partitions;
    everything else the order flow's defaults, but for `overrides` (the app's keys: commit.interval.ms, ...)."""
    values = {
        "kafka.bootstrap": cfg.kafka_bootstrap,
        "registry.url": cfg.registry_url,
        "floor.partitions": cfg["BS_TOPIC_PARTITIONS"],
        "stream.threads": cfg["BS_STREAMS_THREADS"],
        **(overrides or {}),
    }
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    return path


def parse_settings(pairs: list[str]) -> dict[str, str]:
    """`KEY=VALUE` pairs, as `--flow-setting` takes them."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"a flow setting is KEY=VALUE, not {pair!r}")
        out[key.strip()] = value.strip()
    return out


def idle_of(a: cost.Cost, b: cost.Cost) -> cost.Cost:
    """The part's idle: each service's CPU and each broker counter's rate at the lower of two readings."""
    idle = lowest(a, b)
    idle.per_second = {k: min(a.per_second.get(k, v), v) for k, v in b.per_second.items()}
    return idle


def check_window(part: str, answer: dict) -> None:
    """A window whose orders were not all answered (http) or processed (flow) measured something else."""
    if part == "flow":
        if answer["processed"] < answer["sent"]:
            raise RuntimeError(f"the flow floor processed {answer['processed']} of {answer['sent']} orders")
        return
    errors = answer.get("errors") or {}
    if errors or answer["results"]["in_flight"]:
        raise RuntimeError(f"the {part} floor left orders unanswered: errors {errors}, {answer['results']}")


def run(
    cfg: Config,
    *,
    rates: list[float],
    seconds: float = 30,
    repeats: int = 3,
    parts: list[str] | None = None,
    idle_seconds: float = 15,
    flow_overrides: dict[str, str] | None = None,
    warmup_seconds: float = 20,
    seed: int = 31,
    budget: dict | None = None,
    progress=print,
) -> FloorsResult:
    from brokerstream.gen import pgload

    parts = parts or list(PARTS)
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise ValueError(f"parts are {', '.join(PARTS)}, not {', '.join(unknown)}")
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, not {repeats}")
    run_id = f"{dt.datetime.now(dt.timezone.utc):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"
    started = dt.datetime.now(dt.timezone.utc)
    data = pgload.read(cfg) if any(p != "flow" for p in parts) else None
    sitting = _Sitting(cfg, CpuGroups.of(cfg), data, seed, idle_seconds, warmup_seconds, progress, flow_overrides)
    results = [sitting.measure(part, rates, seconds, repeats) for part in parts]
    return FloorsResult(
        run_id,
        started,
        results,
        {
            "rates": rates,
            "seconds": seconds,
            "repeats": repeats,
            "parts": parts,
            "idle_seconds": idle_seconds,
            "flow_settings": flow_overrides or {},
        },
        budget,
    )


@dataclass
class _Sitting:
    """What every part's measurement shares: the stack's configuration, its CPU groups, the load's data."""

    cfg: Config
    cpu: CpuGroups
    data: object
    seed: int
    idle_seconds: float
    warmup_seconds: float
    progress: object
    flow_overrides: dict[str, str] | None = None

    def measure(self, part: str, rates: list[float], seconds: float, repeats: int) -> PartResult:
        with tempfile.TemporaryDirectory(prefix="bsfloor-") as tmp:
            settings = (
                flow_settings(self.cfg, Path(tmp) / "floor.properties", self.flow_overrides) if part == "flow" else None
            )
            self.progress(f"[floors] {part}: starting its JVM")
            port = self.cfg.gateway_port(1) + 90  # beside the stack's ports, never one of them
            floor = FloorProcess(self.cfg, part, self.cpu, port, settings)
            client = None
            try:
                if part != "flow":
                    client = self._client(f"http://{self.cfg['BS_BIND']}:{int(floor.ready.split()[1])}")
                meter = cost.Meter(self.cfg, service_names(self.cfg))
                meter.pids[FLOOR] = floor.pid
                load = _Load(part, floor, client, meter)
                windows: dict[float, list[cost.Cost]] = {}
                first_idle = None
                for i, rate in enumerate(rates):
                    # a just-started JVM compiles the load's paths and a Kafka Streams app settles its tasks:
                    # neither is idle, so the idle is read after the first warm-up (and again at the end)
                    warm = self.warmup_seconds if i == 0 else self.warmup_seconds / 2
                    self.progress(f"[floors] {part}: warm-up {warm:.0f} s at {rate:,.0f} orders/s")
                    load.window(rate, warm, "warm-up")
                    if first_idle is None:
                        first_idle = self._idle(part, meter)
                    windows[rate] = []
                    for n in range(1, repeats + 1):
                        self.progress(f"[floors] {part}: {rate:,.0f} orders/s for {seconds:.0f} s ({n} of {repeats})")
                        windows[rate].append(load.window(rate, seconds, f"{part} at {rate:,.0f}/s ({n} of {repeats})"))
                return PartResult(part, idle_of(first_idle, self._idle(part, meter)), windows)
            finally:
                if client:
                    client.close()
                floor.close()

    def _client(self, url: str):
        from brokerstream.loadtest.bench.system import LoadClient, plan

        return LoadClient(
            self.cfg,
            {
                **plan(self.cfg, self.data, seed=self.seed, trace_one_in=0),
                "gateway_url": url,
                "gateway_urls": [url],
                "watch_wait_ms": WATCH_WAIT_MS,
            },
            self.cpu,
        )

    def _idle(self, part: str, meter: cost.Meter) -> cost.Cost:
        # after a pause: what a load leaves running (a commit, a linger, a fetch) is not idle
        time.sleep(3)
        self.progress(f"[floors] {part}: idle {self.idle_seconds:.0f} s")
        a = meter.read()
        time.sleep(self.idle_seconds)
        return cost.Cost.between(a, meter.read(), label="idle", unit="second", units=self.idle_seconds)


@dataclass
class _Load:
    """One part's load: the flow part's JVM sends its own orders; the HTTP parts' come from the load client."""

    part: str
    floor: FloorProcess
    client: object
    meter: cost.Meter

    def window(self, rate: float, secs: float, label: str) -> cost.Cost:
        a = self.meter.read()
        if self.client is None:
            answer = self.floor.run(rate, secs)
        else:
            mode = "http1" if self.part == "http1" else "http"
            answer = self.client.step(mode, rate, secs, "floor" + uuid.uuid4().hex[:6], 1)
        check_window(self.part, answer)
        return cost.Cost.between(
            a, self.meter.read(), label=label, unit="order", units=answer["sent"], conditions=PARTS[self.part]
        )


def store(cfg: Config, result: FloorsResult) -> None:
    """Each window in ClickHouse's `cost_lines`, phase `floor-<part>`, step numbered per part and rate."""
    from dataclasses import asdict

    from brokerstream.metrics import store as chstore
    from brokerstream.metrics.runs import new_record

    record = new_record(cfg, "floors", "windows", json.dumps(result.settings), 0, 1)
    record.run_id, record.started, record.ended = result.run_id, result.started, dt.datetime.now(dt.timezone.utc)
    rows = cost_rows(result)
    client = chstore.connect(cfg)
    try:
        chstore.apply_ddl(client)
        client.insert("runs", [list(asdict(record).values())], column_names=list(asdict(record)))
        client.insert("cost_lines", rows, column_names=cost.COST_COLUMNS)
    finally:
        client.close()


def cost_rows(result: FloorsResult) -> list[list]:
    """`cost_lines` rows: per part its idle, then each window above it, steps numbered across the run."""
    rows = []
    step = 0
    for p in result.parts:
        step += 1
        rows += cost.rows(result.run_id, step, f"floor-{p.part}-idle", p.idle)
        for rate in sorted(p.windows):
            for c in p.windows[rate]:
                step += 1
                rows += cost.rows(result.run_id, step, f"floor-{p.part}", c, p.idle)
    return rows
