"""Samples a run once a second: every service's CPU seconds and RSS, consumer lag per group, per-stage
counts (orders accepted and rejected, P&L calculations), and latency samples (order -> result, tick ->
P&L). Everything is kept in memory and written to the store when the run ends (`write`), so the store
is opened once, by the process that owns it."""

from __future__ import annotations

import datetime as dt
import io
import threading
import uuid

import fastavro
import psutil
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

from brokerstream.clients.kafka_clients import client_conf
from brokerstream.clients.schemas import load_schema
from brokerstream.common.config import Config

GROUPS = ["brokerstream-orders", "brokerstream-pnl", "connect-sink-orders", "connect-sink-marks"]


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return (result >> 1) ^ -(result & 1), i
        shift += 7


STATUS_COUNTS = ("orders_accepted", "orders_rejected", "orders_cancelled", "orders_expired")  # by OrderStatus symbol


def result_status(value: bytes) -> int:
    """0 ACCEPTED, 1 REJECTED, 2 CANCELLED, 3 EXPIRED: read from an OrderResult's bytes without decoding the rest."""
    i = 5
    for _ in range(4):  # order_id, member_id, account_id, instrument_id
        length, i = _varint(value, i)
        i += length
    _, i = _varint(value, i)  # side
    _, i = _varint(value, i)  # quantity
    status, _ = _varint(value, i)
    return status


def process_usage(procs: dict[int, psutil.Process], pid: int) -> tuple[float, int]:
    """CPU seconds (cumulative) and RSS of a service: its process and everything it started."""
    cpu, rss = 0.0, 0
    try:
        root = procs.setdefault(pid, psutil.Process(pid))
        for p in [root] + root.children(recursive=True):
            try:
                t = p.cpu_times()
                cpu += t.user + t.system + t.children_user + t.children_system
                rss += p.memory_info().rss
            except psutil.NoSuchProcess:
                pass
    except psutil.NoSuchProcess:
        pass
    return cpu, rss


def group_lags(admin: AdminClient, consumer: Consumer | None = None, groups=GROUPS) -> dict[str, int]:
    """Records each consumer group has not committed yet, summed over its partitions. One OffsetFetch per
    group (the client lists one group per request) and one ListOffsets for all their partitions: a probe
    that asked each partition's end apart sent the broker about 190 requests a second."""
    from confluent_kafka import ConsumerGroupTopicPartitions
    from confluent_kafka import TopicPartition as Tp
    from confluent_kafka.admin import OffsetSpec

    committed: dict[str, list] = {}
    for group in groups:
        try:
            future = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group]
            committed[group] = [tp for tp in future.result(timeout=5).topic_partitions or [] if tp.offset >= 0]
        except Exception:
            continue
    wanted = {(tp.topic, tp.partition) for parts in committed.values() for tp in parts}
    ends: dict[tuple[str, int], int] = {}
    if wanted:
        try:
            futures = admin.list_offsets({Tp(t, p): OffsetSpec.latest() for t, p in wanted}, request_timeout=5)
            for tp, future in futures.items():
                try:
                    ends[(tp.topic, tp.partition)] = future.result(timeout=5).offset
                except Exception:
                    pass
        except Exception:
            return {}
    return {
        group: sum(
            max(0, ends[(tp.topic, tp.partition)] - tp.offset) for tp in parts if (tp.topic, tp.partition) in ends
        )
        for group, parts in committed.items()
    }


def _ms(value) -> float:
    return value.timestamp() * 1000 if isinstance(value, dt.datetime) else float(value)


