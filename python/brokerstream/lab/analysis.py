"""What the steps of a scaling experiment say: per-dollar figures under both price models, the USL
fitted to the measured steps and projected beyond this machine, where adding resources stops paying,
and conclusions in sentences. Pure functions over the `scaling_steps` query's rows (tested against
hand-computed values); `load` runs that query."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from brokerstream.lab import usl as usl_law
from brokerstream.metrics import pricesheet, store

PROJECTED_VCPUS = (4, 8, 16, 32, 64)


@dataclass
class LabAnalysis:
    steps: list[dict]
    usl_orders: usl_law.Usl | None
    usl_pnl: usl_law.Usl | None
    projection: list[dict]
    stops_paying: str
    conclusions: list[str] = field(default_factory=list)


def _ok(x) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def _fit(steps: list[dict], key: str) -> usl_law.Usl | None:
    """The law over the vCPU steps: those sharing the most common threads and parallelism (scale-out
    steps are another dimension, shown as measured points only)."""
    shape = lambda s: (s.get("stream_threads"), s.get("pnl_parallelism"))
    shapes = [shape(s) for s in steps if _ok(s.get(key))]
    if not shapes:
        return None
    common = max(shapes, key=shapes.count)  # ties: the first listed
    pairs = [(s["vcpus"], s[key]) for s in steps if _ok(s.get(key)) and shape(s) == common]
    try:
        return usl_law.fit([p[0] for p in pairs], [p[1] for p in pairs])
    except ValueError:
        return None


def analyse(rows: list[dict], sheet: pricesheet.PriceSheet, cores: int | None = None) -> LabAnalysis:
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
    orders, pnl = _fit(steps, "orders_per_s"), _fit(steps, "pnl_per_s")
    projection = []
    if orders is not None:
        for vcpus in PROJECTED_VCPUS:
            memory = vcpus * sheet.projection_gb_per_vcpu
            cost = sheet.on_demand.hourly(vcpus, memory)
            x = orders.throughput(vcpus)
            projection.append(
                {
                    "vcpus": vcpus,
                    "memory_gb": memory,
                    "usd_hour": cost,
                    "usd_hour_fargate": sheet.fargate.hourly(vcpus, memory) if sheet.fargate else float("nan"),
                    "orders_per_s": x,
                    "orders_per_s_per_usd_hour": x / cost,
                    "pnl_per_s": pnl.throughput(vcpus) if pnl else float("nan"),
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


def conclusions(a: LabAnalysis, cores: int) -> list[str]:
    out = []
    measured = [s for s in a.steps if _ok(s.get("orders_per_s"))]
    if len(measured) >= 2:
        first, last = measured[0], measured[-1]
        out.append(
            f"From {first['step_name']} to {last['step_name']} the drain went from {first['orders_per_s']:,.0f} "
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
    pnl = [s for s in a.steps if _ok(s.get("pnl_per_s"))]
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
    if sla:
        cheapest = min(sla, key=lambda s: s["usd_per_1000_requests_at_sla"])
        held = ", ".join(f"{s['c_sla']:,.0f}" for s in sla)
        floors = [s["step_name"] for s in sla if s.get("c_sla_is_floor")]
        if floors:
            out.append(
                f"At {', '.join(floors)} the breaking-point run reached its users cap without breaking the SLO: "
                "C_SLA there is a floor, and its cost per 1,000 requests a ceiling (raise --max-users)."
            )
        out.append(
            f"At the SLA (p95, errors under 1 %) the gateway held {held} "
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
            f"At {names} the stack's quota plus Locust's CPU ({used} cores) exceed this machine's {cores} "
            "cores: there the load generator and the stack competed, and C_SLA is a lower bound."
        )
    if a.usl_orders is not None:
        u = a.usl_orders
        peak = u.peak()
        where = (
            f"throughput would peak near {peak:,.1f} vCPU at {u.throughput(peak):,.0f} orders/s"
            if peak
            else "no peak: coherency cost fitted as zero"
        )
        best = max(a.projection, key=lambda p: p["orders_per_s_per_usd_hour"]) if a.projection else None
        levels = len({s["vcpus"] for s in a.steps if _ok(s.get("orders_per_s"))})
        out.append(
            f"The Universal Scalability Law fits the drain with contention sigma = {u.sigma:.3f} and coherency "
            f"kappa = {u.kappa:.4f} (R^2 {u.r2:.2f}); projected beyond this machine, {where}"
            + (
                f"; of 4 to 64 vCPU the dollar buys most at {best['vcpus']} vCPU "
                f"({best['orders_per_s']:,.0f} orders/s for ${best['usd_hour']:.3f}/h)"
                if best
                else ""
            )
            + ". A model, not a measurement"
            + (
                f": {levels} resource levels for three terms, so the curve passes through every point and the "
                f"projection is a sketch."
                if levels <= 3
                else "."
            )
        )
        if u.sigma < 0:
            out.append(
                "sigma < 0 is superlinear scaling (Gunther): each added vCPU bought more than its share, because "
                "a fixed part of the stack's CPU goes to what runs beside the order flow (brokers, Connect, the "
                "P&L job, Postgres, heartbeats and polls) and a small quota leaves the flow little beyond it. "
                "The law then predicts a payback: the gain turns into a peak and a decline."
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


def load(cfg, headroom: float = 0.2, architecture: str = "streams") -> list[dict]:
    """The latest experiment's steps of one architecture (streams or baseline)."""
    client = store.connect(cfg)
    try:
        store.apply_ddl(client)
        pricesheet.store(client, pricesheet.load())
        cols, rows = store.run_query(
            client, store.named_queries()["scaling_steps"], headroom=headroom, baseline=architecture == "baseline"
        )
        return [dict(zip(cols, r)) for r in rows]
    finally:
        client.close()


def compare(streams: list[dict], baseline: list[dict]) -> list[dict]:
    """The two architectures step by step (matched on the step's vCPUs and memory): orders/s and P&L
    calculations/s during the drain, per dollar-hour, and stream-native over baseline."""
    by_size = {(b["vcpus"], b["memory_gb"]): b for b in baseline}
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
                "streams_orders_per_s": s.get("orders_per_s"),
                "baseline_orders_per_s": b.get("orders_per_s"),
                "orders_ratio": ratio(s.get("orders_per_s"), b.get("orders_per_s")),
                "streams_pnl_per_s": s.get("pnl_during_drain_per_s"),
                "baseline_pnl_per_s": b.get("pnl_during_drain_per_s"),
                "pnl_ratio": ratio(s.get("pnl_during_drain_per_s"), b.get("pnl_during_drain_per_s")),
                "streams_orders_per_usd_hour": ratio(s.get("orders_per_s"), s["usd_hour"]),
                "baseline_orders_per_usd_hour": ratio(b.get("orders_per_s"), b["usd_hour"]),
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
