"""The cost report: every named query of sql/clickhouse/queries.sql printed as a table, and plots
(PNG, plus an HTML page with the tables) of throughput against cost per hour and latency against load."""

from __future__ import annotations

import html
import math
from pathlib import Path

from brokerstream.metrics import pricesheet, store


def _fmt(v) -> str:
    if isinstance(v, float):
        return "-" if math.isnan(v) or math.isinf(v) else f"{v:,.6g}"
    return str(v)


def table(columns: list[str], rows: list[tuple]) -> str:
    cells = [columns] + [[_fmt(v) for v in r] for r in rows]
    widths = [max(len(str(row[i])) for row in cells) for i in range(len(columns))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def run(cfg, out_dir: Path, *, headroom: float = 0.2, value_per_response: float = 0.001, printer=print) -> dict:
    if not 0 <= headroom < 1:
        raise ValueError("headroom is a fraction in [0, 1)")
    client = store.connect(cfg)
    store.apply_ddl(client)
    pricesheet.store(client, pricesheet.load())
    results = {}
    for q in store.named_queries().values():
        columns, rows = store.run_query(
            client, q, headroom=headroom, value_per_response=value_per_response, baseline=0, partitions=-1, brokers=-1
        )
        results[q.name] = (q.purpose, columns, rows)
        printer(f"\n== {q.name}: {q.purpose}")
        printer(table(columns, rows) if rows else "(no runs with these figures yet)")
    load = client.query(
        "SELECT run_id, rps, p95_ms FROM request_samples WHERE run_id = "
        "(SELECT argMax(run_id, started) FROM runs FINAL WHERE kind = 'http') ORDER BY ts"
    ).result_rows
    client.close()
    out_dir.mkdir(parents=True, exist_ok=True)
    plots = _plots(results, load, out_dir)
    page = out_dir / "report.html"
    page.write_text(_html(results, plots))
    printer(f"\nplots: {', '.join(str(p) for p in plots)}\npage: {page}")
    return results


def _plots(results: dict, load: list[tuple], out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    _, cols, rows = results["throughput_per_dollar"]
    i_cost, i_tp, i_step = cols.index("usd_hour"), cols.index("orders_per_s"), cols.index("scale_step")
    i_arch = cols.index("architecture")
    rows = [r for r in rows if r[i_tp] > 0]  # a P&L run measures revaluations, not orders
    if rows:
        fig, ax = plt.subplots(figsize=(6, 4))
        for arch in sorted({r[i_arch] for r in rows}):
            mine = [r for r in rows if r[i_arch] == arch]
            ax.scatter([r[i_cost] for r in mine], [r[i_tp] for r in mine], label=arch)
        for r in rows:
            ax.annotate(f"step {r[i_step]}", (r[i_cost], r[i_tp]), fontsize=8)
        ax.legend(fontsize=8)
        ax.set_xlabel("cost per hour (USD)")
        ax.set_ylabel("orders per second")
        ax.set_title("throughput against cost")
        path = out_dir / "throughput_vs_cost.png"
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)
        paths.append(path)
    if load:
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.plot([r[1] for r in load], [r[2] for r in load], marker=".", linestyle="none")
        ax.set_xlabel("requests per second")
        ax.set_ylabel("p95 latency (ms)")
        ax.set_title(f"latency against load, run {load[0][0]}")
        path = out_dir / "latency_vs_load.png"
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)
        paths.append(path)
    return paths


def _html(results: dict, plots: list[Path]) -> str:
    parts = [
        "<!doctype html><meta charset=utf-8><title>brokerstream cost report</title>",
        "<style>body{font-family:sans-serif}td,th{padding:2px 8px;text-align:right}</style>",
        "<h1>brokerstream: throughput per dollar</h1>",
    ]
    for p in plots:
        parts.append(f'<img src="{html.escape(p.name)}" alt="{html.escape(p.stem)}">')
    for name, (purpose, cols, rows) in results.items():
        parts.append(
            f"<h2>{html.escape(name)}</h2><p>{html.escape(purpose)}</p><table><tr>"
            + "".join(f"<th>{html.escape(c)}</th>" for c in cols)
            + "</tr>"
        )
        parts += ["<tr>" + "".join(f"<td>{html.escape(_fmt(v))}</td>" for v in r) + "</tr>" for r in rows]
        parts.append("</table>")
    return "\n".join(parts)
