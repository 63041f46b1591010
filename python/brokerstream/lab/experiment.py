"""`./brokerstream experiment scale`: the standard experiment at every resource step.

At each step the launcher imposes the step's limits on the whole stack (a CPU quota and a memory
limit on its cgroups; stream threads and P&L parallelism through a restart), then, per repeat:
1. (`drains`) the seed thesis's experiment: N orders prefilled and drained while ticks flow (the
   drain's own warm-up orders are processed first and not measured); with `drain_seconds`, N is sized
   so the drain lasts about that long (a steady state, not a transient), from the latest measured rate
   scaled by the quota (the first step calibrates with a short drain that is not recorded);
2. (`capacity`) the step's figure: its sustained capacity through the gateway, found by open-loop
   rungs at constant rates (bench system's client; bench/capacity.py picks each next rate), each
   judged as bench system judges its sustained capacity (loadtest/slo.yaml: no lag grows, every order
   has its result, commit, tick -> P&L and Postgres latency). C_SLA is that capacity in requests/s (two
   per order), with the members' accept and visible p99 at it; a search that never broke reports a
   floor, never a C_SLA;
3. the P&L flow's capacity (`bench pnl`): open positions revalued while ticks flow at 10,000/s (after
   the search: it saturates the P&L flow on purpose, and its backlog would fail the search's rungs);
4. (`locust`) a breaking-point Locust run: after a hold's worth of warm-up at the first users count,
   users ramp in holds until p95 exceeds the SLO or errors exceed 1 %; shown beside the search (users
   that wait for each answer slow down with the system rather than exceed it).
Before its runs, each step measures the idle stack's CPU under its quota (the fixed overhead the
scalability model takes out), stored with the step's drains and capacity searches. Every run is stored in ClickHouse
(runs, samples, results) and tied to its step in experiment_runs with the limits in force. The
limits are lifted, and the configured threads and parallelism restored, when the experiment ends,
fails or is interrupted. The load generators run outside the stack's groups: they are not limited,
but they share this machine's cores.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
import uuid
from dataclasses import dataclass

from brokerstream.common.config import Config
from brokerstream.common.errors import UserError
from brokerstream.lab.steps import Step
from brokerstream.launcher.provision import default_stack
from brokerstream.loadtest import driver
from brokerstream.metrics import store

THESIS = "thesis"


def tick_rate_of(value: float | str, equities: int) -> float:
    """Ticks per second: a number, or the seed thesis's rate (a tick per equity every 5 s)."""
    if isinstance(value, str) and value.strip().lower() == THESIS:
        return max(equities / 5.0, 1.0)
    rate = float(value)
    if rate < 0:
        raise ValueError(f"tick rate must be >= 0 or {THESIS!r}, got {value}")
    return rate


