"""A run's record: what ran, on what, with which settings and code, under one id; every stored run
(load runs and benchmarks) starts from one."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

from brokerstream.common.config import Config


@dataclass
class RunRecord:
    run_id: str
    kind: str
    shape: str
    started: dt.datetime
    ended: dt.datetime
    scale_step: int
    partitions: int
    stream_threads: int
    instances: int
    flink_parallelism: int
    vcpus: float
    memory_gb: float
    instance_type: str
    heap_sizes: str
    workload: str
    seed: int
    code_version: str
    config: str


def code_version(root: Path) -> str:
    try:
        rev = subprocess.run(
            ["git", "describe", "--always", "--dirty"], cwd=root, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        return rev or "unknown"
    except OSError:
        return "unknown"


def new_record(cfg: Config, kind: str, shape: str, workload: str, seed: int, scale_step: int) -> RunRecord:
    import psutil

    now = dt.datetime.now(dt.timezone.utc)
    settings = {k: v for k, v in cfg.values.items() if k.startswith("BS_") and "PASSWORD" not in k}
    heaps = {k: v for k, v in settings.items() if k.endswith(("_HEAP", "_MEMORY"))}
    return RunRecord(
        run_id=f"{now:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}",
        kind=kind,
        shape=shape,
        started=now,
        ended=now,
        scale_step=scale_step,
        partitions=int(cfg.get("BS_TOPIC_PARTITIONS") or 1),
        stream_threads=int(cfg.get("BS_STREAMS_THREADS") or 1),
        instances=1,
        flink_parallelism=int(cfg.get("BS_PNL_PARALLELISM") or 1),
        # priced by what the run was given: the machine unless the settings say otherwise
        vcpus=float(cfg.get("BS_RUN_VCPUS") or os.cpu_count() or 1),
        memory_gb=float(cfg.get("BS_RUN_MEMORY_GB") or round(psutil.virtual_memory().total / 1e9, 1)),
        instance_type=cfg.get("BS_RUN_INSTANCE_TYPE") or "",
        heap_sizes=json.dumps(heaps, sort_keys=True),
        workload=workload,
        seed=seed,
        code_version=code_version(cfg.root),
        config=json.dumps(settings, sort_keys=True),
    )
