"""The whole system under one load, as users run it: every service on, orders at stepped constant
rates, ticks flowing, and what each step did to latency, lag, CPU and memory.

    ./brokerstream bench system [--rates 500,1000,2000,5000,10000,20000,30000,40000,50000]
                                [--step-seconds 30] [--tick-rate 10000] [--http-max 2000]
                                [--positions 20000] [--short] [--architecture streams|baseline]

- Orders come from the load client (loadtest/loadgen/, one JVM for the run), open-loop: order i is due at
  start + i / rate and every latency counts from its due time, so a slow server cannot hide behind a
  slow client. Rates up to --http-max go through the gateway (POST, then a long poll of the result);
  higher ones straight into the orders topic, as the gateway writes them. The client's own CPU is
  reported, and the client runs in the `clients` CPU group (standing for members on other machines).
- Ticks flow at --tick-rate throughout (a GBM generator in its own process).
- Each step reports accept / result-visible / committed latency, tick -> P&L committed, order ->
  Postgres and position -> Postgres, each consumer group's lag and whether it grows, CPU cores and
  RSS per service, records written to Kafka per order, and where an order's time went hop by hop
  (sampled orders carry stage times in their record headers).
- The sustained capacity is the highest rate whose step holds loadtest/slo.yaml: no lag grows, every
  order has its result, the latency targets hold. Given a `Search` (bench/capacity.py) instead of fixed
  rates, each rung goes through the gateway and the next rate depends on whether the last ones held
  (the scaling lab finds each step's capacity so). Before the steps, Kafka's own ProducerPerformance
  gives the producer ceiling of this machine, and the run prints the ratio.
- The run is stored in ClickHouse (runs, system_steps, hop_samples, process_samples, lag_samples).
- `--architecture baseline` measures the monolith (baseline/) instead of the streams app, which is
  stopped for the run and put back after: every step goes into Kafka (the gateway is the streams
  app's), the open positions go into its own table, its groups' lags are judged, and P&L/s counts its
  marks. The rest of the stack (P&L job, connectors, ticks) runs either way.
"""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
import subprocess
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from brokerstream.clients.kafka_clients import TOOLS, client_conf
from brokerstream.clients.kafka_security import GATEWAY, java_client_file
from brokerstream.common.config import ROOT, Config
from brokerstream.gen import pgload
from brokerstream.gen.refdata import api_key
from brokerstream.launcher.cpugroups import CpuGroups
from brokerstream.launcher.layout import Layout
from brokerstream.launcher.services import service_names
from brokerstream.loadtest.bench import cost
from brokerstream.loadtest.bench.capacity import Search
from brokerstream.loadtest.bench.probe import StackProbe, log_end_total, slope
from brokerstream.loadtest.bench.stats import summary
from brokerstream.metrics.collector import GROUPS

SLO_FILE = ROOT / "loadtest" / "slo.yaml"
DEFAULT_RATES = [500, 1000, 2000, 5000, 10_000, 20_000, 30_000, 40_000, 50_000]
# computation happens in these hops; the others are waiting and communication
COMPUTING = {"gateway", "decide", "revaluation"}
ORDER_HOPS = ["client_queue", "to_gateway", "gateway", "kafka_append", "queue", "decide", "commit", "postgres"]
TICK_HOPS = ["pnl_window", "revaluation", "pnl_commit"]


@dataclass
class StepResult:
    index: int
    mode: str
    rate: float
    seconds: float
    achieved_rate: float
    sent: int
    missing: int
    duplicates: int
    errors: dict
    outcomes: dict
    accept_ms: dict
    visible_ms: dict
    committed_ms: dict
    tick_to_pnl_ms: dict
    order_to_postgres_ms: dict
    position_to_postgres_ms: dict
    hops_ms: dict
    cpu_cores: dict
    rss_mb: dict
    client_cpu_cores: float
    ticks_cpu_cores: float
    max_late_ms: float
    offsets_per_order: float
    lags: dict
    sampled_ms: dict = field(default_factory=dict)
    pnl_calcs_per_s: float = float("nan")
    failures: list = field(default_factory=list)
    http_failures: list = field(default_factory=list)
    # what an order cost in the step (ticks included, idle subtracted): CPU microseconds by service; broker
    # requests by API key, records and bytes written by topic, Postgres rows by table, each per order;
    # the stack's cores by the kernel's count (cpuacct), beside the services' own sum
    cost_us: dict = field(default_factory=dict)
    jit_us: dict = field(default_factory=dict)  # of cost_us, the JVMs' JIT compilers (warm-up)
    per_order: dict = field(default_factory=dict)
    kernel_cores: float | None = None
    cost_check: str | None = None

    @property
    def sustained(self) -> bool:
        return not self.failures

    def order_hops_total_ms(self) -> float:
        """The sum of the order hops' means up to the committed result: for the same sampled orders it
        equals their mean due -> committed latency (the stages add up)."""
        return sum(self.hops_ms.get(h, {}).get("mean", 0.0) for h in ORDER_HOPS if h != "postgres")

    @property
    def gateway_ok(self) -> bool:
        return self.mode == "http" and not self.failures and not self.http_failures


