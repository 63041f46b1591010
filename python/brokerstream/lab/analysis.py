"""What the steps of a scaling experiment say: per-dollar figures under both price models, the USL
fitted to the measured steps and projected beyond this machine, where adding resources stops paying,
and conclusions in sentences. Pure functions over the `scaling_steps` query's rows (tested against
hand-computed values); `load` runs that query."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from brokerstream.lab import model as lab_model
from brokerstream.lab import usl as usl_law
from brokerstream.metrics import pricesheet, store

PROJECTED_VCPUS = (4, 8, 16, 32, 64)
STEADY_SECONDS = 60  # a drain shorter than this measured a transient


@dataclass
class LabAnalysis:
    steps: list[dict]
    model_orders: lab_model.Model | None
    model_pnl: lab_model.Model | None
    projection: list[dict]
    stops_paying: str
    conclusions: list[str] = field(default_factory=list)

    @property
    def usl_orders(self) -> usl_law.Usl | None:
        """The law's terms, over the flow's resources (quota minus the idle stack's cores)."""
        return self.model_orders.law if self.model_orders else None


def _ok(x) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def _runs(step: dict, key: str) -> list[float]:
    """A step's individual runs of a figure (the repeats), or its mean when only that is known."""
    runs = [v for v in (step.get(f"{key}_runs") or []) if _ok(v)]
    return runs or [step[key]]


SHAPE = ("stream_threads", "pnl_parallelism", "streams_instances", "taskmanagers", "connect_tasks")


def shape(step: dict) -> tuple:
    """How a step cut the work into threads, processes and tasks (absent: as configured)."""
    return tuple(step.get(k) for k in SHAPE)


def scale_up_shape(steps: list[dict], key: str = "orders_per_s") -> tuple | None:
    """The shape most steps share: the scale-up steps, over which the model is fitted; the others are
    scale-out steps, another dimension, drawn as measured points beside them."""
    shapes = [shape(s) for s in steps if _ok(s.get(key))]
    return max(shapes, key=shapes.count) if shapes else None  # ties: the first listed


def _model(steps: list[dict], key: str, boots: int) -> lab_model.Model | None:
    """The model over the scale-up steps (see scale_up_shape)."""
    common = scale_up_shape(steps, key)
    if common is None:
        return None
    runs = [
        lab_model.Run(s["vcpus"], _idle(s), x)
        for s in steps
        if _ok(s.get(key)) and shape(s) == common
        for x in _runs(s, key)
    ]
    try:
        return lab_model.build(runs, boots=boots)
    except ValueError:
        return None


SATURATED = 0.9  # an idle stack using this share of its quota or more is not idle: it is saturated


def _idle(step: dict) -> float | None:
    """The step's idle CPU as an overhead figure; None where it was not measured or the quota was
    saturated without load (background work caught up under it: the quota, not the overhead, bounds it)."""
    v = step.get("idle_cpu_cores")
    return v if _ok(v) and v < SATURATED * step["vcpus"] else None


def _projected_vcpus(m: lab_model.Model) -> list[float]:
    """Where a projection may be drawn: the standard sizes the model's test supports, and the limit of
    that support itself when it lies beyond the measured steps."""
    out = [v for v in PROJECTED_VCPUS if max(m.levels) < v <= m.supported_to]
    if m.supported_to > max(m.levels) and m.supported_to not in out:
        out.append(round(m.supported_to, 3))
    return sorted(out)


def analyse(rows: list[dict], sheet: pricesheet.PriceSheet, cores: int | None = None, boots: int = 100) -> LabAnalysis:
    import os

    cores = cores or os.cpu_count() or 1
    steps = [dict(r) for r in rows]
    for s in steps:
        s["usd_hour_fargate"] = sheet.fargate.hourly(s["vcpus"], s["memory_gb"]) if sheet.fargate else float("nan")
        s["orders_per_s_per_usd_hour_fargate"] = (
            s["orders_per_s"] / s["usd_hour_fargate"]
            if _ok(s.get("orders_per_s")) and _ok(s["usd_hour_fargate"])
            else float("nan")
        )
        # a search or breaking-point run that never broke measured a floor, never a C_SLA: the
        # figure moves to its own name and the cost at C_SLA (then a ceiling) with it
        if s.get("c_sla_is_floor") and _ok(s.get("c_sla")):
            s["c_sla_floor"], s["usd_per_1000_requests_ceiling"] = s["c_sla"], s.get("usd_per_1000_requests_at_sla")
            for key in ("c_sla", "c_sla_min", "c_sla_max", "usd_per_1000_requests_at_sla"):
                s[key] = float("nan")
        # CPU the step used against its quota: a step that did not use it was bound by something else
        used = s.get("max_cpu_cores")
        s["cpu_used_share"] = used / s["vcpus"] if _ok(used) and _ok(s.get("vcpus")) else float("nan")
    orders, pnl = _model(steps, "orders_per_s", boots), _model(steps, "pnl_per_s", boots)
    projection = []
    if orders is not None:
        for vcpus in _projected_vcpus(orders):
            memory = vcpus * sheet.projection_gb_per_vcpu
            cost = sheet.on_demand.hourly(vcpus, memory)
            x = orders.throughput(vcpus)
            lo, hi = orders.band(vcpus)
            projection.append(
                {
                    "vcpus": vcpus,
                    "memory_gb": memory,
                    "usd_hour": cost,
                    "usd_hour_fargate": sheet.fargate.hourly(vcpus, memory) if sheet.fargate else float("nan"),
                    "orders_per_s": x,
                    "orders_per_s_lo": lo,
                    "orders_per_s_hi": hi,
                    "orders_per_s_per_usd_hour": x / cost,
                    "pnl_per_s": pnl.throughput(vcpus) if pnl and vcpus <= pnl.supported_to else float("nan"),
                }
            )
    analysis = LabAnalysis(steps, orders, pnl, projection, _stops_paying(steps))
    analysis.conclusions = conclusions(analysis, cores)
    return analysis


def _stops_paying(steps: list[dict]) -> str:
    """The first step whose throughput per dollar falls below the step before it, in words."""
    for s in steps[1:]:
        f = s.get("scalability_vs_previous")
        if f is not None and math.isfinite(f) and f < 1:
            return (
                f"at step {s['step']} ({s['step_name']}): its orders/s per dollar-hour is {f:.2f} times the "
                f"previous step's"
            )
    if len(steps) > 1:
        return "not within the measured steps: each step bought more orders per dollar than the one before"
    return "unknown: one step measured"


def scale_out_sentences(steps: list[dict]) -> list[str]:
    """Each scale-out step against the scale-up step of the same resources (the same price): what cutting
    the work into more processes or tasks bought, with the spread of both where they were repeated."""
    up = scale_up_shape(steps)
    base = {(s["vcpus"], s["memory_gb"]): s for s in steps if shape(s) == up and _ok(s.get("orders_per_s"))}
    parts = []
    for s in steps:
        b = base.get((s["vcpus"], s["memory_gb"]))
        if shape(s) == up or b is None or not _ok(s.get("orders_per_s")):
            continue
        spread = lambda x: (  # noqa: E731
            f" ({x['orders_per_s_min']:,.0f}-{x['orders_per_s_max']:,.0f})"
            if _ok(x.get("orders_per_s_min"))
            and _ok(x.get("orders_per_s_max"))
            and x["orders_per_s_min"] != x["orders_per_s_max"]
            else ""
        )
        parts.append(
            f"{s['step_name']} {s['orders_per_s']:,.0f} orders/s{spread(s)} against "
            f"{b['orders_per_s']:,.0f}{spread(b)} in the scale-up shape (x{s['orders_per_s'] / b['orders_per_s']:.2f})"
        )
    if not parts:
        return []
    return [
        "Scale-out at the same price (the same quota, the work cut into more processes or tasks): "
        + "; ".join(parts)
        + ". On one machine more processes share the same cores, so this measures what the cut costs or buys, "
        "not what more machines would add."
    ]


def conclusions(a: LabAnalysis, cores: int) -> list[str]:
    out = []
    # the scale-up steps: from the first to the last is what more vCPUs bought (scale-out has its own sentence)
    up = scale_up_shape(a.steps)
    measured = [s for s in a.steps if _ok(s.get("orders_per_s")) and shape(s) == up]
    if len(measured) >= 2:
        first, last = measured[0], measured[-1]
        what = (
            "the sustained capacity through the gateway (open-loop rungs held to loadtest/slo.yaml)"
            if first.get("figure") == "capacity"
            else "the drain"
        )
        out.append(
            f"From {first['step_name']} to {last['step_name']} {what} went from {first['orders_per_s']:,.0f} "
            f"to {last['orders_per_s']:,.0f} orders/s (x{last['orders_per_s'] / first['orders_per_s']:.2f}) while "
            f"the price per hour went x{last['usd_hour'] / first['usd_hour']:.2f} "
            f"(${first['usd_hour']:.4f} to ${last['usd_hour']:.4f} on demand)."
        )
        best = max(measured, key=lambda s: s["orders_per_s_per_usd_hour"])
        out.append(
            f"A dollar-hour buys the most orders at {best['step_name']}: {best['orders_per_s_per_usd_hour']:,.0f} "
            f"orders/s per $/h, ${best['usd_per_million_orders']:.4f} per million orders. "
            f"Adding resources stops paying {a.stops_paying}."
        )
    out.extend(scale_out_sentences(a.steps))
    pnl = [s for s in a.steps if _ok(s.get("pnl_per_s")) and shape(s) == up]
    if len(pnl) >= 2:
        best = max(pnl, key=lambda s: s["pnl_per_s_per_usd_hour"])
        out.append(
            f"The P&L flow revalued {pnl[0]['pnl_per_s']:,.0f} positions/s at {pnl[0]['step_name']} and "
            f"{pnl[-1]['pnl_per_s']:,.0f} at {pnl[-1]['step_name']} "
            f"(x{pnl[-1]['pnl_per_s'] / pnl[0]['pnl_per_s']:.2f}); "
            f"a dollar-hour buys the most revaluations at {best['step_name']} "
            f"({best['pnl_per_s_per_usd_hour']:,.0f} positions/s per $/h)."
        )
    sla = [s for s in a.steps if _ok(s.get("c_sla"))]
    floors = [s for s in a.steps if _ok(s.get("c_sla_floor"))]
    if floors:
        out.append(
            "No C_SLA at "
            + ", ".join(f"{s['step_name']} (unbroken at {s['c_sla_floor']:,.0f} requests/s)" for s in floors)
            + (
                ": the capacity search's highest rung still held the SLO"
                if all(s.get("sla_kind") == "capacity" for s in floors)
                else ": the breaking-point run reached its users cap without breaking the SLO"
            )
            + ", so that figure is a floor and its cost per 1,000 requests a ceiling; neither is reported as C_SLA."
        )
    seen = [s for s in a.steps if _ok(s.get("accept_p99_ms_at_capacity")) and _ok(s.get("orders_per_s"))]
    if seen:
        out.append(
            "What members saw at each capacity (accept / visible p99): "
            + ", ".join(
                f"{s['step_name']} {s['accept_p99_ms_at_capacity']:,.0f} / "
                f"{s.get('visible_p99_ms_at_capacity') or float('nan'):,.0f} ms"
                for s in seen
            )
            + ". The step's figure holds the flow's targets; the gateway's own (accept 20 ms, visible 300 ms in "
            "loadtest/slo.yaml) are tighter than a CPU quota allows: once a quota is spent the kernel stops the stack "
            "for the rest of its 100 ms period."
        )
    locust = [s for s in a.steps if s.get("sla_kind") == "capacity" and _ok(s.get("locust_c_sla"))]
    if locust:
        out.append(
            "Locust's breaking point beside the open-loop search: "
            + ", ".join(
                f"{s['step_name']} {s['locust_c_sla']:,.0f} requests/s"
                + (" (unbroken: a floor)" if s.get("locust_is_floor") else "")
                for s in locust
            )
            + ". Closed-loop users wait for each answer, so they slow down with the system instead of exceeding it."
        )
    if sla:
        cheapest = min(sla, key=lambda s: s["usd_per_1000_requests_at_sla"])
        held = ", ".join(f"{s['c_sla']:,.0f}" for s in sla)
        slo = (
            "loadtest/slo.yaml's flow targets, open loop: each order is two requests, its POST and its result's poll"
            if all(s.get("sla_kind") == "capacity" for s in sla)
            else "p95, errors under 1 %"
        )
        out.append(
            f"At the SLA ({slo}) the gateway held {held} "
            f"requests/s; the cheapest 1,000 requests with headroom are at {cheapest['step_name']} "
            f"(${cheapest['usd_per_1000_requests_at_sla']:.2e})."
        )
    crowded = [
        s for s in sla if _ok(s.get("http_client_cpu_cores")) and s["vcpus"] + s["http_client_cpu_cores"] > cores
    ]
    if crowded:
        names = ", ".join(s["step_name"] for s in crowded)
        used = ", ".join(f"{s['http_client_cpu_cores']:.2f}" for s in crowded)
        out.append(
            f"At {names} the stack's quota plus the load client's CPU ({used} cores) exceed this machine's {cores} "
            "cores: there the load generator and the stack competed, and C_SLA is a lower bound."
        )
    short = [s for s in a.steps if _ok(s.get("drain_seconds")) and s["drain_seconds"] < STEADY_SECONDS]
    if short:
        out.append(
            "Drains that lasted under a minute measured a transient, not a steady state (JIT, caches and "
            "batching still settling): "
            + ", ".join(f"{s['step_name']} {s['drain_seconds']:.1f} s" for s in short)
            + ". Read their orders/s, and everything fitted to them, as indicative; `--orders` sets the length."
        )
    saturated = [s for s in a.steps if _ok(s.get("idle_cpu_cores")) and _idle(s) is None]
    if saturated:
        out.append(
            "With no load the stack still used its whole quota at "
            + ", ".join(f"{s['step_name']} ({s['idle_cpu_cores']:.2f} cores)" for s in saturated)
            + ": its background work (the P&L job, the sinks, compaction) saturates that quota, so those steps "
            "give no overhead figure and every figure there is bound by the background as much as by the load."
        )
    idle_bound = [
        s for s in a.steps if _ok(s.get("cpu_used_share")) and s["cpu_used_share"] < 0.8 and _ok(s.get("orders_per_s"))
    ]
    if idle_bound:
        out.append(
            "Steps that did not use their quota: "
            + ", ".join(f"{s['step_name']} used {s['max_cpu_cores']:.2f} of {s['vcpus']:g} cores" for s in idle_bound)
            + ". There the step was bound by something other than CPU (a drain's length, a single busy thread, "
            "I/O waits, latency targets met before the cores ran out), so its figure understates what its quota "
            "can buy."
        )
    if a.model_orders is not None:
        m = a.model_orders
        u, terms = m.law, m.term_bands()
        overhead = (
            f"after taking out the idle stack's {m.overhead:.2f} cores"
            if m.overhead_measured
            else "with no overhead taken out (the idle stack was not measured)"
        )
        out.append(
            f"The Universal Scalability Law fits the steps' figures {overhead}: contention sigma = {u.sigma:.3f} "
            f"(90 % band {terms['sigma'][1]:.3f} to {terms['sigma'][2]:.3f}), coherency kappa = {u.kappa:.4f} "
            f"({terms['kappa'][1]:.4f} to {terms['kappa'][2]:.4f}), R^2 {u.r2:.2f}. A model, not a measurement: "
            + m.verdict()
        )
        if a.projection:
            far = a.projection[-1]
            out.append(
                f"Projected to {far['vcpus']:g} vCPU, the furthest the test supports: {far['orders_per_s']:,.0f} "
                f"orders/s (band {far['orders_per_s_lo']:,.0f} to {far['orders_per_s_hi']:,.0f}) for "
                f"${far['usd_hour']:.3f}/h. Beyond it the data cannot say what a dollar buys."
            )
        if u.sigma < 0:
            out.append(
                "sigma < 0 is superlinear scaling (Gunther): each added vCPU bought more than its share. With the "
                "idle stack's cores taken out this should not remain; where it does, the overhead under load is "
                "larger than at idle (heartbeats, polls and the P&L job grow with the load)."
            )
    fargate = [s for s in a.steps if _ok(s.get("usd_hour_fargate"))]
    if fargate:
        ratio = fargate[0]["usd_hour_fargate"] / fargate[0]["usd_hour"]
        out.append(
            f"Priced as Fargate tasks every step costs {abs(1 - ratio) * 100:.0f} % "
            f"{'less' if ratio < 1 else 'more'} than on demand, which scales every per-dollar figure by "
            f"{1 / ratio:.2f}."
        )
    return out


def load(
    cfg, headroom: float = 0.2, architecture: str = "streams", partitions: int = -1, brokers: int = -1
) -> list[dict]:
    """The latest experiment's steps of one architecture (streams or baseline), of any stack shape or of
    the one given (topic partitions, Kafka brokers)."""
    client = store.connect(cfg)
    try:
        store.apply_ddl(client)
        pricesheet.store(client, pricesheet.load())
        cols, rows = store.run_query(
            client,
            store.named_queries()["scaling_steps"],
            headroom=headroom,
            baseline=architecture == "baseline",
            partitions=partitions,
            brokers=brokers,
        )
        return [dict(zip(cols, r)) for r in rows]
    finally:
        client.close()


def shapes(cfg) -> list[tuple[int, int]]:
    """The stack shapes (topic partitions, Kafka brokers) scaling experiments ran on, latest first."""
    client = store.connect(cfg)
    try:
        store.apply_ddl(client)
        _, rows = store.run_query(client, store.named_queries()["experiment_shapes"])
        return [(int(r[0]), int(r[1])) for r in rows]
    finally:
        client.close()


def shape_name(partitions: int, brokers: int) -> str:
    return f"{partitions} partitions, {brokers} broker{'s' if brokers != 1 else ''}"


def other_shape_sentences(main: list[dict], others: list[tuple[str, list[dict]]]) -> list[str]:
    """Each other stack shape's steps against the main experiment's step of the same resources."""
    by_size = {(s["vcpus"], s["memory_gb"], shape(s)): s for s in main if _ok(s.get("orders_per_s"))}
    out = []
    for name, steps in others:
        parts = []
        for s in steps:
            b = by_size.get((s["vcpus"], s["memory_gb"], shape(s)))
            if _ok(s.get("orders_per_s")):
                parts.append(
                    f"{s['step_name']} {s['orders_per_s']:,.0f} orders/s"
                    + (f" (x{s['orders_per_s'] / b['orders_per_s']:.2f})" if b else "")
                )
        if parts:
            out.append(
                f"On a stack of {name} (its own experiment, its own fresh stack): " + ", ".join(parts) + ", each "
                "against the same step of the main experiment where it ran one."
            )
    return out


def compare(streams: list[dict], baseline: list[dict]) -> list[dict]:
    """The two architectures step by step (matched on the step's vCPUs and memory): orders/s and P&L
    calculations/s during the drain, per dollar-hour, and stream-native over baseline."""
    by_size = {(b["vcpus"], b["memory_gb"]): b for b in baseline}
    # the same experiment on both sides: the drain (the baseline has no gateway to search a capacity through)
    drain = lambda step: step.get("drain_orders_per_s", step.get("orders_per_s"))  # noqa: E731
    out = []
    for s in streams:
        b = by_size.get((s["vcpus"], s["memory_gb"]))
        if b is None:
            continue
        ratio = lambda x, y: x / y if _ok(x) and _ok(y) else float("nan")
        out.append(
            {
                "step_name": s["step_name"],
                "vcpus": s["vcpus"],
                "memory_gb": s["memory_gb"],
                "usd_hour": s["usd_hour"],
                "streams_orders_per_s": drain(s),
                "baseline_orders_per_s": drain(b),
                "orders_ratio": ratio(drain(s), drain(b)),
                "streams_pnl_per_s": s.get("pnl_during_drain_per_s"),
                "baseline_pnl_per_s": b.get("pnl_during_drain_per_s"),
                "pnl_ratio": ratio(s.get("pnl_during_drain_per_s"), b.get("pnl_during_drain_per_s")),
                "streams_orders_per_usd_hour": ratio(drain(s), s["usd_hour"]),
                "baseline_orders_per_usd_hour": ratio(drain(b), b["usd_hour"]),
            }
        )
    return out


def comparison_sentences(rows: list[dict]) -> list[str]:
    ok = [r for r in rows if _ok(r["orders_ratio"])]
    if not ok:
        return []
    ratios = ", ".join(f"x{r['orders_ratio']:.1f} at {r['step_name']}" for r in ok)
    best = max(ok, key=lambda r: r["baseline_orders_per_usd_hour"] if _ok(r["baseline_orders_per_usd_hour"]) else 0)
    text = (
        f"Against the seed thesis's monolith on the same machine, orders and prices, the stream-native system "
        f"drained {ratios} the orders per second, so as many more orders per dollar; the monolith's dollar buys "
        f"most at {best['step_name']} ({best['baseline_orders_per_usd_hour']:,.0f} orders/s per $/h)."
    )
    pnl = [r for r in ok if _ok(r["pnl_ratio"])]
    if pnl:
        text += (
            " P&L calculations during the drain: "
            + ", ".join(f"x{r['pnl_ratio']:.1f} at {r['step_name']}" for r in pnl)
            + "."
        )
    return [text]
