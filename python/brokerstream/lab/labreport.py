"""The scaling report: one self-contained HTML page (data, charts and script inline; nothing fetched)
for someone who never ran the system: what was run, on what, the curves, the tables, conclusions."""

from __future__ import annotations

import datetime as dt
import html
import json
import math
import os
from pathlib import Path

import psutil

from brokerstream.lab import analysis as lab_analysis
from brokerstream.metrics import pricesheet

COLORS = {
    "measured": "#1f5fbf",
    "fargate": "#2a9d5c",
    "model": "#d9480f",
    "pnl": "#7b3fb0",
    "sla": "#b8860b",
    "baseline": "#8a8a8a",
    "heldout": "#c2185b",
    "scaleout": "#e6a100",
}
# experiments on other stack shapes (partitions, brokers), in turn
SHAPE_COLORS = ["#00897b", "#6d4c41", "#5e35b1"]


def _num(v) -> float:
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else float("nan")


def _json_safe(v):
    """NaN and infinities (a figure that does not exist) as null: JSON has no NaN."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: _json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    return v


def charts(a: lab_analysis.LabAnalysis, others: list[tuple[str, list[dict]]] | None = None) -> list[dict]:
    """The report's charts; `others`: (stack shape, its steps) of experiments on other stack shapes (topic
    partitions, brokers), drawn on the orders chart beside the main experiment's steps."""
    steps = a.steps
    names = [[s["step"], s["step_name"]] for s in steps]
    up = lab_analysis.scale_up_shape(steps)
    measured = lambda key, lo, hi, cost="usd_hour", only=steps, shape="": [
        {
            "x": _num(s[cost]),
            "y": _num(s[key]),
            "lo": _num(s[lo]),
            "hi": _num(s[hi]),
            "label": f"{s['step_name']} ({shape})" if shape else s["step_name"],
        }
        for s in only
    ]
    scale_up = [s for s in steps if lab_analysis.shape(s) == up]
    scale_out = [s for s in steps if lab_analysis.shape(s) != up]
    out = [
        {
            "id": "chart-orders",
            "title": "Orders per second against dollars per hour ("
            + ("sustained capacity, gateway" if any(s.get("figure") == "capacity" for s in steps) else "drain")
            + ", ticks flowing)",
            "x": {"label": "USD per hour", "log": True},
            "y": {"label": "orders/s", "log": True},
            "series": [
                {
                    "name": "scale-up (vCPUs), on-demand prices" if scale_out else "measured, on-demand prices",
                    "kind": "points",
                    "color": COLORS["measured"],
                    "labels": True,
                    "points": measured("orders_per_s", "orders_per_s_min", "orders_per_s_max", only=scale_up),
                },
                {
                    "name": "measured, Fargate prices",
                    "kind": "points",
                    "color": COLORS["fargate"],
                    "points": measured("orders_per_s", "orders_per_s_min", "orders_per_s_max", "usd_hour_fargate"),
                },
            ],
        }
    ]
    for k, (name, other) in enumerate(others or []):
        out[0]["series"].append(
            {
                "name": f"stack of {name}, on-demand prices",
                "kind": "points",
                "color": SHAPE_COLORS[k % len(SHAPE_COLORS)],
                "labels": True,
                "points": measured("orders_per_s", "orders_per_s_min", "orders_per_s_max", only=other, shape=name),
            }
        )
    if scale_out:
        out[0]["series"].insert(
            1,
            {
                "name": "scale-out (processes, tasks), on-demand prices",
                "kind": "points",
                "color": COLORS["scaleout"],
                "labels": True,
                "points": measured("orders_per_s", "orders_per_s_min", "orders_per_s_max", only=scale_out),
            },
        )
    m = a.model_orders
    if m is not None:
        model = [{"x": s["usd_hour"], "y": m.throughput(s["vcpus"]), "label": f"{s['vcpus']:g} vCPU"} for s in steps]
        model += [{"x": p["usd_hour"], "y": p["orders_per_s"], "label": f"{p['vcpus']:g} vCPU"} for p in a.projection]
        out[0]["series"].append(
            {
                "name": f"USL sigma={m.law.sigma:.3f} kappa={m.law.kappa:.4f}",
                "kind": "line",
                "dashed": True,
                "model": True,
                "color": COLORS["model"],
                "points": sorted(model, key=lambda p: p["x"]),
            }
        )
        out.append(usl_chart(a))
    out.append(
        {
            "id": "chart-pnl",
            "title": "P&L flow: positions revalued per second against dollars per hour",
            "x": {"label": "USD per hour", "log": True},
            "y": {"label": "positions revalued/s", "log": False},
            "series": [
                {
                    "name": "measured, on-demand prices",
                    "kind": "points",
                    "color": COLORS["pnl"],
                    "labels": True,
                    "points": measured("pnl_per_s", "pnl_per_s_min", "pnl_per_s_max"),
                }
            ],
        }
    )
    out.append(
        {
            "id": "chart-scalability",
            "title": "Scalability F(k)/F(k-1): orders/s per dollar against the step before",
            "x": {"label": "step", "ticks": names},
            "y": {"label": "F(k)/F(k-1)", "log": False},
            "series": [
                {
                    "name": "F(k)/F(k-1) (1 = break-even)",
                    "kind": "bars",
                    "color": COLORS["measured"],
                    "points": [
                        {"x": s["step"], "y": _num(s["scalability_vs_previous"]), "label": s["step_name"]}
                        for s in steps
                        if s.get("scalability_vs_previous") is not None
                    ],
                }
            ],
        }
    )
    floors = [s for s in steps if math.isfinite(_num(s.get("c_sla_floor")))]
    out.append(
        {
            "id": "chart-sla",
            "title": "C_SLA (requests/s at p95 SLO, errors < 1 %) and its cost per 1,000 requests",
            "x": {"label": "USD per hour", "log": False},
            "y": {"label": "requests/s at SLA", "log": False},
            "series": [
                {
                    "name": "C_SLA",
                    "kind": "points",
                    "color": COLORS["sla"],
                    "labels": True,
                    "points": measured("c_sla", "c_sla_min", "c_sla_max"),
                },
                {
                    "name": "unbroken (the load never broke it): a floor, not a C_SLA",
                    "kind": "points",
                    "color": COLORS["baseline"],
                    "labels": True,
                    "points": [
                        {"x": _num(s["usd_hour"]), "y": _num(s["c_sla_floor"]), "label": f"{s['step_name']} (floor)"}
                        for s in floors
                    ],
                },
            ],
        }
    )
    return out