@dataclass(frozen=True)
class Plan:
    steps: list[Step]
    orders: int = 100_000
    warmup: int = 10_000
    tick_rate: float | str = THESIS  # ticks/s during the drain, or "thesis": every equity once per 5 s
    http_tick_rate: float | None = None  # ticks/s during the breaking-point runs; None: the drain's
    drain_timeout: float = 1800
    repeats: int = 1
    start_users: int = 20
    step_users: int = 40
    hold_seconds: float = 10
    slo_p95_ms: float = 200
    max_users: int = 1_000
    pnl_positions: int = 50_000
    pnl_tick_rate: float = 10_000
    pnl_seconds: float = 20
    drain_seconds: float = 0  # > 0: each drain sized to last about this long (`orders` at the least)
    drains: bool = True  # the seed thesis's drain at every step (the main job leaves it out to stay short)
    # the step's figure: its sustained capacity through the gateway, found by open-loop rungs
    # (bench/capacity.py) held to loadtest/slo.yaml as bench system holds its steps
    capacity: bool = True
    capacity_seconds: float = 20  # each rung's length
    capacity_per_vcpu: float = 300  # the first step's first rung, orders/s per vCPU of its quota
    capacity_factor: float = 2
    capacity_refine: int = 1
    capacity_rungs: int = 7
    locust: bool = True  # Locust's breaking point too (members as a user count, not a rate)
    # before the first step, limits lifted, not recorded: orders through the gateway and ticks, so the first
    # step does not measure the stack's own start (JIT, the P&L job's first windows, caches)
    warm_seconds: float = 30
    idle_seconds: float = 10  # the idle stack's CPU under each step's quota, before its runs
    settle_seconds: float = 60  # at most this long for the last run's backlog to drain before it
    # streams: drain, P&L capacity and breaking point per step. baseline: the monolith drains (its P&L
    # figure is what its price threads revalued meanwhile); it has no gateway and no P&L job to load.
    architecture: str = "streams"

    def __post_init__(self):
        if self.orders < 100 or self.repeats < 1 or self.hold_seconds < 3 or self.start_users < 1:
            raise ValueError("orders >= 100, repeats >= 1, hold >= 3 s and users >= 1 are required")
        if self.pnl_positions < 100 or self.pnl_seconds < 5:
            raise ValueError("P&L runs need >= 100 positions and >= 5 s")
        if self.architecture == "baseline" and not self.drains:
            raise ValueError("the baseline is measured by its drains (it has no gateway)")
        if not (self.drains or self.capacity):
            raise ValueError("a step needs a figure: drains, a capacity search, or both")
        if self.capacity_seconds < 5 or self.capacity_per_vcpu <= 0:
            raise ValueError("capacity rungs need >= 5 s and a starting rate > 0")
        if self.architecture not in ("streams", "baseline"):
            raise ValueError(f"architecture must be streams or baseline, got {self.architecture!r}")