@dataclass
class SystemResult:
    run_id: str
    tick_rate: float
    positions: int
    window_ms: int
    kafka_ceiling: float
    steps: list[StepResult]
    settings: dict
    architecture: str = "streams"

    @property
    def sustained_capacity(self) -> float:
        return max((s.achieved_rate for s in self.steps if s.sustained), default=0.0)

    @property
    def gateway_capacity(self) -> float:
        return max((s.achieved_rate for s in self.steps if s.gateway_ok), default=0.0)

    def lines(self) -> list[str]:
        who = (
            "the streams app and the P&L job"
            if self.architecture == "streams"
            else "the baseline monolith deciding and marking (streams app stopped; P&L job and connectors on)"
        )
        out = [
            f"run {self.run_id}: {who}; ticks {self.tick_rate:,.0f}/s, {self.positions:,} extra open positions, "
            f"P&L window {self.window_ms} ms, every service on (P&L job, connectors)"
        ]
        head = (
            f"{'step':>4} {'mode':<5} {'rate':>7} {'got':>7} {'accept p99':>10} {'visible p99':>11} "
            f"{'commit p99':>10} {'tick>pnl p99':>12} {'pos>pg p99':>10} {'ord>pg p99':>10} "
            f"{'P&L/s':>7} {'cores':>5} {'client':>6} {'rec/ord':>7}  verdict"
        )
        out.append(head)
        for s in self.steps:
            total = sum(s.cpu_cores.values())
            verdict = "sustained" if s.sustained else "; ".join(s.failures)
            if s.mode == "http" and s.sustained and s.http_failures:
                verdict += " (gateway: " + "; ".join(s.http_failures) + ")"
            out.append(
                f"{s.index:>4} {s.mode:<5} {s.rate:>7,.0f} {s.achieved_rate:>7,.0f} "
                f"{_p(s.accept_ms):>10} {_p(s.visible_ms):>11} {_p(s.committed_ms):>10} "
                f"{_p(s.tick_to_pnl_ms):>12} {_p(s.position_to_postgres_ms):>10} "
                f"{_p(s.order_to_postgres_ms):>10} {s.pnl_calcs_per_s:>7,.0f} {total:>5.2f} "
                f"{s.client_cpu_cores:>6.2f} "
                f"{s.offsets_per_order:>7.1f}  {verdict}"
            )
        cap, gw = self.sustained_capacity, self.gateway_capacity
        out.append(f"sustained capacity: {cap:,.0f} orders/s (the highest step holding loadtest/slo.yaml)")
        out.append(f"gateway capacity (HTTP steps, accept and visible targets too): {gw:,.0f} orders/s")
        if self.kafka_ceiling:
            out.append(
                f"Kafka's own producer ceiling here (ProducerPerformance, 150 B, acks=all, idempotent, "
                f"lz4, linger 5 ms): {self.kafka_ceiling:,.0f} records/s; sustained capacity / ceiling = "
                f"{cap / self.kafka_ceiling:.3f}"
            )
        out += cost_lines(self.steps)
        best = next((s for s in reversed(self.steps) if s.sustained), self.steps[-1] if self.steps else None)
        if best:
            out.append(
                f"per service at step {best.index} ({best.rate:,.0f}/s): cores "
                + ", ".join(f"{k} {v:.2f}" for k, v in sorted(best.cpu_cores.items(), key=lambda kv: -kv[1]))
                + f"; client {best.client_cpu_cores:.2f}, ticks {best.ticks_cpu_cores:.2f}"
            )
            out.append("  RSS MB: " + ", ".join(f"{k} {v:,.0f}" for k, v in sorted(best.rss_mb.items())))
            out += hop_lines(best)
        return out


def cost_lines(steps: list[StepResult], top: int = 6) -> list[str]:
    """Each step's cost per order (ticks included, idle subtracted): CPU by service, broker requests by API
    key, records written by topic, Postgres rows by table; and whether the services add up."""
    out = []
    for s in steps:
        if not s.cost_us:
            continue
        total = sum(s.cost_us.values())
        out.append(
            f"cost per order at step {s.index} ({s.rate:,.0f}/s, ticks included, idle subtracted): CPU "
            f"{total:,.0f} us: "
            + ", ".join(f"{k} {v:,.0f}" for k, v in sorted(s.cost_us.items(), key=lambda kv: -kv[1]) if v >= 1)
        )
        jit = sum(s.jit_us.values())
        if jit >= 1:
            out.append(
                f"  of which the JIT compilers {jit:,.0f} us (warm-up): "
                + ", ".join(f"{k} {v:,.0f}" for k, v in sorted(s.jit_us.items(), key=lambda kv: -kv[1]) if v >= 1)
            )
        for kind, what in (
            ("requests", "broker requests"),
            ("records", "records to Kafka"),
            ("rows", "rows to Postgres"),
        ):
            per = s.per_order.get(kind, {})
            if per:
                shown = sorted(per.items(), key=lambda kv: -kv[1])[:top]
                out.append(
                    f"  {what} {sum(per.values()):.2f}: "
                    + ", ".join(f"{k} {v:.2f}" for k, v in shown)
                    + (f", {len(per) - len(shown)} more" if len(per) > len(shown) else "")
                )
        if s.kernel_cores is not None:
            out.append(
                f"  check: the services' CPU {sum(s.cpu_cores.values()):.2f} cores, the kernel's count for "
                f"the stack {s.kernel_cores:.2f}: " + (s.cost_check or "they add up")
            )
    return out


