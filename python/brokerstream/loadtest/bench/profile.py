"""Where a JVM's stream threads spend their time, from a Java Flight Recorder file.

Each execution sample of a stream thread is put in the first category whose marker appears in its
stack (most specific first), so the shares add up to 100 %.
"""

from __future__ import annotations

import collections
import re
import subprocess
from pathlib import Path

CATEGORIES = [
    ("option pricing", "io.brokerstream.pricing"),
    ("reference data lookups", "StoreReferenceData"),
    ("decision logic", "OrderDecider.decide"),
    ("output: Avro encoding", "AvroCodec.encode"),
    ("output: producer send", "RecordCollectorImpl.send"),
    ("member state stores", "OrderProcessor.process"),
    ("results table for queries", "KTableSource"),
    ("input: deserialization", "RecordDeserializer"),
    ("consumer poll", "KafkaConsumer.poll"),
    ("commit (transactions, cache flush)", "commit"),
    ("metrics", "Sensor"),
    ("task scheduling and record queues", "StreamThread.run"),
]


def breakdown(jfr: Path, thread_marker: str = "StreamThread") -> tuple[int, list[tuple[str, float]]]:
    text = subprocess.run(
        ["jfr", "print", "--stack-depth", "256", "--events", "jdk.ExecutionSample", str(jfr)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    counts: collections.Counter = collections.Counter()
    total = 0
    for event in text.split("jdk.ExecutionSample")[1:]:
        thread = re.search(r'sampledThread = "([^"]+)"', event)
        if not thread or thread_marker not in thread.group(1) or "producer" in thread.group(1):
            continue
        frames = re.findall(r"^\s+([\w.$<>]+)\(", event, re.M)
        total += 1
        for name, marker in CATEGORIES:
            if any(marker in f for f in frames):
                counts[name] += 1
                break
        else:
            counts["other"] += 1
    return total, [(name, 100.0 * c / total) for name, c in counts.most_common()] if total else []
