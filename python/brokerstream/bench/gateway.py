"""Gateway latency at a fixed request rate.

    ./brokerstream bench gateway [--rate 1000] [--duration 30]

Members (with the API keys the reference data generator derives) place single market orders at the
given rate from an open-loop client (the send schedule does not wait for answers); each order's
result is then long-polled. Reports the accept latency (POST -> 202: written to Kafka) and the time
until the result is visible (POST -> result via GET /orders/{id}).
"""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..config import Config
from ..gen import pgload
from ..gen.refdata import api_key
from .stats import summary


@dataclass
class GatewayResult:
    rate: float
    duration: float
    achieved_rate: float
    accept_ms: dict
    visible_ms: dict
    errors: dict
    statuses: dict

    def lines(self) -> list[str]:
        a, v = self.accept_ms, self.visible_ms
        return [f"{self.accept_ms['count']:,} orders at {self.achieved_rate:,.0f}/s (asked {self.rate:,.0f}/s "
                f"for {self.duration:.0f} s); errors: {self.errors or 'none'}",
                f"accept (POST -> 202):          p50 {a['p50']:.1f} ms  p95 {a['p95']:.1f} ms  p99 {a['p99']:.1f} ms",
                f"result visible (POST -> GET):  p50 {v['p50']:.1f} ms  p95 {v['p95']:.1f} ms  p99 {v['p99']:.1f} ms",
                f"outcomes: {self.statuses}"]


def plan(cfg: Config, rate: float, duration: float) -> dict:
    data = pgload.read(cfg)
    equities = [i.instrument_id for i in data.instruments if i.instrument_type == "EQUITY" and i.status == "ACTIVE"]
    active = {m.member_id for m in data.members if m.status == "ACTIVE"}
    clients = []
    for member in sorted(active):
        accounts = [a.account_id for a in data.accounts if a.member_id == member and a.status == "ACTIVE"]
        if accounts:
            clients.append({"key": api_key(data.seed, member), "accounts": accounts, "instruments": equities[:50]})
    if not clients:
        raise RuntimeError("no active member with an active account: load reference data first")
    return {"url": cfg.gateway_url, "rate": rate, "duration": duration, "clients": clients}


def run(cfg: Config, *, rate: float = 1000, duration: float = 30) -> GatewayResult:
    proc = subprocess.run([sys.executable, "-m", "brokerstream.bench.gateway_load"],
                          input=json.dumps(plan(cfg, rate, duration)), capture_output=True, text=True,
                          timeout=duration + 180)
    if proc.returncode != 0:
        raise RuntimeError(f"load generator failed: {proc.stderr[-2000:]}")
    out = json.loads(proc.stdout)
    return GatewayResult(rate=rate, duration=duration, achieved_rate=out["sent"] / out["send_seconds"],
                         accept_ms=summary(out["accept_ms"]), visible_ms=summary(out["visible_ms"]),
                         errors=out["errors"], statuses=out["statuses"])


def write(result: GatewayResult, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result.__dict__, indent=2))