def run(cfg: Config, plan: Plan, progress=print) -> str:
    """Runs the plan; returns the experiment's id."""
    stack = default_stack(cfg)
    groups = stack.cpu
    if not groups.enabled:
        raise UserError(
            "resource steps need a writable cgroup v1 cpu hierarchy (run as root; BS_CPU_PRIORITY must not be off)"
        )
    from brokerstream.gen import pgload

    data = pgload.read(cfg)
    if not data.accounts:
        raise UserError("no reference data: ./brokerstream refdata load --scale small")
    equities = sum(1 for i in data.instruments if i.instrument_type == "EQUITY" and i.status == "ACTIVE")
    tick_rate = tick_rate_of(plan.tick_rate, equities)
    http_ticks = tick_rate if plan.http_tick_rate is None else plan.http_tick_rate
    experiment_id = f"{dt.datetime.now(dt.timezone.utc):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:4]}"
    conditions = {
        "pnl_positions": plan.pnl_positions,
        "pnl_tick_rate": plan.pnl_tick_rate,
        "pnl_seconds": plan.pnl_seconds,
        "accounts": len(data.accounts),
        "instruments": len(data.instruments),
        "seed": data.seed,
        "machine_cores": os.cpu_count(),
        # the stack's shape beside topic_partitions: the tick and book task's topics (platform/topics.yaml)
        "tick_partitions": cfg.int("BS_TICK_PARTITIONS"),
        "warmup_orders": plan.warmup,
        "slo_p95_ms": plan.slo_p95_ms,
        "hold_seconds": plan.hold_seconds,
        "start_users": plan.start_users,
        "step_users": plan.step_users,
        "pnl_job": True,
        "connectors": True,
        "architecture": plan.architecture,
        "tick_rate": f"{plan.tick_rate}",
        "http_tick_rate": http_ticks,
        "drains": plan.drains,
        "capacity": plan.capacity and plan.architecture == "streams",
        "capacity_seconds": plan.capacity_seconds,
        "locust": plan.locust and plan.architecture == "streams",
    }
    runs = [f"drain {plan.orders:,}+ orders with ticks {tick_rate:,.0f}/s"] if plan.drains else []
    if plan.architecture == "streams":
        runs.append(f"revalue {plan.pnl_positions:,} positions with ticks {plan.pnl_tick_rate:,.0f}/s")
        if plan.capacity:
            runs.append(f"search the sustained capacity through the gateway ({plan.capacity_seconds:g} s rungs)")
        if plan.locust:
            runs.append("a Locust breaking-point run")
    progress(
        f"[lab] experiment {experiment_id}: {len(plan.steps)} steps x {plan.repeats} repeat(s): " + ", ".join(runs)
    )
    last_rate: tuple[float, float] | None = None  # (vCPUs, orders/s) of the latest drain, to size the next
    last_capacity: tuple[float, float] | None = None  # (vCPUs, orders/s) of the latest capacity found
    base_parallelism = int(cfg.get("BS_PNL_PARALLELISM") or 1)
    deployed = base_parallelism
    shape = Shape.of(cfg)  # the processes and tasks the stack runs now
    try:
        if plan.capacity and plan.architecture == "streams" and plan.warm_seconds > 0:
            _warm(cfg, plan, http_ticks, progress)
        for number, step in enumerate(plan.steps, 1):
            scfg = cfg.with_overrides(**step.settings())
            progress(f"[lab] step {number}/{len(plan.steps)}: {step.name}, {step.memory_gb:g} GB")
            groups.quota(step.vcpus)
            groups.memory_limit(step.memory_gb)
            before, streams = shape, not plan.drains and plan.architecture == "streams"
            # a drain restarts the streams app itself, with the step's settings
            shape = reshape(scfg, shape, Shape.of(scfg), streams=streams, progress=progress)
            parallelism = step.pnl_parallelism or base_parallelism
            if parallelism != deployed or before.taskmanagers != shape.taskmanagers:
                _redeploy_pnl(scfg, progress)  # its slots spread over the TaskManagers running now
                deployed = parallelism
            idle = idle_cores(groups, plan.idle_seconds, settle=_settled(cfg, plan.settle_seconds))
            progress(
                f"[lab] idle stack under the quota: {idle:.2f} cores"
                if idle is not None
                else "[lab] idle stack: not measured (no cpuacct groups)"
            )

            def drain_of(orders: int, scfg=scfg, number=number):
                return driver.run_drain(
                    scfg,
                    orders=orders,
                    warmup=plan.warmup,
                    scale_step=number,
                    tick_rate=tick_rate,
                    timeout=plan.drain_timeout,
                    architecture=plan.architecture,
                    progress=progress,
                )

            if plan.drains and plan.drain_seconds > 0 and last_rate is None:
                # nothing measured yet to size the first drain by: a short drain of `orders`, not recorded
                progress(f"[lab] calibrating: {plan.orders:,} orders to size the drains")
                calibration = drain_of(plan.orders)
                last_rate = (step.vcpus, _figure(cfg, calibration.run_id, "drain_orders_per_s"))
            for repeat in range(1, plan.repeats + 1):
                record = lambda kind, run_id, orders, ticks, repeat=repeat, number=number, step=step: _record(  # noqa: E731
                    cfg, experiment_id, number, step, repeat, kind, run_id, orders, ticks, conditions, plan.architecture
                )
                if plan.drains:
                    orders = drain_orders(plan.orders, plan.drain_seconds, last_rate, step.vcpus)
                    if orders != plan.orders:
                        progress(f"[lab] drain sized to about {plan.drain_seconds:.0f} s: {orders:,} orders")
                    drain = drain_of(orders)
                    rate = _figure(cfg, drain.run_id, "drain_orders_per_s")
                    last_rate = (step.vcpus, rate) if rate else last_rate
                    if idle is not None:
                        _result(cfg, drain.run_id, "idle_cpu_cores", idle)
                    record("drain", drain.run_id, orders, tick_rate)
                if plan.architecture == "baseline":
                    continue
                # before the P&L run, which saturates the P&L flow on purpose and leaves it a backlog
                if plan.capacity:
                    if plan.drains:
                        # the drain leaves the sinks and the P&L job a backlog of its orders: a search that
                        # began under it measured the backlog (1 vCPU failed 300 orders/s on tick -> P&L)
                        progress("[lab] letting the drain's backlog settle before the search")
                        _settled(cfg, max(plan.settle_seconds, 180))()
                    start = capacity_start(plan.capacity_per_vcpu, last_capacity, step.vcpus)
                    found, run_id = _capacity(scfg, plan, start, http_ticks, number, idle, progress)
                    if found.rate:
                        last_capacity = (step.vcpus, found.rate)
                    record("capacity", run_id, 0, http_ticks)
                pnl = driver.run_pnl(
                    scfg,
                    positions=plan.pnl_positions,
                    tick_rate=plan.pnl_tick_rate,
                    duration=plan.pnl_seconds,
                    scale_step=number,
                    progress=progress,
                )
                record("pnl", pnl.run_id, plan.pnl_positions, plan.pnl_tick_rate)
                if plan.locust:
                    http = driver.run_http(
                        scfg,
                        shape="breaking-point",
                        users=plan.start_users,
                        duration=plan.hold_seconds * (plan.max_users // plan.step_users + 2),
                        scale_step=number,
                        tick_rate=http_ticks,
                        progress=progress,
                        extra_env={
                            "BS_LOAD_STEP_USERS": str(plan.step_users),
                            "BS_LOAD_HOLD": str(plan.hold_seconds),
                            "BS_LOAD_SLO_P95_MS": str(plan.slo_p95_ms),
                            "BS_LOAD_MAX_USERS": str(plan.max_users),
                            "BS_LOAD_WARMUP": str(plan.hold_seconds),
                        },
                    )
                    record("locust", http.run_id, 0, http_ticks)
    finally:
        groups.quota(None)
        groups.memory_limit(None)
        configured = Shape.of(cfg)
        if shape != configured:
            progress("[lab] back to the configured processes and tasks")
            reshape(cfg, shape, configured, streams=True, progress=progress)
        if deployed != base_parallelism or shape.taskmanagers != configured.taskmanagers:
            progress("[lab] redeploying the P&L job at the configured parallelism")
            _redeploy_pnl(cfg, progress)
    progress(f"[lab] experiment {experiment_id} done; limits lifted")
    return experiment_id


def idle_cores(
    groups, seconds: float, settle=None, windows: int = 5, clock=time.monotonic, sleep=time.sleep
) -> float | None:
    """Cores the stack uses with no load under the current quota: the fixed overhead the scalability
    model takes out. `settle` first waits for the last run's backlog to drain (a stack still catching up
    is not idle); then the quietest of `windows` equal windows over `seconds`, by the kernel's count for
    the stack's groups (a restart or a compaction in one window does not count as overhead). None where
    the kernel keeps no count for the groups."""
    if settle is not None:
        settle()
    if not groups.cpu_seconds():
        return None
    rates = []
    for _ in range(max(windows, 1)):
        before, t0 = groups.cpu_seconds(), clock()
        sleep(seconds / max(windows, 1))
        after, t1 = groups.cpu_seconds(), clock()
        if t1 > t0:
            rates.append(max(sum(after.get(g, 0.0) - v for g, v in before.items()), 0.0) / (t1 - t0))
    return min(rates) if rates else None


def _settled(cfg: Config, timeout: float):
    """Waits until every flow's consumer group is under 200 records of lag, or `timeout` seconds."""

    def wait() -> None:
        from brokerstream.loadtest.bench.system import _wait_settled
        from brokerstream.metrics.collector import GROUPS

        _wait_settled(cfg, list(GROUPS), timeout, floor=200)

    return wait


def _warm(cfg: Config, plan: Plan, tick_rate: float, progress) -> None:
    from brokerstream.loadtest.bench import system

    rate = plan.capacity_per_vcpu
    progress(f"[lab] warm-up, limits lifted, not recorded: {rate:,.0f} orders/s for {plan.warm_seconds:.0f} s")
    system.run(
        cfg,
        rates=[rate],
        step_seconds=plan.warm_seconds,
        tick_rate=tick_rate,
        http_max=rate,
        positions=0,
        ceiling_records=0,
        idle_seconds=1,
        warmup_seconds=0,
        progress=lambda _: None,
    )


def capacity_start(per_vcpu: float, last: tuple[float, float] | None, vcpus: float) -> float:
    """The first rung of a step's capacity search: the latest capacity found scaled by the quota, else
    `per_vcpu` per vCPU."""
    if last is None or last[1] <= 0:
        return per_vcpu * vcpus
    return last[1] * vcpus / last[0]


# a member's order through the gateway is two requests: its POST and the long poll of its result
REQUESTS_PER_ORDER = 2


def _capacity(scfg: Config, plan: Plan, start: float, tick_rate: float, number: int, idle, progress):
    """The step's sustained capacity through the gateway (bench system's rungs, chosen by a search);
    stored with the run: orders/s, C_SLA in requests/s, whether it is a floor, the busiest rung's cores."""
    from brokerstream.loadtest.bench import system
    from brokerstream.loadtest.bench.capacity import Search

    search = Search(
        start=start, factor=plan.capacity_factor, refine=plan.capacity_refine, max_rungs=plan.capacity_rungs
    )
    progress(f"[lab] capacity search from {start:,.0f} orders/s, rungs of {plan.capacity_seconds:.0f} s")
    result = system.run(
        scfg,
        search=search,
        step_seconds=plan.capacity_seconds,
        tick_rate=tick_rate,
        positions=0,
        ceiling_records=0,
        idle_seconds=2,
        warmup_seconds=5,
        scale_step=number,
        progress=progress,
    )
    found = Search.found([(s.rate, s.sustained) for s in result.steps])
    progress(f"[lab] capacity: {found.describe()}")
    figures = {"c_sla_is_floor": float(found.is_floor)}
    if found.rate:
        figures["capacity_orders_per_s"] = found.rate
        figures["c_sla"] = found.rate * REQUESTS_PER_ORDER
        # what members saw at that rate (their own targets are the gateway's, not the step's figure)
        at = next(s for s in result.steps if s.rate == found.rate)
        for name, summary in (("accept", at.accept_ms), ("visible", at.visible_ms)):
            if summary.get("p99") is not None:
                figures[f"{name}_p99_ms_at_capacity"] = summary["p99"]
    if found.ceiling:
        figures["capacity_ceiling"] = found.ceiling
    if result.steps:
        figures["client_cpu_cores"] = max(s.client_cpu_cores for s in result.steps)
        figures["busiest_rung_cores"] = max(sum(s.cpu_cores.values()) for s in result.steps)
    if idle is not None:
        figures["idle_cpu_cores"] = idle
    for name, value in figures.items():
        _result(scfg, result.run_id, name, value)
    return found, result.run_id


MAX_DRAIN_ORDERS = 5_000_000


def drain_orders(orders: int, seconds: float, last: tuple[float, float] | None, vcpus: float) -> int:
    """Orders for a drain to last about `seconds` at `vcpus`: the latest measured rate scaled by the quota
    (the flow's throughput grows with it), never fewer than `orders`, at most MAX_DRAIN_ORDERS. Without a
    target or a measured rate, `orders`."""
    if seconds <= 0 or last is None or not last[1] or last[1] <= 0:
        return orders
    last_vcpus, last_rate = last
    return int(min(MAX_DRAIN_ORDERS, max(orders, last_rate * vcpus / last_vcpus * seconds)))


def _figure(cfg: Config, run_id: str, name: str) -> float | None:
    client = store.connect(cfg)
    try:
        rows = client.query(
            "SELECT value FROM run_results FINAL WHERE run_id = {r:String} AND name = {n:String}",
            parameters={"r": run_id, "n": name},
        ).result_rows
    finally:
        client.close()
    return float(rows[0][0]) if rows else None


def _result(cfg: Config, run_id: str, name: str, value: float) -> None:
    client = store.connect(cfg)
    try:
        client.insert("run_results", [[run_id, name, float(value)]], column_names=["run_id", "name", "value"])
    finally:
        client.close()


@dataclass(frozen=True)
class Shape:
    """How the work is cut into processes and tasks: what a scale-out step changes."""

    stream_threads: int
    streams_instances: int
    taskmanagers: int
    connect_tasks: str  # empty: as the connector files say

    @classmethod
    def of(cls, cfg: Config) -> "Shape":
        return cls(
            cfg.int("BS_STREAMS_THREADS"),
            cfg.streams_instances,
            cfg.flink_taskmanagers,
            cfg.get("BS_CONNECT_SINK_TASKS") or "",
        )


def reshape(cfg: Config, now: Shape, wanted: Shape, *, streams: bool, progress) -> Shape:
    """Brings the running stack from `now` to `wanted` (`cfg` carries the wanted settings): the streams
    app restarted with its threads and instances (unless `streams` is False: a drain restarts it
    itself), TaskManagers started or stopped, the sinks' tasks resized. Returns what now runs."""
    stack = default_stack(cfg)  # knows every instance still running, beyond the wanted count too
    if streams and (now.stream_threads, now.streams_instances) != (wanted.stream_threads, wanted.streams_instances):
        progress(
            f"[lab] restarting the streams app: {wanted.streams_instances} instance(s) of "
            f"{wanted.stream_threads} stream thread(s)"
        )
        stack.down(["streams"])  # every instance, also those beyond the wanted count
        if not stack.up(["streams"]):
            raise RuntimeError("the streams app did not restart with the step's threads and instances")
    if now.taskmanagers != wanted.taskmanagers:
        progress(f"[lab] {wanted.taskmanagers} Flink TaskManager(s)")
        managers = stack.expand(["flink-taskmanager"])
        stack.down(managers[wanted.taskmanagers :])
        if not stack.up(["flink-taskmanager"]):
            raise RuntimeError("the TaskManagers did not start")
    if now.connect_tasks != wanted.connect_tasks:
        from brokerstream.clients import connectors

        progress(f"[lab] sink connectors with {wanted.connect_tasks or 'their files'} task(s) each")
        connectors.apply(cfg)
    return wanted


def _redeploy_pnl(cfg: Config, progress) -> None:
    from brokerstream.clients import flinkjobs

    progress(f"[lab] {flinkjobs.stop(cfg)}")
    progress(f"[lab] {flinkjobs.deploy(cfg)}")


EXPERIMENT_RUN_COLUMNS = [
    "experiment_id",
    "started",
    "step",
    "step_name",
    "repeat",
    "kind",
    "run_id",
    "vcpus",
    "memory_gb",
    "stream_threads",
    "pnl_parallelism",
    "orders",
    "tick_rate",
    "conditions",
    "architecture",
    "streams_instances",
    "taskmanagers",
    "connect_tasks",
    "topic_partitions",
    "kafka_brokers",
]


def _record(
    cfg: Config,
    experiment_id: str,
    number: int,
    step: Step,
    repeat: int,
    kind: str,
    run_id: str,
    orders: int,
    tick_rate: float,
    conditions: dict,
    architecture: str = "streams",
) -> None:
    client = store.connect(cfg)  # the run's own save has just applied the DDL
    try:
        client.insert(
            "experiment_runs",
            [
                [
                    experiment_id,
                    dt.datetime.now(dt.timezone.utc),
                    number,
                    step.name,
                    repeat,
                    kind,
                    run_id,
                    step.vcpus,
                    step.memory_gb,
                    step.stream_threads or cfg.int("BS_STREAMS_THREADS"),
                    step.pnl_parallelism or int(cfg.get("BS_PNL_PARALLELISM") or 1),
                    orders,
                    tick_rate,
                    json.dumps(conditions, sort_keys=True),
                    architecture,
                    step.streams_instances or cfg.streams_instances,
                    step.taskmanagers or cfg.flink_taskmanagers,
                    step.connect_tasks or int(cfg.get("BS_CONNECT_SINK_TASKS") or 0),
                    cfg.int("BS_TOPIC_PARTITIONS"),
                    cfg.kafka_brokers,
                ]
            ],
            column_names=EXPERIMENT_RUN_COLUMNS,
        )
    finally:
        client.close()
