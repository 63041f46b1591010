"""What the stack spends on an order (or a tick): read at the two edges of a window and divided by the
orders (or ticks) the window carried.

- CPU per service: each service's process and everything it started (psutil), beside the kernel's own
  count per CPU group (cgroup v1 cpuacct), an independent total the per-service figures must add up to;
  and of it, what the JVMs' JIT compiler threads spent (metrics/threads.py): compiling the code the load
  runs, a warm-up cost that falls as a stack runs on, shown apart so a window is not read as steady state;
- broker requests by API key (Produce, Fetch, EndTxn, ...), records and bytes appended by topic: the
  Kafka nodes' own counters, served by the JMX exporter agent (platform/metrics/kafka-jmx.yaml);
- rows written to Postgres by table (pg_stat_user_tables: inserted, updated and deleted).

A reading is cheap (a few HTTP scrapes, one query, /proc): taken at a window's edges only, it adds nothing
to what it measures but its own handful of requests.
"""

from __future__ import annotations

import re
import time
import urllib.request
from dataclasses import dataclass, field
from statistics import median

import psutil

from brokerstream.clients.prometheus import samples
from brokerstream.common.config import Config
from brokerstream.launcher.cpugroups import CpuGroups
from brokerstream.launcher.layout import Layout
from brokerstream.metrics.collector import process_usage
from brokerstream.metrics.threads import jit_seconds

# the counter families of platform/metrics/kafka-jmx.yaml this module reads, and the label each is kept by
BROKER_FAMILIES = {
    "kafka_requests_total": "request",
    "kafka_topic_messages_in_total": "topic",
    "kafka_topic_bytes_in_total": "topic",
}
KINDS = {
    "kafka_requests_total": "requests",
    "kafka_topic_messages_in_total": "records",
    "kafka_topic_bytes_in_total": "bytes",
}
# The broker counts a fetch twice, as Fetch and as FetchConsumer or FetchFollower (the kind of fetcher):
# the two kinds are left out, so that each request is counted once.
FETCHER_KINDS = frozenset({"FetchConsumer", "FetchFollower"})
# CPU groups whose processes are the stack (launcher/cpugroups.py); `clients` are the load generators
STACK_GROUPS = ("orders", "platform", "pnl", "sync")


def parse_prometheus(text: str) -> dict[tuple[str, str], float]:
    """(kind, name) -> counter from an exporter's text format, summed over the other labels (the
    request versions): ("requests", "Produce"), ("records", "orders"), ("bytes", "orders")."""
    out: dict[tuple[str, str], float] = {}
    for sample in samples(text):
        if sample.name not in BROKER_FAMILIES:
            continue
        name = sample.labels.get(BROKER_FAMILIES[sample.name])
        if name is None or (sample.name == "kafka_requests_total" and name in FETCHER_KINDS):
            continue
        key = (KINDS[sample.name], name)
        out[key] = out.get(key, 0.0) + sample.value
    return out


@dataclass(frozen=True)
class Reading:
    at: float  # time.monotonic()
    cpu: dict[str, float]  # service -> CPU seconds, its children included
    broker: dict[tuple[str, str], float]  # (requests|records|bytes, API key or topic) -> counter
    rows: dict[str, int]  # Postgres table -> rows inserted, updated or deleted
    groups: dict[str, float]  # CPU group -> CPU seconds the kernel counted
    jit: dict[str, float] = field(default_factory=dict)  # service -> CPU seconds of its JIT compiler threads


