"""One load run from start to stored metrics: a run id and record, the collector sampling throughout,
Locust headless (or the drain experiment), then everything written to the store at the end."""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from brokerstream.common.config import Config
from brokerstream.launcher.services import service_names
from brokerstream.metrics import pricesheet, store
from brokerstream.metrics.collector import Collector
from brokerstream.metrics.runs import RunRecord, new_record


def save(
    cfg: Config,
    record: RunRecord,
    collector: Collector,
    results: dict[str, float],
    request_rows: list[list],
    extra_latency: list[list] | None = None,
) -> None:
    client = store.connect(cfg)
    store.apply_ddl(client)
    pricesheet.store(client, pricesheet.load())
    client.insert("runs", [list(asdict(record).values())], column_names=list(asdict(record)))
    collector.write(client)
    if results:
        client.insert(
            "run_results",
            [[record.run_id, k, float(v)] for k, v in results.items()],
            column_names=["run_id", "name", "value"],
        )
    if request_rows:
        client.insert(
            "request_samples",
            request_rows,
            column_names=["run_id", "ts", "users", "rps", "failures_per_s", "p50_ms", "p95_ms", "p99_ms"],
        )
    if extra_latency:
        client.insert("latency_samples", extra_latency, column_names=["run_id", "ts", "metric", "value_ms"])
    client.close()


def _float(text: str) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return 0.0


def locust_history(run_id: str, path: Path) -> list[list]:
    rows = []
    if not path.exists():
        return rows
    with path.open() as f:
        for r in csv.DictReader(f):
            if r.get("Name") != "Aggregated":
                continue
            rows.append(
                [
                    run_id,
                    dt.datetime.fromtimestamp(int(r["Timestamp"]), dt.timezone.utc),
                    int(r["User Count"]),
                    _float(r["Requests/s"]),
                    _float(r["Failures/s"]),
                    _float(r["50%"]),
                    _float(r["95%"]),
                    _float(r["99%"]),
                ]
            )
    return rows


def locust_results(path: Path) -> dict[str, float]:
    """Per-request-type figures of the whole run (POST /orders is the gateway's accept latency)."""
    out = {}
    if not path.exists():
        return out
    with path.open() as f:
        for r in csv.DictReader(f):
            if r["Name"] == "POST /orders":
                out.update(
                    gateway_accept_p50_ms=_float(r["50%"]),
                    gateway_accept_p95_ms=_float(r["95%"]),
                    gateway_accept_p99_ms=_float(r["99%"]),
                    orders_posted=_float(r["Request Count"]),
                )
            if r["Name"] == "Aggregated":
                out.update(
                    requests=_float(r["Request Count"]),
                    failures=_float(r["Failure Count"]),
                    requests_per_s=_float(r["Requests/s"]),
                )
    return out


def locust_processes(cfg: Config) -> list[str]:
    """Locust's own distribution: a master and N workers forked on this machine (BS_LOAD_PROCESSES)."""
    n = int(cfg.get("BS_LOAD_PROCESSES") or 1)
    if not 1 <= n <= 64:
        raise ValueError(f"BS_LOAD_PROCESSES is 1 to 64, got {n}")
    return ["--processes", str(n)] if n > 1 else []