def _p(summary: dict, key: str = "p99") -> str:
    v = summary.get(key) if summary else None
    return "-" if v is None else (f"{v / 1000:.1f}s" if v >= 10_000 else f"{v:.0f}ms" if v >= 10 else f"{v:.1f}ms")


def hop_lines(step: StepResult) -> list[str]:
    """Where time went at one step: each hop's mean and p99 and its share of the path's mean."""
    out = []
    for path, hops in (("order", ORDER_HOPS), ("tick", TICK_HOPS)):
        rows = [(h, step.hops_ms.get(h, {})) for h in hops if step.hops_ms.get(h, {}).get("count")]
        total = sum(r.get("mean", 0) for _, r in rows)
        if not rows or total <= 0:
            continue
        computing = sum(r.get("mean", 0) for h, r in rows if h in COMPUTING)
        if path == "order" and step.sampled_ms.get("count"):
            out.append(
                f"  sampled orders: {step.sampled_ms['count']:,}, due -> committed mean "
                f"{step.sampled_ms['mean']:,.1f} ms; their hops up to the commit add up to "
                f"{step.order_hops_total_ms():,.1f} ms"
            )
        out.append(
            f"  where a{'n' if path == 'order' else ''} {path}'s time goes (sampled, mean {total:,.1f} ms; "
            f"computing {100 * computing / total:.0f} %, waiting and communication "
            f"{100 * (total - computing) / total:.0f} %):"
        )
        for h, r in rows:
            out.append(
                f"    {h:<13} {'computing' if h in COMPUTING else 'waiting':<9} mean {r['mean']:>9,.2f} ms  "
                f"p99 {r.get('p99', float('nan')):>9,.1f} ms  {100 * r['mean'] / total:5.1f} %"
            )
    return out


# --- the plan the load client works from ------------------------------------------------------------
def plan(cfg: Config, data, *, seed: int, trace_one_in: int, option_share: float = 0.3) -> dict:
    equities = [i.instrument_id for i in data.instruments if i.instrument_type == "EQUITY" and i.status == "ACTIVE"]
    options = [
        i.instrument_id
        for i in data.instruments
        if i.instrument_type == "OPTION" and i.status == "ACTIVE" and i.maturity and i.maturity > data.as_of
    ]
    clients = []
    for m in data.members:
        if m.status != "ACTIVE":
            continue
        accounts = [a.account_id for a in data.accounts if a.member_id == m.member_id and a.status == "ACTIVE"]
        if accounts:
            clients.append({"member": m.member_id, "key": api_key(data.seed, m.member_id), "accounts": accounts})
    if not clients:
        raise RuntimeError("no active member with an active account: load reference data first")
    return {
        "gateway_url": cfg.gateway_url,
        "gateway_urls": cfg.gateway_urls,
        "bootstrap": cfg.kafka_bootstrap,
        "registry_url": cfg.registry_url,
        "clients": clients,
        "equities": equities,
        "options": options,
        "option_share": option_share,
        "seed": seed,
        "trace_one_in": trace_one_in,
        "result_wait_ms": 10_000,
        "kafka_login": str(java_client_file(cfg, TOOLS) or ""),
        "order_kafka_login": str(java_client_file(cfg, GATEWAY) or ""),
    }