class Meter:
    """Reads the counters of a running stack; `services` are the launcher's names (kafka, streams, ...)."""

    def __init__(self, cfg: Config, services: list[str]):
        self.cfg = cfg
        layout = Layout(cfg)
        self.pids = {name: pid for name in services if (pid := layout.pidfile(name).live_pid())}
        self.groups = CpuGroups.of(cfg)
        self._procs: dict[int, psutil.Process] = {}

    def read(self) -> Reading:
        return Reading(
            time.monotonic(),
            {name: process_usage(self._procs, pid)[0] for name, pid in self.pids.items()},
            self.broker(),
            self.postgres_rows(),
            self.groups.cpu_seconds(),
            {name: jit_seconds(self._procs, pid) for name, pid in self.pids.items()},
        )

    def broker(self) -> dict[tuple[str, str], float]:
        total: dict[tuple[str, str], float] = {}
        for url in self.cfg.kafka_metrics_urls:
            try:
                with urllib.request.urlopen(url, timeout=10) as resp:
                    text = resp.read().decode()
            except OSError as e:
                raise RuntimeError(
                    f"the Kafka node's metrics at {url} do not answer ({e}): is it running with "
                    "the metrics agent (./brokerstream install; up)?"
                ) from e
            for key, value in parse_prometheus(text).items():
                total[key] = total.get(key, 0.0) + value
        return total

    def postgres_rows(self) -> dict[str, int]:
        import psycopg

        with psycopg.connect(self.cfg.postgres_dsn(), autocommit=True) as conn:
            # not the sessions' temporary staging tables (the sink's COPY target): their rows are counted
            # again in the tables they move to
            rows = conn.execute(
                "SELECT schemaname || '.' || relname, n_tup_ins + n_tup_upd + n_tup_del "
                "FROM pg_stat_user_tables WHERE schemaname NOT LIKE 'pg\\_temp\\_%%'"
            ).fetchall()
        # the flow's tables by their plain names; another schema's (the baseline's) keep theirs
        return {(name[len("public.") :] if name.startswith("public.") else name): int(n) for name, n in rows}


@dataclass
class Cost:
    """Between two readings: per second, and per unit of work (an order or a tick)."""

    label: str
    unit: str  # "order" or "tick"
    units: float  # orders (or ticks) the window carried
    seconds: float
    cpu_cores: dict[str, float]  # service -> cores
    per_second: dict[tuple[str, str], float]  # (requests|records|bytes|rows, name) -> per second
    group_cores: dict[str, float] = field(default_factory=dict)
    conditions: str = ""
    jit_cores: dict[str, float] = field(default_factory=dict)  # service -> cores its JIT compilers spent

    @classmethod
    def between(cls, a: Reading, b: Reading, *, label: str, unit: str, units: float, conditions: str = "") -> "Cost":
        seconds = max(b.at - a.at, 1e-9)
        cpu = {s: max(0.0, b.cpu[s] - a.cpu.get(s, b.cpu[s])) / seconds for s in b.cpu}
        per_second: dict[tuple[str, str], float] = {}
        for key, value in b.broker.items():
            d = value - a.broker.get(key, 0.0)
            if d > 0:
                per_second[key] = d / seconds
        for table, value in b.rows.items():
            d = value - a.rows.get(table, 0)
            if d > 0:
                per_second[("rows", table)] = d / seconds
        groups = {g: max(0.0, b.groups[g] - a.groups[g]) / seconds for g in b.groups if g in a.groups}
        jit = {s: max(0.0, b.jit[s] - a.jit.get(s, b.jit[s])) / seconds for s in b.jit}
        return cls(label, unit, units, seconds, cpu, per_second, groups, conditions, jit)

    @property
    def rate(self) -> float:
        """Units per second."""
        return self.units / self.seconds

    @property
    def stack_cores(self) -> float:
        return sum(self.cpu_cores.values())

    @property
    def kernel_stack_cores(self) -> float | None:
        """The same total as the kernel counted it for the stack's CPU groups (None without cpuacct)."""
        if not self.group_cores:
            return None
        return sum(v for g, v in self.group_cores.items() if g in STACK_GROUPS)

    def us_per_unit(self, idle: "Cost | None" = None) -> dict[str, float]:
        """Each service's CPU microseconds per unit, above its idle cores when `idle` is given."""
        rate = max(self.rate, 1e-9)
        base = idle.cpu_cores if idle else {}
        return {s: max(0.0, c - base.get(s, 0.0)) * 1e6 / rate for s, c in self.cpu_cores.items()}

    def jit_us_per_unit(self, idle: "Cost | None" = None) -> dict[str, float]:
        """Of `us_per_unit`, what each service's JIT compilers spent, above their idle cores likewise."""
        rate = max(self.rate, 1e-9)
        base = idle.jit_cores if idle else {}
        total = self.us_per_unit(idle)
        # never more than the service's own figure: its idle reading may have compiled more than the window
        return {
            s: min(total.get(s, 0.0), max(0.0, c - base.get(s, 0.0)) * 1e6 / rate) for s, c in self.jit_cores.items()
        }

    def per_unit(self, kind: str) -> dict[str, float]:
        rate = max(self.rate, 1e-9)
        return {name: v / rate for (k, name), v in self.per_second.items() if k == kind}

    def total_per_unit(self, kind: str) -> float:
        return sum(self.per_unit(kind).values())


