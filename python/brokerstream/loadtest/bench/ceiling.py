"""Kafka's own producer ceiling on this machine: the broker's ProducerPerformance tool against the
stack's broker, with the settings of issue #16's measurement (150-byte records, acks=all, idempotent,
lz4, linger 5 ms, 8 partitions). What any flow writing to Kafka here works under."""

from __future__ import annotations

import re
import subprocess
import time

from confluent_kafka.admin import AdminClient, NewTopic

from brokerstream.clients.kafka_clients import TOOLS, client_conf
from brokerstream.clients.kafka_security import java_client_file
from brokerstream.common.config import Config
from brokerstream.launcher.layout import Layout

TOPIC = "perf.ceiling"
_RESULT = re.compile(r"(\d+) records sent, ([\d.]+) records/sec")


def parse(output: str) -> float:
    """records/s from the tool's final summary line (the last match: it prints progress lines too)."""
    found = _RESULT.findall(output)
    if not found:
        raise RuntimeError(f"ProducerPerformance printed no summary:\n{output[-2000:]}")
    return float(found[-1][1])


def measure(
    cfg: Config, *, records: int = 2_000_000, record_size: int = 150, partitions: int = 8, preexec=None
) -> float:
    admin = AdminClient(client_conf(cfg))
    admin.create_topics([NewTopic(TOPIC, partitions, 1)])[TOPIC].exception(timeout=30)  # None when it exists
    time.sleep(1)
    try:
        layout = Layout(cfg)
        login_file = java_client_file(cfg, TOOLS)  # the secure profile's login, kept off the command line
        login = ["--producer.config", str(login_file)] if login_file else []
        proc = subprocess.run(
            [
                cfg.java(),
                "-Xmx512m",
                "-cp",
                f"{layout.kafka_lib}/*",
                "org.apache.kafka.tools.ProducerPerformance",
                "--topic",
                TOPIC,
                "--num-records",
                str(records),
                "--record-size",
                str(record_size),
                "--throughput",
                "-1",
                "--producer-props",
                f"bootstrap.servers={cfg.kafka_bootstrap}",
                "acks=all",
                "enable.idempotence=true",
                "compression.type=lz4",
                "linger.ms=5",
                *login,
            ],
            capture_output=True,
            text=True,
            timeout=600,
            preexec_fn=preexec,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"ProducerPerformance failed:\n{proc.stderr[-2000:]}")
        return parse(proc.stdout)
    finally:
        admin.delete_topics([TOPIC])[TOPIC].exception(timeout=30)