def usl_chart(a: lab_analysis.LabAnalysis) -> dict:
    """The measured steps, the model with its 90 % band drawn only as far as its hold-out test supports,
    and the held-out step beside what the rest predicted for it."""
    m, steps = a.model_orders, a.steps
    span = _span(min(m.levels), m.supported_to, 24)
    series = [
        {
            "name": "measured",
            "kind": "points",
            "color": COLORS["measured"],
            "labels": True,
            "points": [
                {
                    "x": s["vcpus"],
                    "y": _num(s["orders_per_s"]),
                    "lo": _num(s["orders_per_s_min"]),
                    "hi": _num(s["orders_per_s_max"]),
                    "label": s["step_name"],
                }
                for s in steps
            ],
        },
        {
            "name": "model: 90 % band",
            "kind": "band",
            "model": True,
            "color": COLORS["model"],
            "points": [{"x": v, "y": m.throughput(v), "lo": lo, "hi": hi} for v in span for lo, hi in [m.band(v)]],
        },
        {
            "name": f"USL fit (R^2 {m.law.r2:.2f})",
            "kind": "line",
            "dashed": True,
            "model": True,
            "color": COLORS["model"],
            "points": [{"x": v, "y": m.throughput(v)} for v in span],
        },
    ]
    h = m.holdout
    if h is not None:
        series.append(
            {
                "name": f"held out: predicted from the rest ({h.error:+.0%}, {'passed' if h.passed else 'failed'})",
                "kind": "points",
                "model": True,
                "heldout": True,
                "labels": True,
                "color": COLORS["heldout"],
                "points": [
                    {"x": h.vcpus, "y": h.predicted, "lo": h.lo, "hi": h.hi, "label": f"predicted {h.vcpus:g} vCPU"}
                ],
            }
        )
    return {
        "id": "chart-usl",
        "title": f"Universal Scalability Law: measured steps, the model to {m.supported_to:.3g} vCPU (its support)",
        "x": {"label": "vCPUs", "log": False},
        "y": {"label": "orders/s", "log": False},
        "series": series,
    }