class LoadClient:
    """The loadgen JVM: one step per request line, one JSON answer per step."""

    def __init__(self, cfg: Config, plan_json: dict, cpu: CpuGroups):
        jar = Layout(cfg).module_jar("loadtest/loadgen", "loadgen-0.1.0.jar")
        if not jar.exists():
            raise FileNotFoundError(f"{jar} is missing: ./brokerstream install builds it")
        self.plan_file = Path(tempfile.mkstemp(prefix="loadgen-plan-", suffix=".json")[1])
        self.plan_file.write_text(json.dumps(plan_json))
        self.proc = subprocess.Popen(
            [cfg.java(), "-Xms256m", "-Xmx1g", "-XX:+UseParallelGC", "-jar", str(jar), str(self.plan_file)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        cpu.place("clients", [self.proc.pid])
        ready = json.loads(self.proc.stdout.readline() or "{}")
        if not ready.get("ready"):
            raise RuntimeError("the load client did not start (see its output above)")

    def step(self, mode: str, rate: float, seconds: float, tag: str, settle: float) -> dict:
        self.proc.stdin.write(f"step {mode} {rate} {seconds} {tag} {settle}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the load client exited ({self.proc.wait()})")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"load client: {answer['error']}")
        return answer

    def close(self) -> None:
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
            self.proc.wait(30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
        self.plan_file.unlink(missing_ok=True)


def _tick_process(cfg: Config, seed: int, rate: float, stop, out) -> None:
    from brokerstream.gen.produce import produce_ticks
    from brokerstream.gen.ticks import TickGenerator

    report = produce_ticks(
        cfg, TickGenerator(pgload.read(cfg), seed, rate=rate), duration=24 * 3600, stop=stop.is_set, snapshot=False
    )
    out.put(report.rate)


def wait_for_reference_data(cfg: Config, data, progress, timeout: float = 300) -> None:
    """Until the gateway knows the generated members' keys: right after `refdata load` Debezium may
    still be carrying the reference tables, and a step sent meanwhile measures only 401s."""
    import requests

    member = next(m.member_id for m in data.members if m.status == "ACTIVE")
    key = api_key(data.seed, member)
    deadline = time.monotonic() + timeout
    said = False
    while True:
        try:
            status = requests.get(
                f"{cfg.gateway_url}/members/{member}/risk", headers={"X-Api-Key": key}, timeout=10
            ).status_code
        except requests.RequestException as e:
            status = type(e).__name__
        if status == 200:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"the gateway still answers {status} for {member}'s generated key after {timeout:.0f} s:"
                " is the reference data loaded and Debezium running?"
            )
        if not said:
            progress(f"[system] waiting for the reference data to reach the gateway ({status})")
            said = True
        time.sleep(2)


# --- Postgres: how far the sync trails the flow ---------------------------------------------------------
def _percentiles(conn, sql: str, args) -> dict:
    row = conn.execute(
        f"SELECT count(*), avg(d), percentile_disc(0.5) WITHIN GROUP (ORDER BY d), "
        f"percentile_disc(0.99) WITHIN GROUP (ORDER BY d), max(d) FROM ({sql}) x",
        args,
    ).fetchone()
    if not row or not row[0]:
        return {"count": 0}
    return {"count": row[0], "mean": float(row[1]), "p50": float(row[2]), "p99": float(row[3]), "max": float(row[4])}


def postgres_lags(
    cfg: Config, tag: str, expected: int, start: dt.datetime, end: dt.datetime, samples: list, timeout: float
) -> tuple[dict, dict, dict, int]:
    """Order -> Postgres (due time to synced_at) for the step's orders, position -> Postgres (decision
    to synced_at) for positions the step changed, and the Postgres hop of sampled orders (visible to
    synced_at). Waits up to `timeout` for the step's results to arrive; returns the unsynced count."""
    import psycopg

    pattern = tag + "-%"
    deadline = time.monotonic() + timeout
    with psycopg.connect(cfg.postgres_dsn(), autocommit=True) as conn:
        synced = 0
        while time.monotonic() < deadline:
            synced = conn.execute("SELECT count(*) FROM order_results WHERE order_id LIKE %s", (pattern,)).fetchone()[0]
            if synced >= expected:
                break
            time.sleep(1)
        orders = _percentiles(
            conn,
            "SELECT extract(epoch FROM synced_at - client_ts) * 1000 AS d FROM order_results WHERE order_id LIKE %s",
            (pattern,),
        )
        positions = _percentiles(
            conn,
            "SELECT extract(epoch FROM synced_at - updated_ts) * 1000 AS d FROM positions "
            "WHERE updated_ts BETWEEN %s AND %s",
            (start, end),
        )
        hop = {"count": 0}
        if samples:
            visible = {s[0]: s[2] / 1000.0 for s in samples}  # order id -> visible (ms)
            rows = conn.execute(
                "SELECT order_id, extract(epoch FROM synced_at) * 1000 FROM order_results WHERE order_id = ANY(%s)",
                (list(visible),),
            ).fetchall()
            hop = summary([max(0.0, float(ms) - visible[oid]) for oid, ms in rows])
    return orders, positions, hop, max(0, expected - synced)


def _wait_settled(cfg: Config, groups: list[str], timeout: float, floor: int = 1000) -> None:
    """Until every listed group's lag is under the floor (the last step's backlog drained), or timeout."""
    import uuid as _uuid

    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient

    from brokerstream.metrics.collector import group_lags

    admin = AdminClient(client_conf(cfg))
    consumer = Consumer(client_conf(cfg, **{"group.id": f"settle-{_uuid.uuid4().hex}"}))
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            lags = group_lags(admin, consumer, groups)
            if all(v < floor for v in lags.values()):
                return
            time.sleep(1)
    finally:
        consumer.close()


# --- verdicts -------------------------------------------------------------------------------------------
def judge(step: StepResult, slo: dict, window_ms: int) -> None:
    f = step.failures
    if step.achieved_rate < 0.95 * step.rate or step.max_late_ms > 1000:
        f.append(f"client fell behind ({step.achieved_rate:,.0f}/s, {step.max_late_ms:,.0f} ms late)")
    if step.missing:
        f.append(f"{step.missing:,} orders without a result")
    growing = [g for g, l in step.lags.items() if l["grows"]]
    if growing:
        f.append("lag grows: " + ", ".join(growing))
    if step.committed_ms.get("count", 0) == 0 or step.committed_ms["p99"] > slo["committed_p99_ms"]:
        f.append(f"commit p99 {_p(step.committed_ms)} > {slo['committed_p99_ms']} ms")
    tick_limit = window_ms + slo["tick_to_pnl_over_window_p99_ms"]
    if step.tick_to_pnl_ms.get("count", 0) and step.tick_to_pnl_ms["p99"] > tick_limit:
        f.append(f"tick>P&L p99 {_p(step.tick_to_pnl_ms)} > {tick_limit} ms")
    pos = step.position_to_postgres_ms
    if pos.get("count", 0) and pos["p99"] > slo["position_to_postgres_p99_ms"]:
        f.append(f"position>Postgres p99 {_p(pos)} > {slo['position_to_postgres_p99_ms']} ms")
    if step.mode == "http":
        if step.accept_ms.get("count", 0) == 0 or step.accept_ms["p99"] > slo["accept_p99_ms"]:
            step.http_failures.append(f"accept p99 {_p(step.accept_ms)} > {slo['accept_p99_ms']} ms")
        if step.visible_ms.get("count", 0) == 0 or step.visible_ms["p99"] > slo["visible_p99_ms"]:
            step.http_failures.append(f"visible p99 {_p(step.visible_ms)} > {slo['visible_p99_ms']} ms")


def troughs(points: list[tuple[float, int]], period: float) -> list[tuple[float, int]]:
    """The least lag of each whole `period`-second span of (seconds, lag) points: right after each commit of
    a group that commits every `period` seconds."""
    if not points:
        return []
    t0 = points[0][0]
    spans: dict[int, tuple[float, int]] = {}
    for t, v in points:
        k = int((t - t0) // period)
        if k not in spans or v < spans[k][1]:
            spans[k] = (t, v)
    # a span is whole when the samples cover it (probes come about once a second: a 20 s window's last
    # sample is at about 19 s)
    covered = points[-1][0] - t0 + min(0.2 * period, 2.0)
    return [spans[k] for k in sorted(spans) if (k + 1) * period <= covered]


def lag_report(series: dict, slo: dict, commit_periods: dict[str, float] | None = None) -> dict:
    """Whether each group's lag grows over the step. Lag is what a group has not committed: a group that
    commits only every P seconds (the P&L job, at each checkpoint) shows a sawtooth of the records of one
    period, whatever it keeps up with. Its lag is judged on the troughs (the least lag of each P-second
    span, right after a commit), and only over at least two spans: a shorter step does not judge its lag
    (its latency target, tick -> P&L committed, still judges it)."""
    out = {}
    for group, points in series.items():
        period = (commit_periods or {}).get(group, 0)
        if period > 0:
            trend = troughs(points, period)
            trend = trend if len(trend) >= 2 else []
            s = (trend[-1][1] - trend[0][1]) / max(trend[-1][0] - trend[0][0], 1e-9) if trend else 0.0
        else:
            trend, s = points, slope(points)
        end = trend[-1][1] if trend else 0
        out[group] = {
            "start": points[0][1] if points else 0,
            "end": points[-1][1] if points else 0,
            "max": max((v for _, v in points), default=0),
            "slope_per_s": round(s, 1),
            "grows": bool(trend) and s > slo["lag_growth_per_s"] and end > slo["lag_floor_records"],
        }
        if period > 0:
            out[group]["commit_period_s"] = period
            if not trend:
                out[group]["judged"] = f"not judged: the step is shorter than two of its {period:g} s commit periods"
    return out


def commit_periods(cfg: Config) -> dict[str, float]:
    """Groups that commit their offsets only periodically, with the period (seconds)."""
    from brokerstream.clients.flinkjobs import pnl_setting

    return {"brokerstream-pnl": int(pnl_setting(cfg, "checkpoint.interval-ms")) / 1000}


# --- the run --------------------------------------------------------------------------------------------
def run(
    cfg: Config,
    *,
    rates: list[float] | None = None,
    search: Search | None = None,
    scale_step: int = 1,
    step_seconds: float = 30,
    tick_rate: float = 10_000,
    http_max: float = 2000,
    positions: int = 20_000,
    settle: float = 60,
    seed: int = 17,
    idle_seconds: float = 15,
    warmup_seconds: float = 10,
    ceiling_records: int = 2_000_000,
    stop_after_failures: int = 2,
    architecture: str = "streams",
    progress=print,
) -> SystemResult:
    from brokerstream.clients.flinkjobs import PNL_JOB, Flink
    from brokerstream.launcher.provision import default_stack
    from brokerstream.loadtest.bench import architectures
    from brokerstream.loadtest.bench.drain import open_prices
    from brokerstream.loadtest.bench.pnl import write_positions, write_positions_sql

    slo = yaml.safe_load(SLO_FILE.read_text())
    rates = rates or DEFAULT_RATES
    if search is not None:
        # every rung goes through the gateway, as members send orders, and is judged as the sustained
        # capacity is (the flow's targets of loadtest/slo.yaml); the members' accept and visible p99 are
        # recorded with each rung
        http_max = float("inf")
        next_rate = lambda steps: search.next_rate([(s.rate, s.sustained) for s in steps])  # noqa: E731
    else:
        ladder = iter(rates)
        next_rate = lambda steps: next(ladder, None)  # noqa: E731
    data = pgload.read(cfg)
    if not data.accounts:
        raise RuntimeError("no reference data: load it first, e.g. ./brokerstream refdata load --scale small")
    if not Flink(cfg.flink_url).live(PNL_JOB):
        raise RuntimeError(
            f"{PNL_JOB} is not running: the system is measured with every service on (./brokerstream up)"
        )
    window_ms = int(cfg.get("BS_PNL_WINDOW_MS") or 1000)
    periods = commit_periods(cfg)  # the P&L job commits its offsets at each checkpoint
    arch = architectures.of(architecture)
    streams = arch.name == "streams"
    if search is not None and not streams:
        raise ValueError("a capacity search runs through the gateway, which the baseline does not have")
    # The baseline has no gateway (the streams app's): every step writes into the orders topic, as the
    # gateway would. Its open positions live in its own table, where its price threads mark them.
    baseline_schema = None if streams else architectures.baseline_setting(cfg, "db.schema")

    def open_positions(close: bool = False) -> None:
        if streams:
            write_positions(cfg, data, positions, 0.3, seed, close=close)
        else:
            write_positions_sql(cfg, data, positions, 0.3, seed, baseline_schema, close=close)

    stack = default_stack(cfg)
    was_running = arch.running_apps(stack)
    arch.prepare(stack)
    if not stack.up([arch.app]):
        arch.restore(stack, was_running)
        raise RuntimeError(f"{arch.app} did not start")
    cpu = CpuGroups.of(cfg)
    run_id = f"{dt.datetime.now(dt.timezone.utc):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"
    tag = "sys" + uuid.uuid4().hex[:6]
    started = dt.datetime.now(dt.timezone.utc)

    ctx = multiprocessing.get_context("fork")
    tick_rates, stop_ticks = ctx.Queue(), ctx.Event()
    ticks = ctx.Process(target=_tick_process, args=(cfg, seed, tick_rate, stop_ticks, tick_rates), daemon=True)
    client = probe = None
    steps: list[StepResult] = []
    step_costs: list[tuple[int, cost.Cost]] = []
    idle = None
    kafka_ceiling = 0.0
    try:
        progress(f"[system] opening prices ({arch.app})")
        open_prices(cfg, data, seed, priced=arch.priced(cfg))
        if streams:
            wait_for_reference_data(cfg, data, progress)
        if positions:
            progress(
                f"[system] {positions:,} open positions for the "
                + ("P&L job" if streams else "baseline's price threads")
            )
            open_positions()
        # the stopped streams app's group only falls behind in a baseline run: its lag is not the system's
        groups = (
            list(GROUPS)
            if streams
            else [
                architectures.baseline_setting(cfg, "groups.orders"),
                architectures.baseline_setting(cfg, "groups.prices"),
                *(g for g in GROUPS if g != architectures.STREAMS_GROUP),
            ]
        )
        meter = cost.Meter(cfg, service_names(cfg))
        progress(f"[system] idle stack: {idle_seconds:.0f} s before any load (subtracted from each step's cost)")
        _wait_settled(cfg, groups, settle, floor=200)
        a = meter.read()
        time.sleep(idle_seconds)
        idle = cost.Cost.between(a, meter.read(), label="idle", unit="second", units=idle_seconds)
        if ceiling_records:
            progress(f"[system] Kafka's producer ceiling (ProducerPerformance, {ceiling_records:,} records)")
            from brokerstream.loadtest.bench.ceiling import measure

            kafka_ceiling = measure(cfg, records=ceiling_records, preexec=lambda: cpu.join("clients"))
            progress(f"[system] ceiling {kafka_ceiling:,.0f} records/s")
        if tick_rate > 0:
            ticks.start()
            cpu.place("clients", [ticks.pid])
        client = LoadClient(cfg, plan(cfg, data, seed=seed, trace_one_in=100), cpu)
        probe = StackProbe(cfg, service_names(cfg), groups=groups)
        probe.start()
        if warmup_seconds:
            if streams:
                progress(
                    f"[system] warm-up: {warmup_seconds:.0f} s through the gateway"
                    + ("" if search else f" and {warmup_seconds:.0f} s into Kafka")
                )
                client.step("http", min(200.0, http_max), warmup_seconds, tag + "w1", settle)
            else:
                progress(f"[system] warm-up: {warmup_seconds:.0f} s into Kafka")
            if search is None:  # a search's rungs all go through the gateway
                client.step("kafka", 1000.0, warmup_seconds, tag + "w2", settle)
        failures_in_a_row = 0
        i = 0
        while (rate := next_rate(steps)) is not None:
            i += 1
            mode = "http" if streams and rate <= http_max else "kafka"
            step_tag = f"{tag}s{i}"
            _wait_settled(cfg, [arch.orders_group(cfg), "connect-sink-orders"], settle)
            progress(f"[system] step {i}: {rate:,.0f} orders/s for {step_seconds:.0f} s ({mode})")
            offsets0 = log_end_total(cfg)
            tick_cpu0 = _cpu_seconds(ticks.pid) if tick_rate > 0 else 0.0
            revalued0, m0 = arch.revalued(cfg), time.monotonic()
            t0 = dt.datetime.now(dt.timezone.utc)
            reading0 = meter.read()
            answer = client.step(mode, rate, step_seconds, step_tag, settle)
            # the step's window: from its first order until its last result (the client waits for them)
            step_cost = cost.Cost.between(
                reading0, meter.read(), label=f"step {i}", unit="order", units=max(answer["sent"], 1)
            )
            pnl_per_s = (arch.revalued(cfg) - revalued0) / max(time.monotonic() - m0, 1e-9)
            if not streams:
                # the watcher reads the P&L job's output, which is not the baseline's work
                answer["pnl_ms"] = {name: {"count": 0} for name in answer["pnl_ms"]}
            t_sent = t0 + dt.timedelta(seconds=answer["send_seconds"])
            tick_cpu = (_cpu_seconds(ticks.pid) - tick_cpu0) if tick_rate > 0 else 0.0
            offsets = log_end_total(cfg) - offsets0
            window = probe.window(t0, t_sent)
            results = answer["results"]["accepted"] + answer["results"]["rejected"]
            orders_pg, positions_pg, pg_hop, unsynced = postgres_lags(
                cfg, step_tag, results, t0, t_sent, answer["samples"], settle
            )
            hops = dict(answer["hops_ms"])
            hops["postgres"] = pg_hop
            for name, pnl_hop in answer["pnl_ms"].items():
                hops[name] = pnl_hop
            elapsed = (dt.datetime.now(dt.timezone.utc) - t0).total_seconds()
            step = StepResult(
                index=i,
                mode=mode,
                rate=rate,
                seconds=step_seconds,
                achieved_rate=answer["achieved_rate"],
                sent=answer["sent"],
                missing=answer["results"]["missing"],
                duplicates=answer["results"]["duplicates"],
                errors=answer["errors"],
                outcomes={
                    "accepted": answer["results"]["accepted"],
                    "rejected": answer["results"]["rejected"],
                    "unsynced_in_postgres": unsynced,
                },
                accept_ms=answer["accept_ms"],
                visible_ms=answer["visible_ms"],
                committed_ms=answer["committed_ms"],
                tick_to_pnl_ms=answer["pnl_ms"]["tick_to_pnl_committed"],
                order_to_postgres_ms=orders_pg,
                position_to_postgres_ms=positions_pg,
                hops_ms=hops,
                cpu_cores=window.cpu_cores,
                rss_mb={k: v / 2**20 for k, v in window.rss_max.items()},
                client_cpu_cores=answer["client_cpu_seconds"] / max(answer["send_seconds"], 1e-9),
                ticks_cpu_cores=tick_cpu / max(elapsed, 1e-9),
                max_late_ms=answer["max_late_ms"],
                offsets_per_order=offsets / max(answer["sent"], 1),
                lags=lag_report(window.lags, slo, periods),
                sampled_ms=summary([(s[2] - s[1]) / 1000.0 for s in answer["samples"]]),
                pnl_calcs_per_s=pnl_per_s,
                cost_us=step_cost.us_per_unit(idle),
                jit_us=step_cost.jit_us_per_unit(idle),
                per_order={k: step_cost.per_unit(k) for k in ("requests", "records", "bytes", "rows")},
                kernel_cores=step_cost.kernel_stack_cores,
                cost_check=cost.check_adds_up(step_cost),
            )
            step_costs.append((i, step_cost))
            judge(step, slo, window_ms)
            steps.append(step)
            progress(
                "[system] " + SystemResult(run_id, tick_rate, positions, window_ms, 0, [step], {}, arch.name).lines()[2]
            )
            failures_in_a_row = 0 if step.sustained else failures_in_a_row + 1
            if search is None and failures_in_a_row >= stop_after_failures:
                progress(f"[system] {stop_after_failures} steps in a row not sustained: stopping")
                break
    finally:
        if client:
            client.close()
        if probe:
            probe.stop()
        if tick_rate > 0 and ticks.is_alive():
            stop_ticks.set()
            ticks.join(30)
        try:
            if positions:
                open_positions(close=True)
        finally:
            arch.restore(stack, was_running)
    settings = {
        "rates": [s.rate for s in steps] if search else rates,
        "search": asdict(search) if search else None,
        "step_seconds": step_seconds,
        "tick_rate": tick_rate,
        "http_max": http_max,
        "positions": positions,
        "settle": settle,
        "seed": seed,
        "slo": slo,
        "architecture": arch.name,
    }
    result = SystemResult(run_id, tick_rate, positions, window_ms, kafka_ceiling, steps, settings, arch.name)
    store(cfg, result, started, probe, [(i, c, idle) for i, c in step_costs], scale_step=scale_step)
    return result


def _cpu_seconds(pid: int) -> float:
    import psutil

    try:
        t = psutil.Process(pid).cpu_times()
        return t.user + t.system
    except psutil.NoSuchProcess:
        return 0.0


# --- ClickHouse -----------------------------------------------------------------------------------------
def step_row(run_id: str, s: StepResult) -> list:
    def v(summary: dict, key: str) -> float:
        return float(summary.get(key, float("nan"))) if summary and summary.get("count") else float("nan")

    return [
        run_id,
        s.index,
        s.mode,
        s.rate,
        s.achieved_rate,
        s.seconds,
        s.sent,
        s.outcomes["accepted"] + s.outcomes["rejected"],
        s.missing,
        v(s.accept_ms, "p50"),
        v(s.accept_ms, "p99"),
        v(s.visible_ms, "p50"),
        v(s.visible_ms, "p99"),
        v(s.committed_ms, "p50"),
        v(s.committed_ms, "p99"),
        v(s.tick_to_pnl_ms, "p50"),
        v(s.tick_to_pnl_ms, "p99"),
        v(s.order_to_postgres_ms, "p50"),
        v(s.order_to_postgres_ms, "p99"),
        v(s.position_to_postgres_ms, "p50"),
        v(s.position_to_postgres_ms, "p99"),
        ",".join(g for g, l in s.lags.items() if l["grows"]),
        s.client_cpu_cores,
        sum(s.cpu_cores.values()),
        s.offsets_per_order,
        int(s.sustained),
        int(s.gateway_ok),
        "; ".join(s.failures + s.http_failures),
        json.dumps(asdict(s), default=str),
    ]


STEP_COLUMNS = [
    "run_id",
    "step",
    "mode",
    "offered_rate",
    "achieved_rate",
    "seconds",
    "sent",
    "results",
    "missing",
    "accept_p50_ms",
    "accept_p99_ms",
    "visible_p50_ms",
    "visible_p99_ms",
    "committed_p50_ms",
    "committed_p99_ms",
    "tick_pnl_p50_ms",
    "tick_pnl_p99_ms",
    "order_pg_p50_ms",
    "order_pg_p99_ms",
    "position_pg_p50_ms",
    "position_pg_p99_ms",
    "lag_growing",
    "client_cpu_cores",
    "stack_cpu_cores",
    "offsets_per_order",
    "sustained",
    "gateway_ok",
    "verdict",
    "detail",
]


def hop_rows(run_id: str, s: StepResult) -> list[list]:
    rows = []
    for path, hops in (("order", ORDER_HOPS), ("tick", TICK_HOPS)):
        for h in hops:
            r = s.hops_ms.get(h) or {}
            if r.get("count"):
                rows.append(
                    [
                        run_id,
                        s.index,
                        path,
                        h,
                        "computing" if h in COMPUTING else "waiting",
                        r["count"],
                        r["mean"],
                        r.get("p50", float("nan")),
                        r.get("p99", float("nan")),
                    ]
                )
    return rows


def store(
    cfg: Config,
    result: SystemResult,
    started: dt.datetime,
    probe: StackProbe | None,
    costs: list | None = None,
    scale_step: int = 1,
) -> None:
    from brokerstream.metrics import store as chstore
    from brokerstream.metrics.runs import new_record

    record = new_record(
        cfg, "system", "steps", json.dumps(result.settings, default=str), result.settings["seed"], scale_step
    )
    record.run_id, record.started, record.ended = result.run_id, started, dt.datetime.now(dt.timezone.utc)
    client = chstore.connect(cfg)
    chstore.apply_ddl(client)
    client.insert("runs", [list(asdict(record).values())], column_names=list(asdict(record)))
    if result.steps:
        client.insert("system_steps", [step_row(result.run_id, s) for s in result.steps], column_names=STEP_COLUMNS)
        hops = [r for s in result.steps for r in hop_rows(result.run_id, s)]
        if hops:
            client.insert(
                "hop_samples",
                hops,
                column_names=["run_id", "step", "path", "hop", "kind", "count", "mean_ms", "p50_ms", "p99_ms"],
            )
    if probe:
        if probe.process_rows:
            client.insert(
                "process_samples",
                [[result.run_id, *r] for r in probe.process_rows],
                column_names=["run_id", "ts", "service", "cpu_seconds", "rss_bytes"],
            )
        if probe.lag_rows:
            client.insert(
                "lag_samples",
                [[result.run_id, *r] for r in probe.lag_rows],
                column_names=["run_id", "ts", "group_name", "lag"],
            )
    if costs:
        client.insert(
            "cost_lines",
            [r for i, c, idle in costs for r in cost.rows(result.run_id, i, "step", c, idle)],
            column_names=cost.COST_COLUMNS,
        )
    figures = {
        "sustained_capacity": result.sustained_capacity,
        "gateway_capacity": result.gateway_capacity,
        "kafka_ceiling": result.kafka_ceiling,
    }
    if result.kafka_ceiling:
        figures["capacity_to_ceiling"] = result.sustained_capacity / result.kafka_ceiling
    client.insert(
        "run_results",
        [[result.run_id, k, float(v)] for k, v in figures.items()],
        column_names=["run_id", "name", "value"],
    )


def write(result: SystemResult, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {k: v for k, v in asdict(result).items()}
    body["sustained_capacity"] = result.sustained_capacity
    body["gateway_capacity"] = result.gateway_capacity
    path.write_text(json.dumps(body, indent=2, default=str))
