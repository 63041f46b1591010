"""`./brokerstream experiment scale`: the standard experiment at every resource step.

At each step the launcher imposes the step's limits on the whole stack (a CPU quota and a memory
limit on its cgroups; stream threads and P&L parallelism through a restart), then, per repeat:
1. the seed thesis's experiment: N orders prefilled and drained while ticks flow (the drain's own
   warm-up orders are processed first and not measured); with `drain_seconds`, N is sized so the drain
   lasts about that long (a steady state, not a transient), from the latest measured rate scaled by the
   quota (the first step calibrates with a short drain that is not recorded);
2. the P&L flow's capacity (`bench pnl`): open positions revalued while ticks flow at 10,000/s;
3. a breaking-point Locust run: after a hold's worth of warm-up at the first users count (the app
   was just restarted by the drain: cold JIT), users ramp in holds until p95 exceeds the SLO or errors
   exceed 1 %; C_SLA is the throughput of the last hold that met both. Ticks flow as in the drain.
Before its runs, each step measures the idle stack's CPU under its quota (the fixed overhead the
scalability model takes out), stored with the step's drains. Every run is stored in ClickHouse
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
    }
    progress(
        f"[lab] experiment {experiment_id}: {len(plan.steps)} steps x {plan.repeats} repeat(s); drain "
        f"{plan.orders:,} orders with ticks {tick_rate:,.0f}/s, revalue {plan.pnl_positions:,} positions with "
        f"ticks {plan.pnl_tick_rate:,.0f}/s, then a breaking-point run"
    )
    last_rate: tuple[float, float] | None = None  # (vCPUs, orders/s) of the latest drain, to size the next
    base_parallelism = int(cfg.get("BS_PNL_PARALLELISM") or 1)
    deployed = base_parallelism
    threads_changed = False
    try:
        for number, step in enumerate(plan.steps, 1):
            scfg = cfg.with_overrides(**step.settings())
            progress(f"[lab] step {number}/{len(plan.steps)}: {step.name}, {step.memory_gb:g} GB")
            groups.quota(step.vcpus)
            groups.memory_limit(step.memory_gb)
            wanted = step.pnl_parallelism or base_parallelism
            if wanted != deployed:  # a step without its own parallelism runs at the configured one
                _redeploy_pnl(scfg, progress)
                deployed = wanted
            threads_changed |= bool(step.stream_threads)  # the drain restarts the app with them
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

            if plan.drain_seconds > 0 and last_rate is None:
                # nothing measured yet to size the first drain by: a short drain of `orders`, not recorded
                progress(f"[lab] calibrating: {plan.orders:,} orders to size the drains")
                calibration = drain_of(plan.orders)
                last_rate = (step.vcpus, _figure(cfg, calibration.run_id, "drain_orders_per_s"))
            for repeat in range(1, plan.repeats + 1):
                orders = drain_orders(plan.orders, plan.drain_seconds, last_rate, step.vcpus)
                if orders != plan.orders:
                    progress(f"[lab] drain sized to about {plan.drain_seconds:.0f} s: {orders:,} orders")
                drain = drain_of(orders)
                rate = _figure(cfg, drain.run_id, "drain_orders_per_s")
                last_rate = (step.vcpus, rate) if rate else last_rate
                if idle is not None:
                    _result(cfg, drain.run_id, "idle_cpu_cores", idle)
                _record(
                    cfg,
                    experiment_id,
                    number,
                    step,
                    repeat,
                    "drain",
                    drain.run_id,
                    orders,
                    tick_rate,
                    conditions,
                    plan.architecture,
                )
                if plan.architecture == "baseline":
                    continue
                pnl = driver.run_pnl(
                    scfg,
                    positions=plan.pnl_positions,
                    tick_rate=plan.pnl_tick_rate,
                    duration=plan.pnl_seconds,
                    scale_step=number,
                    progress=progress,
                )
                _record(
                    cfg,
                    experiment_id,
                    number,
                    step,
                    repeat,
                    "pnl",
                    pnl.run_id,
                    plan.pnl_positions,
                    plan.pnl_tick_rate,
                    conditions,
                )
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
                _record(cfg, experiment_id, number, step, repeat, "http", http.run_id, 0, http_ticks, conditions)
    finally:
        groups.quota(None)
        groups.memory_limit(None)
        if threads_changed:
            progress("[lab] restarting the streams app with the configured stream threads")
            default_stack(cfg).down(["streams"])
            default_stack(cfg).up(["streams"])
        if deployed != base_parallelism:
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


def _redeploy_pnl(cfg: Config, progress) -> None:
    from brokerstream.clients import flinkjobs

    progress(f"[lab] {flinkjobs.stop(cfg)}")
    progress(f"[lab] {flinkjobs.deploy(cfg)}")


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
                ]
            ],
            column_names=[
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
            ],
        )
    finally:
        client.close()