def comparison_charts(rows: list[dict]) -> list[dict]:
    """Both architectures on the same performance-to-cost axes: orders/s and P&L calculations/s
    during the drain against dollars per hour."""
    pts = lambda key: [{"x": _num(r["usd_hour"]), "y": _num(r[key]), "label": r["step_name"]} for r in rows]
    return [
        {
            "id": "chart-architectures",
            "title": "Stream-native against the thesis's monolith: orders/s per $/h (drain)",
            "x": {"label": "USD per hour", "log": True},
            "y": {"label": "orders/s", "log": True},
            "series": [
                {
                    "name": "streams (stream-native)",
                    "kind": "points",
                    "color": COLORS["measured"],
                    "labels": True,
                    "points": pts("streams_orders_per_s"),
                },
                {
                    "name": "baseline (monolith on Postgres)",
                    "kind": "points",
                    "color": COLORS["baseline"],
                    "labels": True,
                    "points": pts("baseline_orders_per_s"),
                },
            ],
        },
        {
            "id": "chart-architectures-pnl",
            "title": "P&L calculations/s during the drain, both architectures",
            "x": {"label": "USD per hour", "log": True},
            "y": {"label": "positions revalued/s", "log": True},
            "series": [
                {
                    "name": "streams (Flink P&L job)",
                    "kind": "points",
                    "color": COLORS["pnl"],
                    "labels": True,
                    "points": pts("streams_pnl_per_s"),
                },
                {
                    "name": "baseline (price threads, SQL)",
                    "kind": "points",
                    "color": COLORS["baseline"],
                    "labels": True,
                    "points": pts("baseline_pnl_per_s"),
                },
            ],
        },
    ]


COMPARISON_COLUMNS = [
    ("step_name", "resources", ""),
    ("usd_hour", "$/h on demand", ".4f"),
    ("streams_orders_per_s", "streams orders/s", ",.0f"),
    ("baseline_orders_per_s", "baseline orders/s", ",.0f"),
    ("orders_ratio", "ratio", ".1f"),
    ("streams_orders_per_usd_hour", "streams orders/s per $/h", ",.0f"),
    ("baseline_orders_per_usd_hour", "baseline orders/s per $/h", ",.0f"),
    ("streams_pnl_per_s", "streams P&L calcs/s", ",.0f"),
    ("baseline_pnl_per_s", "baseline P&L calcs/s", ",.0f"),
    ("pnl_ratio", "ratio", ".1f"),
]


def _span(lo: float, hi: float, n: int = 40) -> list[float]:
    return [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]