class Collector:
    def __init__(self, cfg: Config, run_id: str, services: list[str], every: float = 1.0, sample_one_in: int = 20):
        self.cfg, self.run_id, self.services, self.every, self.one_in = cfg, run_id, services, every, sample_one_in
        self.process_rows: list[list] = []
        self.stage_rows: list[list] = []
        self.lag_rows: list[list] = []
        self.latency_rows: list[list] = []
        self.counts = dict.fromkeys(STATUS_COUNTS, 0)
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._sample_loop, daemon=True),
            threading.Thread(target=self._results_loop, daemon=True),
            threading.Thread(target=self._pnl_loop, daemon=True),
        ]
        self._procs: dict[int, psutil.Process] = {}

    def start(self) -> "Collector":
        for t in self._threads:
            t.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(15)

    # --- processes, lag, stage counters ------------------------------------------------------------
    def _pids(self) -> dict[str, int]:
        from brokerstream.launcher.layout import Layout

        layout = Layout(self.cfg)
        return {name: pid for name in self.services if (pid := layout.pidfile(name).live_pid())}

    def _usage(self, pid: int) -> tuple[float, int]:
        return process_usage(self._procs, pid)

    def _lags(self, admin: AdminClient, consumer: Consumer) -> dict[str, int]:
        return group_lags(admin, consumer)

    def _pnl_calculations(self) -> float | None:
        try:
            from brokerstream.clients.flinkjobs import PNL_JOB, Flink

            flink = Flink(self.cfg.flink_url, timeout=5)
            job = flink.live(PNL_JOB)
            return flink.metric_sum(job.job_id, "revalue", ["pnlCalculations"])["pnlCalculations"] if job else None
        except Exception:
            return None

    def _sample_loop(self) -> None:
        admin = AdminClient(client_conf(self.cfg))
        consumer = Consumer(client_conf(self.cfg, **{"group.id": f"collector-{uuid.uuid4().hex}"}))
        try:
            while not self._stop.is_set():
                now = dt.datetime.now(dt.timezone.utc)
                for service, pid in self._pids().items():
                    cpu, rss = self._usage(pid)
                    self.process_rows.append([self.run_id, now, service, cpu, rss])
                for group, lag in self._lags(admin, consumer).items():
                    self.lag_rows.append([self.run_id, now, group, lag])
                for stage, total in dict(self.counts).items():
                    self.stage_rows.append([self.run_id, now, stage, total])
                pnl = self._pnl_calculations()
                if pnl is not None:
                    self.stage_rows.append([self.run_id, now, "pnl_calculations", int(pnl)])
                self._stop.wait(self.every)
        finally:
            consumer.close()

    # --- topics: outcomes and latencies ------------------------------------------------------------
    def _tail(self, topic: str, handle) -> None:
        c = Consumer(
            client_conf(
                self.cfg,
                **{
                    "group.id": f"collector-{uuid.uuid4().hex}",
                    "isolation.level": "read_committed",
                    "enable.auto.commit": False,
                },
            )
        )
        try:
            meta = c.list_topics(topic, timeout=10).topics[topic]
            c.assign(
                [
                    TopicPartition(topic, p, c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1])
                    for p in meta.partitions
                ]
            )
            n = 0
            while not self._stop.is_set():
                for msg in c.consume(5000, 0.2):
                    if msg.error() or msg.value() is None:
                        continue
                    n += 1
                    handle(msg, n % self.one_in == 0)
        finally:
            c.close()

    def _results_loop(self) -> None:
        schema = fastavro.parse_schema(load_schema("OrderResult"))

        def handle(msg, sample: bool) -> None:
            value = msg.value()
            self.counts[STATUS_COUNTS[result_status(value)]] += 1
            if sample:
                r = fastavro.schemaless_reader(io.BytesIO(value[5:]), schema)
                self.latency_rows.append(
                    [self.run_id, r["processed_ts"], "order_to_result", _ms(r["processed_ts"]) - _ms(r["client_ts"])]
                )

        self._tail("order-results", handle)

    def _pnl_loop(self) -> None:
        schema = fastavro.parse_schema(load_schema("EquityMarks"))

        def handle(msg, sample: bool) -> None:
            if sample:
                v = fastavro.schemaless_reader(io.BytesIO(msg.value()[5:]), schema)
                if v["first_tick_ts"] is not None:
                    now = dt.datetime.now(dt.timezone.utc)
                    self.latency_rows.append([self.run_id, now, "tick_to_pnl", _ms(now) - _ms(v["first_tick_ts"])])

        self._tail("pnl.equity-marks", handle)

    # --- the store ---------------------------------------------------------------------------------
    def write(self, client) -> None:
        tables = {
            "process_samples": (self.process_rows, ["run_id", "ts", "service", "cpu_seconds", "rss_bytes"]),
            "stage_samples": (self.stage_rows, ["run_id", "ts", "stage", "total"]),
            "lag_samples": (self.lag_rows, ["run_id", "ts", "group_name", "lag"]),
            "latency_samples": (self.latency_rows, ["run_id", "ts", "metric", "value_ms"]),
        }
        for table, (rows, columns) in tables.items():
            if rows:
                client.insert(table, rows, column_names=columns)