def check_adds_up(cost: Cost, tolerance: float = 0.10) -> str | None:
    """None when the per-service CPU adds up to the kernel's count for the stack's groups (within
    `tolerance` of it, or 0.05 cores), else what differs. Without cpuacct there is nothing to check."""
    kernel = cost.kernel_stack_cores
    if kernel is None:
        return None
    ours = cost.stack_cores
    if abs(ours - kernel) <= max(tolerance * kernel, 0.05):
        return None
    return (
        f"the services' CPU adds up to {ours:.3f} cores but the kernel counted {kernel:.3f} for the stack's "
        f"groups ({', '.join(f'{g} {v:.3f}' for g, v in sorted(cost.group_cores.items()))})"
    )


# --- the table ------------------------------------------------------------------------------------
# What a window counts per unit beside CPU: (kind, what it is called, its key in the budget, if any).
COUNTS = (
    ("requests", "broker requests", "requests"),
    ("records", "records written to Kafka", "records"),
    ("bytes", "bytes written to Kafka", None),
    ("rows", "rows written to Postgres", "rows"),
)


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:,.1f}" if v >= 1 else f"{v:.2f}" if v >= 0.01 else f"{v:.3f}"


def lines(cost: Cost, idle: Cost | None = None, budget: dict | None = None, top: int = 12) -> list[str]:
    """The cost of one unit of work, service by service, against the budget where one is given."""
    unit, b = cost.unit, budget or {}
    cpu_budget = b.get("cpu_us", {})
    us = cost.us_per_unit(idle)
    total = sum(us.values())
    out = [
        f"{cost.label}: {cost.rate:,.0f} {unit}s/s over {cost.seconds:.0f} "
        f"s{'; ' + cost.conditions if cost.conditions else ''}"
    ]
    above = "above idle" if idle else "idle included"
    kernel = cost.kernel_stack_cores
    out.append(
        f"  CPU per {unit} ({above}): {total:,.0f} us in all"
        + (f" (budget {cpu_budget['total']:,} us)" if "total" in cpu_budget else "")
        + f"; stack {cost.stack_cores:.2f} cores"
        + (f" (kernel's count {kernel:.2f})" if kernel is not None else "")
        + (f", idle {idle.stack_cores:.2f}" if idle else "")
    )
    jit = cost.jit_us_per_unit(idle)
    for service, v in sorted(us.items(), key=lambda kv: -kv[1]):
        if v < 0.5 and service not in cpu_budget:
            continue
        limit = cpu_budget.get(service)
        mark = "" if limit is None else f"  budget {limit:>6,}  {'ok' if v <= limit else 'OVER'}"
        compiled = f"  (JIT {jit[service]:,.0f})" if jit.get(service, 0.0) >= 0.5 else ""
        out.append(f"    {service:<20} {v:>9,.0f} us{mark}{compiled}")
    if jit:
        spent = sum(jit.values())
        out.append(
            f"  of which the JVMs' JIT compilers: {spent:,.0f} us per {unit} (compiling the code this load runs: "
            f"a warm-up cost that falls as the stack runs on); the rest {total - spent:,.0f} us"
        )
    for kind, what, key in COUNTS:
        per = cost.per_unit(kind)
        if not per:
            continue
        limit = b.get(key) if key else None
        t = sum(per.values())
        head = f"  {what} per {unit}: {_fmt(t)}"
        if limit is not None:
            head += f" (budget {limit}: {'ok' if t <= limit else 'OVER'})"
        shown = sorted(per.items(), key=lambda kv: -kv[1])[:top]
        rest = len(per) - len(shown)
        out.append(head)
        out.append("    " + ", ".join(f"{n} {_fmt(v)}" for n, v in shown) + (f", {rest} more" if rest > 0 else ""))
    return out


