"""The two architectures the lab compares, as the benches need them: which app decides orders, its
consumer group, where it keeps the latest prices, how many P&L calculations it has done, and how to
stop the other one for a run and put things back after.

- `streams`: the stream-native system (streams app + the Flink P&L job), the default.
- `baseline`: the seed thesis's database-centric monolith (baseline/), state and work in Postgres.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import psycopg
from confluent_kafka import Consumer, TopicPartition

from brokerstream.clients.kafka_clients import client_conf
from brokerstream.common.baseline_settings import BASELINE_DEFAULTS, baseline_setting, read_properties
from brokerstream.common.config import Config

APPS = ("streams", "baseline")
STREAMS_GROUP = "brokerstream-orders"  # the streams app's application id
# the launcher's metrics.fetcher.update-interval (1 s) and time for the refresh it sets off to land
METRICS_REFRESH_S = 1.5
NAMES = APPS
__all__ = ["BASELINE_DEFAULTS", "baseline_setting", "read_properties"]  # also read from here


def end_offsets(cfg: Config, topic: str) -> dict[int, int]:
    consumer = Consumer(client_conf(cfg, **{"group.id": "bs-offsets", "enable.auto.commit": False}))
    try:
        parts = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in parts}
    finally:
        consumer.close()


def commit_to_end(cfg: Config, group: str, topic: str) -> None:
    """Moves a stopped group to the end of a topic: a run starts with what it produces, not history."""
    ends = end_offsets(cfg, topic)
    consumer = Consumer(client_conf(cfg, **{"group.id": group, "enable.auto.commit": False}))
    try:
        consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in ends.items()], asynchronous=False)
    finally:
        consumer.close()


@dataclass(frozen=True)
class Architecture:
    name: str

    @property
    def app(self) -> str:
        return self.name

    @property
    def other(self) -> str:
        return next(a for a in APPS if a != self.name)

    @property
    def revalued_survives_restart(self) -> bool:
        # streams: P&L records in a topic; baseline: a counter of the process, zero at each start
        return self.name == "streams"

    def orders_group(self, cfg: Config) -> str:
        return STREAMS_GROUP if self.name == "streams" else baseline_setting(cfg, "groups.orders")

    def running_apps(self, stack) -> set[str]:
        return {a for a in APPS if stack.layout.pidfile(a).live_pid() is not None}

    def prepare(self, stack) -> None:
        """The other order flow stopped (both would decide every order); the baseline's groups moved to
        the end of their topics, as the streams app's group is after any earlier run."""
        stack.down([self.other])
        if self.name == "baseline":
            stack.down(["baseline"])
            commit_to_end(stack.cfg, baseline_setting(stack.cfg, "groups.orders"), "orders")
            commit_to_end(stack.cfg, baseline_setting(stack.cfg, "groups.prices"), "price-ticks")

    def priced(self, cfg: Config):
        """A function of the config giving the equities priced so far; None: the streams app's
        prices.latest, which the drain reads itself."""
        if self.name == "streams":
            return None
        schema = baseline_setting(cfg, "db.schema")

        def priced(c: Config) -> set[str]:
            with psycopg.connect(c.postgres_dsn()) as conn:
                return {r[0] for r in conn.execute(f"SELECT instrument_id FROM {schema}.mono_latest_prices")}

        return priced

    def revalued(self, cfg: Config) -> int:
        """P&L calculations (position revaluations) so far: the P&L job's own counter, or the
        baseline's."""
        if self.name == "streams":
            from brokerstream.clients.flinkjobs import PNL_JOB, Flink

            flink = Flink(cfg.flink_url, timeout=10)
            job = flink.live(PNL_JOB)
            if job is None:
                return 0
            # The JobManager answers from its metrics cache and refreshes it after answering, at most once per
            # metrics.fetcher.update-interval: a single ask reads what the previous one set off. So ask, wait
            # out that refresh, ask again: the count as of the first ask. (The REST API also lists a counter
            # only once its fetcher has seen it.)
            flink.metric_sum(job.job_id, "revalue", ["positionsRevalued"])
            time.sleep(METRICS_REFRESH_S)
            return int(flink.metric_sum(job.job_id, "revalue", ["positionsRevalued"]).get("positionsRevalued", 0))
        from brokerstream.launcher.layout import Layout
        from brokerstream.launcher.services.baseline import Baseline

        metrics = Baseline(cfg, Layout(cfg)).metrics()
        return metrics["positions_revalued"] if metrics else 0

    def decided_records(self, cfg: Config) -> set[tuple[int, int]]:
        """The `orders` records (partition, offset) this architecture decided by its own ledger. Only
        the baseline keeps one (mono_orders); the streams app's is its changelog, read otherwise."""
        if self.name == "streams":
            raise ValueError("the streams app's decisions are its results, not a ledger")
        schema = baseline_setting(cfg, "db.schema")
        with psycopg.connect(cfg.postgres_dsn()) as conn:
            if conn.execute("SELECT to_regclass(%s)", (f"{schema}.mono_orders",)).fetchone()[0] is None:
                return set()  # the baseline never ran here
            return {
                (p, o) for p, o in conn.execute(f"SELECT source_partition, source_offset FROM {schema}.mono_orders")
            }

    def restore(self, stack, was_running: set[str]) -> None:
        """The order flows as they were before the run."""
        stop = [a for a in APPS if a not in was_running]
        if stop:
            stack.down(stop)
        start = [a for a in APPS if a in was_running]
        for app in start:
            if app != self.name:
                # The orders written for this run were decided here: the other flow must not decide them
                # again when it comes back (two results per order).
                commit_to_end(stack.cfg, of(app).orders_group(stack.cfg), "orders")
        if start:
            stack.up(start)


def of(name: str) -> Architecture:
    if name not in NAMES:
        raise ValueError(f"unknown architecture {name!r}; known: {', '.join(NAMES)}")
    return Architecture(name)