def _table(rows: list[dict], columns: list[tuple[str, str, str]]) -> str:
    head = "".join(f"<th>{html.escape(title)}</th>" for _, title, _ in columns)
    body = []
    for r in rows:
        cells = []
        for key, _, fmt in columns:
            v = r.get(key)
            text = (
                "-"
                if v is None or (isinstance(v, float) and not math.isfinite(v))
                else (format(v, fmt) if fmt and isinstance(v, (int, float)) else str(v))
            )
            cells.append(f"<td>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


STEP_COLUMNS = [
    ("step", "step", ""),
    ("step_name", "resources", ""),
    ("memory_gb", "memory GB", "g"),
    ("repeats", "repeats", ""),
    ("usd_hour", "$/h on demand", ".4f"),
    ("usd_hour_fargate", "$/h Fargate", ".4f"),
    ("orders_per_s", "orders/s", ",.0f"),
    ("drain_orders_per_s", "drain orders/s", ",.0f"),
    ("drain_seconds", "drain s", ",.1f"),
    ("orders_per_s_min", "min", ",.0f"),
    ("orders_per_s_max", "max", ",.0f"),
    ("orders_per_s_per_usd_hour", "orders/s per $/h", ",.0f"),
    ("usd_per_million_orders", "$ per million orders", ".4f"),
    ("pnl_per_s", "positions revalued/s", ",.0f"),
    ("pnl_per_s_per_usd_hour", "revalued/s per $/h", ",.0f"),
    ("c_sla", "C_SLA req/s", ",.1f"),
    ("c_sla_floor", "no C_SLA: unbroken at (a floor)", ",.1f"),
    ("accept_p99_ms_at_capacity", "accept p99 ms at capacity", ",.0f"),
    ("visible_p99_ms_at_capacity", "visible p99 ms at capacity", ",.0f"),
    ("locust_c_sla", "Locust breaking point req/s", ",.1f"),
    ("usd_per_1000_requests_at_sla", "$ per 1,000 req at C_SLA", ".2e"),
    ("scalability_vs_previous", "F(k)/F(k-1)", ".3f"),
    ("idle_cpu_cores", "idle stack CPU", ".2f"),
    ("max_cpu_cores", "stack CPU used (max of runs)", ".2f"),
    ("cpu_used_share", "share of quota used", ".0%"),
    ("http_client_cpu_cores", "load client CPU", ".2f"),
]
PROJECTION_COLUMNS = [
    ("vcpus", "vCPUs", ""),
    ("memory_gb", "memory GB", "g"),
    ("usd_hour", "$/h on demand", ".3f"),
    ("usd_hour_fargate", "$/h Fargate", ".3f"),
    ("orders_per_s", "orders/s (model)", ",.0f"),
    ("orders_per_s_lo", "band low", ",.0f"),
    ("orders_per_s_hi", "band high", ",.0f"),
    ("orders_per_s_per_usd_hour", "orders/s per $/h (model)", ",.0f"),
]


def what_ran(meta: dict) -> str:
    """The experiment in words, from what its runs recorded."""
    runs = []
    if meta.get("drains", True):
        runs.append(
            f"{meta.get('orders', 0):,} orders prefilled and drained while ticks flowed at "
            f"{meta.get('tick_rate', 0):,.0f}/s (after {meta.get('warmup', 0):,} warm-up orders)"
        )
    runs.append(
        f"{meta.get('pnl_positions', 0):,} open positions revalued with ticks at {meta.get('pnl_tick_rate', 0):,.0f}/s"
    )
    if meta.get("capacity"):
        runs.append(
            f"the sustained capacity through the gateway: open-loop rungs of {meta.get('capacity_seconds', 0):g} s at "
            f"constant rates (each order a POST and a long poll of its result, ticks at "
            f"{meta.get('http_tick_rate', 0):,.0f}/s), the next rate chosen by whether the last held "
            "loadtest/slo.yaml's flow targets (no lag grows, every result, commit, P&L and Postgres latency)"
        )
    if meta.get("locust", True):
        runs.append(
            f"Locust members ramping, after a hold of warm-up, until p95 passed {meta.get('slo_p95_ms', 0):,.0f} ms "
            "or errors 1 %"
        )
    shape = (
        f" The stack: {meta['topic_partitions']} partitions per flow topic, {meta['kafka_brokers']} Kafka "
        f"broker{'s' if meta.get('kafka_brokers', 1) != 1 else ''}; a scale-out step's added processes ran in "
        "their services' groups, under the same quota."
        if meta.get("topic_partitions")
        else ""
    )
    return (
        "Each step limited the whole stack (Kafka, schema registry, Postgres, Kafka Connect with its connectors, "
        "Flink with the P&L job, the streams app and its gateway) to a CPU quota and a memory limit with cgroups. "
        "At each step: "
        + "; then ".join(runs)
        + ". The load generators ran on the same machine, outside the limits."
        + shape
    )


def page(
    a: lab_analysis.LabAnalysis,
    meta: dict,
    comparison: list[dict] | None = None,
    others: list[tuple[str, list[dict]]] | None = None,
) -> str:
    specs = charts(a, others) + (comparison_charts(comparison) if comparison else [])
    data = json.dumps(
        _json_safe({"charts": specs, "steps": a.steps, "meta": meta}), default=str, allow_nan=False
    ).replace("</", "<\\/")
    script = (Path(__file__).with_name("charts.js")).read_text()
    usl = a.usl_orders
    what = what_ran(meta)
    parts = [
        "<!doctype html><html lang=en><meta charset=utf-8><title>brokerstream: throughput per dollar as it "
        "scales</title>",
        "<style>body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1340px;color:#222}"
        "h1{font-size:22px}h2{font-size:17px;margin-top:28px}.charts{display:flex;flex-wrap:wrap;gap:12px}"
        ".chart{border:1px solid #ddd;border-radius:6px;background:#fff}svg text{font-size:11px;fill:#333}"
        "svg .title{font-size:13px;font-weight:600}svg .axis{font-size:12px}svg .grid line{stroke:#eee}"
        "svg .readout{fill:#555}svg .label{fill:#444;font-size:10px}table{border-collapse:collapse;font-size:12px}"
        "td,th{border-bottom:1px solid #eee;padding:3px 8px;text-align:right}th{background:#f6f6f6}"
        ".note{color:#555}.conclusions li{margin:4px 0}</style>",
        "<h1>brokerstream: what each dollar of infrastructure buys as the system scales</h1>",
        f"<p class=note>Experiment {html.escape(str(meta.get('experiment_id', '')))}, "
        f"{html.escape(str(meta.get('generated', '')))}; "
        f"machine: {meta.get('cores')} cores, {meta.get('memory_gb')} GB; data: "
        f"{html.escape(str(meta.get('data', '')))}; "
        f"code {html.escape(str(meta.get('code_version', '')))}.</p>",
        f"<h2>What was run</h2><p>{html.escape(what)}</p>",
        "<h2>Conclusions (computed from the figures below)</h2><ul class=conclusions>"
        + "".join(f"<li>{html.escape(c)}</li>" for c in a.conclusions)
        + "</ul>",
        "<h2>Curves</h2><div class=charts>"
        + "".join(f'<div class=chart id="{c["id"]}"></div>' for c in specs)
        + "</div>",
        "<h2>Steps</h2>" + _table(a.steps, STEP_COLUMNS),
        "<p class=note>orders/s: "
        + (
            "the sustained capacity through the gateway (the highest rung that held loadtest/slo.yaml's flow "
            "targets below one that did not; min and max over repeats), with the members' accept and visible p99 "
            "at it (under a CPU quota the kernel stops the stack for the rest of each 100 ms period once the "
            "quota is spent, which sets a floor under tail latency); drain orders/s beside it. "
            if any(s.get("figure") == "capacity" for s in a.steps)
            else "drain throughput (measured orders over the span of their results). "
        )
        + "Positions "
        f"revalued/s: the P&L job's own counters while {meta.get('pnl_positions', 0):,} open positions were revalued "
        f"with ticks at {meta.get('pnl_tick_rate', 0):,.0f}/s (its capacity under the step). F(k) is orders/s per "
        "dollar-hour; "
        "F(k)/F(k-1) below 1 means the step bought less per dollar than the one before. Cost per 1,000 requests at "
        f"C_SLA includes {meta.get('headroom', 0.2):.0%} headroom.</p>",
    ]
    if comparison:
        parts.append(
            "<h2>Architectures: the stream-native system and the seed thesis's monolith</h2>"
            "<p class=note>The latest experiment of each (`experiment scale --architecture streams|baseline`), "
            "matched by step; the same machine, reference data, orders and tick rate; the whole stack ran in "
            "both (the P&L job and connectors idle while the monolith drains). P&L calcs/s: positions revalued "
            "per second during the drain (the P&L job's records, the monolith's marks).</p>"
            + _table(comparison, COMPARISON_COLUMNS)
        )
    if a.model_orders is not None:
        m = a.model_orders
        terms = m.term_bands()
        band = lambda name, fmt: (
            f"{format(terms[name][0], fmt)} (90 % band {format(terms[name][1], fmt)} to {format(terms[name][2], fmt)})"
        )
        parts.append(
            "<h2>Model: how far it can be trusted</h2><p>Universal Scalability Law fitted to the steps' orders/s "
            f"over the flow's resources: each step's quota minus the idle stack's cores ({m.overhead:.2f} on average"
            f"{'' if m.overhead_measured else ', not measured: 0 taken out'}). lambda = {band('lam', ',.0f')} orders/s "
            f"per {usl.unit:g} vCPU of the flow's own, sigma (contention) = {band('sigma', '.4f')}, kappa "
            f"(coherency) = {band('kappa', '.5f')}, R^2 = {usl.r2:.3f}. {html.escape(m.verdict())} Memory "
            f"{meta.get('gb_per_vcpu', 4):g} GB per vCPU. Projected, not measured.</p>"
            + (_table(a.projection, PROJECTION_COLUMNS) if a.projection else "<p>No projection.</p>")
        )
    parts.append(f'<script id="lab-data" type="application/json">{data}</script><script>{script}</script></html>')
    return "\n".join(parts)


def run(cfg, out_dir: Path, *, headroom: float = 0.2, printer=print) -> Path:
    rows = lab_analysis.load(cfg, headroom)
    if not rows:
        raise RuntimeError("no scaling experiment stored yet: ./brokerstream experiment scale")
    sheet = pricesheet.load()
    a = lab_analysis.analyse(rows, sheet)
    baseline_rows = lab_analysis.load(cfg, headroom, architecture="baseline")
    comparison = (
        lab_analysis.compare(a.steps, lab_analysis.analyse(baseline_rows, sheet).steps) if baseline_rows else []
    )
    a.conclusions += lab_analysis.comparison_sentences(comparison)
    # the latest experiment of every other stack shape (topic partitions, brokers) on the same axes
    main_shape = (rows[0].get("topic_partitions"), rows[0].get("kafka_brokers"))
    others = []
    for p, b in lab_analysis.shapes(cfg):
        if (p, b) != main_shape:
            other_rows = lab_analysis.load(cfg, headroom, partitions=p, brokers=b)
            if other_rows:
                others.append((lab_analysis.shape_name(p, b), lab_analysis.analyse(other_rows, sheet).steps))
    a.conclusions += lab_analysis.other_shape_sentences(a.steps, others)
    meta = experiment_meta(cfg)
    meta.update(
        headroom=headroom,
        gb_per_vcpu=sheet.projection_gb_per_vcpu,
        generated=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        cores=os.cpu_count(),
        memory_gb=round(psutil.virtual_memory().total / 1e9, 1),
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "scaling.html"
    path.write_text(page(a, meta, comparison, others))
    (out_dir / "scaling.json").write_text(
        json.dumps(
            _json_safe(
                {
                    "steps": a.steps,
                    "projection": a.projection,
                    "architectures": comparison,
                    "other_stack_shapes": [{"shape": n, "steps": st} for n, st in others],
                    "conclusions": a.conclusions,
                    "meta": meta,
                }
            ),
            default=str,
            indent=1,
            allow_nan=False,
        )
    )
    printer(f"scaling report: {path}")
    for line in summary(a, comparison):
        printer(line)
    return path


def summary(a: lab_analysis.LabAnalysis, comparison: list[dict] | None = None) -> list[str]:
    """Two lines: the curve, and the model; a third with the baseline beside it when it was measured."""
    pts = ", ".join(f"{s['step_name']} {_num(s['orders_per_s']):,.0f}/s at ${s['usd_hour']:.3f}/h" for s in a.steps)
    first = f"orders/s per step: {pts}; stops paying {a.stops_paying}"
    m = a.model_orders
    if m is None:
        second = "USL: no fit (it needs three vCPU levels cut the same way: threads, processes, tasks)"
    else:
        h = m.holdout
        second = (
            f"USL (idle stack's {m.overhead:.2f} cores taken out): sigma {m.law.sigma:.3f}, kappa {m.law.kappa:.4f}, "
            f"R^2 {m.law.r2:.2f}; "
            + (
                f"held-out {h.vcpus:g} vCPU predicted {h.predicted:,.0f}/s vs {h.measured:,.0f}/s measured "
                f"({h.error:+.0%}, {'passed' if h.passed else 'failed'}); "
                if h
                else "too few steps to hold one out; "
            )
            + (
                "projected "
                + ", ".join(
                    f"{p['vcpus']:g} vCPU {p['orders_per_s']:,.0f}/s ({p['orders_per_s_lo']:,.0f} to "
                    f"{p['orders_per_s_hi']:,.0f})"
                    for p in a.projection
                )
                if a.projection
                else "no projection beyond the measured steps"
            )
        )
    lines = [first, second]
    if comparison:
        lines.append(
            "against the baseline (monolith), orders/s: "
            + ", ".join(
                f"{r['step_name']} {_num(r['streams_orders_per_s']):,.0f} vs {_num(r['baseline_orders_per_s']):,.0f} "
                f"(x{_num(r['orders_ratio']):.1f})"
                for r in comparison
            )
        )
    return lines


def experiment_meta(cfg) -> dict:
    from brokerstream.metrics import store

    client = store.connect(cfg)
    try:
        row = client.query(
            "SELECT experiment_id, maxIf(orders, kind = 'drain'), anyIf(tick_rate, kind = 'drain'), "
            "any(conditions), any(topic_partitions), any(kafka_brokers) FROM experiment_runs FINAL "
            "WHERE experiment_id = (SELECT argMax(experiment_id, started) FROM experiment_runs FINAL "
            "WHERE architecture != 'baseline') GROUP BY experiment_id"
        ).result_rows
        version = client.query(
            "SELECT any(code_version) FROM runs FINAL WHERE run_id IN (SELECT run_id FROM "
            "experiment_runs FINAL WHERE experiment_id = (SELECT argMax(experiment_id, started) "
            "FROM experiment_runs FINAL WHERE architecture != 'baseline'))"
        ).result_rows
    finally:
        client.close()
    if not row:
        return {}
    experiment_id, orders, tick_rate, conditions, partitions, brokers = row[0]
    c = json.loads(conditions or "{}")
    return {
        "experiment_id": experiment_id,
        "orders": orders,
        "tick_rate": tick_rate,
        "warmup": c.get("warmup_orders", 0),
        "slo_p95_ms": c.get("slo_p95_ms", 0),
        "pnl_positions": c.get("pnl_positions", 0),
        "pnl_tick_rate": c.get("pnl_tick_rate", 0),
        "drains": c.get("drains", True),
        "capacity": c.get("capacity", False),
        "capacity_seconds": c.get("capacity_seconds", 0),
        "locust": c.get("locust", True),
        "http_tick_rate": c.get("http_tick_rate", 0),
        "code_version": version[0][0] if version else "",
        "topic_partitions": partitions,
        "kafka_brokers": brokers,
        "data": f"{c.get('accounts', '?')} accounts, {c.get('instruments', '?')} instruments (seed "
        f"{c.get('seed', '?')})",
    }
