"""What the stack does while a benchmark step runs: every second each service's CPU seconds and RSS
and each consumer group's lag; at the step's edges the log-end offsets of every topic (records
written, transaction markers included)."""

from __future__ import annotations

import datetime as dt
import threading
import time
import uuid
from dataclasses import dataclass, field

import psutil
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

from brokerstream.clients.kafka_clients import client_conf
from brokerstream.common.config import Config
from brokerstream.common.topics import POSITIONS
from brokerstream.launcher.layout import Layout
from brokerstream.metrics.collector import GROUPS, group_lags, process_usage


@dataclass
class Window:
    """One step's view of the probe's samples."""

    seconds: float
    cpu_cores: dict[str, float]
    rss_max: dict[str, int]
    lags: dict[str, list[tuple[float, int]]] = field(default_factory=dict)


def slope(points: list[tuple[float, int]]) -> float:
    """Least-squares slope (records per second) of (seconds, lag) points; 0 for fewer than 3."""
    if len(points) < 3:
        return 0.0
    n = len(points)
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    var = sum((t - mx) ** 2 for t, _ in points)
    return sum((t - mx) * (v - my) for t, v in points) / var if var else 0.0


class StackProbe(threading.Thread):
    def __init__(self, cfg: Config, services: list[str], every: float = 1.0, groups=GROUPS):
        super().__init__(daemon=True, name="stack-probe")
        self.cfg, self.services, self.every, self.groups = cfg, services, every, groups
        self.process_rows: list[list] = []  # ts, service, cpu seconds (cumulative), rss
        self.lag_rows: list[list] = []  # ts, group, lag
        self._halt = threading.Event()
        self._procs: dict[int, psutil.Process] = {}
        self._lock = threading.Lock()
        layout = Layout(cfg)
        self._pids = {name: pid for name in services if (pid := layout.pidfile(name).live_pid())}

    def run(self) -> None:
        admin = AdminClient(client_conf(self.cfg))
        consumer = Consumer(client_conf(self.cfg, **{"group.id": f"probe-{uuid.uuid4().hex}"}))
        try:
            while not self._halt.is_set():
                t0 = time.monotonic()
                now = dt.datetime.now(dt.timezone.utc)
                procs = [[now, name, *process_usage(self._procs, pid)] for name, pid in self._pids.items()]
                lags = [[now, g, lag] for g, lag in group_lags(admin, consumer, self.groups).items()]
                with self._lock:
                    self.process_rows += procs
                    self.lag_rows += lags
                self._halt.wait(max(0.0, self.every - (time.monotonic() - t0)))
        finally:
            consumer.close()

    def stop(self) -> None:
        self._halt.set()
        self.join(15)

    def window(self, start: dt.datetime, end: dt.datetime) -> Window:
        with self._lock:
            procs = [r for r in self.process_rows if start <= r[0] <= end]
            lags = [r for r in self.lag_rows if start <= r[0] <= end]
        cpu, rss = {}, {}
        for name in self._pids:
            rows = [r for r in procs if r[1] == name]
            if len(rows) >= 2:
                span = (rows[-1][0] - rows[0][0]).total_seconds()
                cpu[name] = (rows[-1][2] - rows[0][2]) / span if span > 0 else 0.0
                rss[name] = max(r[3] for r in rows)
        series: dict[str, list[tuple[float, int]]] = {}
        for ts, group, lag in lags:
            series.setdefault(group, []).append(((ts - start).total_seconds(), lag))
        return Window((end - start).total_seconds(), cpu, rss, series)


ORDER_FLOW_TOPICS = ("orders", "order-results", POSITIONS)


def order_flow_topic(name: str, app_id: str = "brokerstream-orders") -> bool:
    """The topics an order writes to: the flow's own and the streams app's changelogs."""
    return name in ORDER_FLOW_TOPICS or (name.startswith(app_id + "-") and name.endswith("-changelog"))


def log_end_total(cfg: Config, topics=order_flow_topic) -> int:
    """Sum of the log-end offsets of the chosen topics' partitions: what was written to them so far
    (transaction markers take offsets too)."""
    consumer = Consumer(client_conf(cfg, **{"group.id": f"probe-{uuid.uuid4().hex}"}))
    try:
        meta = consumer.list_topics(timeout=10)
        parts = [TopicPartition(t, p) for t, tm in meta.topics.items() if topics(t) for p in tm.partitions]
        return sum(consumer.get_watermark_offsets(tp, timeout=10)[1] for tp in parts)
    finally:
        consumer.close()