def run_http(
    cfg: Config,
    *,
    shape: str = "constant",
    users: int = 20,
    duration: float = 60,
    scale_step: int = 1,
    web: bool = False,
    tick_rate: float = 1000,
    extra_env: dict[str, str] | None = None,
    progress=print,
) -> RunRecord:
    """Locust members against the gateway while prices tick (so the P&L flow works too), metrics sampled."""
    from brokerstream.gen import pgload

    data = pgload.read(cfg)
    if not data.accounts:
        raise RuntimeError("no reference data: ./brokerstream refdata load --scale tiny")
    record = new_record(
        cfg,
        "http",
        shape,
        f"locust {shape} users={users} duration={duration:.0f}s ticks={tick_rate:.0f}/s",
        data.seed,
        scale_step,
    )
    out_dir = cfg.data_dir / "runs" / record.run_id
    out_dir.mkdir(parents=True, exist_ok=True)
    env = dict(
        os.environ,
        **{k: v for k, v in cfg.values.items() if k.startswith("BS_")},
        BS_LOAD_SHAPE=shape,
        BS_LOAD_USERS=str(users),
        BS_LOAD_DURATION=str(duration),
        BS_LOAD_RESULT_FILE=str(out_dir / "shape.json"),
        **(extra_env or {}),
    )
    env["PYTHONPATH"] = str(cfg.root / "python")
    argv = [
        sys.executable,
        "-m",
        "locust",
        "-f",
        str(cfg.root / "loadtest" / "locustfile.py"),
        "--host",
        cfg.gateway_url,
        "--csv",
        str(out_dir / "locust"),
        "--csv-full-history",
        "--loglevel",
        "WARNING",
        "--only-summary",
    ]
    argv += ["--web-host", cfg.bind] if web else ["--headless"]
    argv += locust_processes(cfg)
    collector = Collector(cfg, record.run_id, service_names(cfg)).start()
    ticks_done, ticker = _start_ticks(cfg, data, tick_rate)
    progress(
        f"[load] run {record.run_id}: {shape}, {users} users, {duration:.0f} s, ticks {tick_rate:,.0f}/s "
        f"({'web UI at http://' + cfg.bind + ':8089' if web else 'headless'})"
    )
    import resource

    before, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    try:
        rc = subprocess.call(argv, env=env, cwd=cfg.root, timeout=duration * 10 + 600)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        # Locust's own CPU (it has exited and been waited for): on a machine shared with the stack,
        # what the client took is what the stack could not have
        client_cores = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / (time.monotonic() - t0)
    finally:
        ticks_done.set()
        if ticker:
            ticker.join(15)
    time.sleep(2)  # the last results of the run
    collector.stop()
    record.ended = dt.datetime.now(dt.timezone.utc)
    results = locust_results(out_dir / "locust_stats.csv")
    shape_file = out_dir / "shape.json"
    if shape_file.exists():
        found = json.loads(shape_file.read_text())
        results["c_sla"] = found["c_sla"]
        # stopped by the users cap, not by the SLO: the system held more than C_SLA says
        results["c_sla_is_floor"] = 1.0 if "without breaking" in found["stopped_because"] else 0.0
        progress(
            f"[load] breaking point: {found['stopped_because']}; "
            + (
                f"no C_SLA: unbroken at {found['c_sla']:.1f} req/s (a floor)"
                if results["c_sla_is_floor"]
                else f"C_SLA {found['c_sla']:.1f} req/s"
            )
        )
    results.update(
        orders_accepted=collector.counts["orders_accepted"],
        orders_rejected=collector.counts["orders_rejected"],
        client_cpu_cores=client_cores,
    )
    save(cfg, record, collector, results, locust_history(record.run_id, out_dir / "locust_stats_history.csv"))
    if rc not in (0, 1):  # 1: some requests failed, which the figures show
        raise RuntimeError(f"locust exited {rc}")
    progress(
        f"[load] stored run {record.run_id}: {int(results.get('requests', 0)):,} requests, "
        f"{collector.counts['orders_accepted']:,} orders accepted, {collector.counts['orders_rejected']:,} rejected"
    )
    return record


def _start_ticks(cfg: Config, data, rate: float):
    """GBM ticks for every active equity at `rate` per second until the returned event is set."""
    import threading

    from brokerstream.gen.produce import produce_ticks
    from brokerstream.gen.ticks import TickGenerator

    done = threading.Event()
    if rate <= 0:
        return done, None
    ticker = threading.Thread(
        target=produce_ticks,
        name="ticks",
        daemon=True,
        args=(cfg, TickGenerator(data, data.seed + 1, rate=rate)),
        kwargs={"duration": 7 * 24 * 3600.0, "snapshot": False, "stop": done.is_set},
    )
    ticker.start()
    return done, ticker


def _stored_bench(cfg: Config, kind: str, workload: str, scale_step: int, bench, figures, progress) -> RunRecord:
    """A benchmark as a stored run: its record, the collector sampling meanwhile, its figures saved."""
    from brokerstream.gen import pgload

    record = new_record(cfg, kind, kind, workload, pgload.read(cfg).seed, scale_step)
    collector = Collector(cfg, record.run_id, service_names(cfg)).start()
    try:
        result = bench()
    finally:
        collector.stop()
    record.ended = dt.datetime.now(dt.timezone.utc)
    save(cfg, record, collector, figures(result), [])
    for line in result.lines():
        progress(f"[{kind}] {line}")
    return record


def run_pnl(
    cfg: Config, *, positions: int, tick_rate: float, duration: float, scale_step: int = 1, progress=print
) -> RunRecord:
    """`bench pnl` as a stored run: open positions revalued as ticks flow, the P&L flow's capacity."""
    from brokerstream.loadtest.bench import pnl

    return _stored_bench(
        cfg,
        "pnl",
        f"open positions={positions} ticks={tick_rate:.0f}/s for {duration:.0f}s",
        scale_step,
        lambda: pnl.run(cfg, positions=positions, tick_rate=tick_rate, duration=duration, progress=progress),
        lambda r: {
            "pnl_calculations_per_s": r.pnl_calculations_per_s,
            "positions_revalued_per_s": r.positions_revalued_per_s,
            "option_valuations_per_s": r.option_valuations_per_s,
        },
        progress,
    )


def run_drain(
    cfg: Config,
    *,
    orders: int,
    scale_step: int = 1,
    tick_rate: float = 10_000,
    warmup: int | None = None,
    timeout: float = 3600,
    architecture: str = "streams",
    progress=print,
) -> RunRecord:
    from brokerstream.loadtest.bench import drain

    warmup = min(50_000, orders // 10) if warmup is None else warmup
    return _stored_bench(
        cfg,
        "drain",
        f"prefill-and-drain orders={orders} ticks={tick_rate:.0f}/s architecture={architecture}",
        scale_step,
        lambda: drain.run(
            cfg,
            orders=orders,
            warmup=warmup,
            tick_rate=tick_rate,
            timeout=timeout,
            architecture=architecture,
            progress=progress,
        ),
        lambda r: {
            "drain_orders_per_s": r.throughput,
            "drain_p99_ms": r.latency_ms["p99"],
            "drain_revalued_per_s": r.revalued_per_second,
        },
        progress,
    )