# "orders alone (2 of 3)": a repeated window's place among its kind, left out of their summary's label
REPEAT_SUFFIX = re.compile(r" \(\d+ of \d+\)$")


def spread_lines(costs: list[Cost], idle: Cost | None = None, budget: dict | None = None) -> list[str]:
    """Several windows of the same load on one stack: per service the median CPU per unit and the range of
    the windows, the budget checked against the median. One window of a 2-core stack can read several times
    another's (a collection, a compaction or a checkpoint landing in it), so a figure is the median of a few,
    printed with its range."""
    if len(costs) < 2:
        return []
    unit, b = costs[0].unit, budget or {}
    cpu_budget = b.get("cpu_us", {})
    per = [c.us_per_unit(idle) for c in costs]
    jits = [c.jit_us_per_unit(idle) for c in costs]
    totals = [sum(u.values()) for u in per]
    services = sorted({s for u in per for s in u}, key=lambda s: -median([u.get(s, 0.0) for u in per]))

    def span(values: list[float]) -> str:
        return f"{median(values):,.0f} us (windows {min(values):,.0f}-{max(values):,.0f})"

    total_limit = cpu_budget.get("total")
    label = REPEAT_SUFFIX.sub("", costs[0].label)
    out = [
        f"{label}, {len(costs)} windows: CPU per {unit} above idle, median {span(totals)}"
        + (
            f" (budget {total_limit:,} us: {'ok' if median(totals) <= total_limit else 'OVER'})"
            if total_limit is not None
            else ""
        )
    ]
    for service in services:
        values = [u.get(service, 0.0) for u in per]
        limit, m = cpu_budget.get(service), median(values)
        if m < 0.5 and limit is None:
            continue
        mark = "" if limit is None else f"  budget {limit:>6,}  {'ok' if m <= limit else 'OVER'}"
        out.append(f"    {service:<20} {span(values)}{mark}")
    compiled = [sum(j.values()) for j in jits]
    if any(compiled):
        out.append(f"  of which the JVMs' JIT compilers: median {span(compiled)}")
    for kind, what, key in COUNTS:
        if key is None:
            continue  # bytes: no budget, and the table of each window has them
        values = [c.total_per_unit(kind) for c in costs]
        if not any(values):
            continue
        limit = b.get(key)
        m = median(values)
        out.append(
            f"  {what} per {unit}: median {_fmt(m)} (windows {_fmt(min(values))}-{_fmt(max(values))})"
            + (f" (budget {limit}: {'ok' if m <= limit else 'OVER'})" if limit is not None else "")
        )
    return out


def rows(run_id: str, step: int, phase: str, cost: Cost, idle: Cost | None = None) -> list[list]:
    """ClickHouse rows of `cost_lines`: one per measured figure."""
    out = []
    rate = max(cost.rate, 1e-9)
    base = idle.cpu_cores if idle else {}
    for service, cores in cost.cpu_cores.items():
        out.append(
            [
                run_id,
                step,
                phase,
                cost.unit,
                cost.rate,
                "cpu_us",
                service,
                max(0.0, cores - base.get(service, 0.0)) * 1e6 / rate,
                cores,
            ]
        )
    for service, us in cost.jit_us_per_unit(idle).items():
        out.append([run_id, step, phase, cost.unit, cost.rate, "jit_us", service, us, cost.jit_cores[service]])
    for (kind, name), v in cost.per_second.items():
        out.append([run_id, step, phase, cost.unit, cost.rate, kind, name, v / rate, v])
    return out


COST_COLUMNS = ["run_id", "step", "phase", "unit", "rate", "kind", "name", "per_unit", "per_second"]
