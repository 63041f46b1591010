"""Resource steps: what the stack is given at each step of a scaling experiment.

A step names its vCPUs (a CPU quota on the whole stack), its memory (a memory limit) and, for
scale-out, how the work is cut into threads and processes. On the command line:

    0.5,1,1.5,2            scale-up: vCPUs only, memory from --memory-gb
    2:i2,2:f2:p2,2:c4      scale-out: vCPUs, then options

Options: tN stream threads per streams app instance, iN streams app instances (processes, each its own
state and gateway), pN P&L job parallelism, fN Flink TaskManagers (processes), cN tasks per Connect sink,
mGB memory. A step with any of i, f, c, t or p is a scale-out step: the scalability model is fitted over
the scale-up steps and the scale-out ones are drawn beside them on the same per-dollar axes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from brokerstream.common.config import MAX_STREAMS_INSTANCES, MAX_TASKMANAGERS

# option letter -> (field, what it is, largest value)
OPTIONS = {
    "t": ("stream_threads", "stream threads", 32),
    "i": ("streams_instances", "streams app instances", MAX_STREAMS_INSTANCES),
    "p": ("pnl_parallelism", "P&L parallelism", 32),
    "f": ("taskmanagers", "Flink TaskManagers", MAX_TASKMANAGERS),
    "c": ("connect_tasks", "tasks per Connect sink", 32),
}


@dataclass(frozen=True)
class Step:
    vcpus: float
    memory_gb: float
    stream_threads: int | None = None  # None: as configured (BS_STREAMS_THREADS)
    pnl_parallelism: int | None = None  # None: as configured (BS_PNL_PARALLELISM)
    streams_instances: int | None = None  # None: as configured (BS_STREAMS_INSTANCES)
    taskmanagers: int | None = None  # None: as configured (BS_FLINK_TASKMANAGERS)
    connect_tasks: int | None = None  # None: as configured (BS_CONNECT_SINK_TASKS, else the files)

    @property
    def name(self) -> str:
        parts = [f"{self.vcpus:g} vCPU"]
        if self.streams_instances:
            parts.append(f"{self.streams_instances} streams instances")
        if self.stream_threads:
            parts.append(f"{self.stream_threads} stream threads")
        if self.taskmanagers:
            parts.append(f"{self.taskmanagers} TaskManagers")
        if self.pnl_parallelism:
            parts.append(f"P&L x{self.pnl_parallelism}")
        if self.connect_tasks:
            parts.append(f"{self.connect_tasks} sink tasks")
        return ", ".join(parts)

    @property
    def scale_out(self) -> bool:
        return any(getattr(self, field) for field, _, _ in OPTIONS.values())

    def settings(self) -> dict[str, str]:
        """The BS_* settings a run at this step is recorded (and priced) with."""
        out = {"BS_RUN_VCPUS": f"{self.vcpus:g}", "BS_RUN_MEMORY_GB": f"{self.memory_gb:g}"}
        for key, value in (
            ("BS_STREAMS_THREADS", self.stream_threads),
            ("BS_PNL_PARALLELISM", self.pnl_parallelism),
            ("BS_STREAMS_INSTANCES", self.streams_instances),
            ("BS_FLINK_TASKMANAGERS", self.taskmanagers),
            ("BS_CONNECT_SINK_TASKS", self.connect_tasks),
        ):
            if value:
                out[key] = str(value)
        return out


def parse(text: str, memory_gb: float, cores: int | None = None) -> list[Step]:
    """Steps from `0.5,1,2` or `2:i2:p2`; errors name the item and what is allowed."""
    cores = cores or os.cpu_count() or 1
    steps = []
    allowed = ", ".join(f"{k}N ({what})" for k, (_, what, _) in OPTIONS.items()) + ", mGB (memory)"
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        head, *options = item.split(":")
        try:
            vcpus = float(head)
        except ValueError:
            raise ValueError(f"step {item!r}: starts with a number of vCPUs, e.g. 0.5 or 2") from None
        if not 0.05 <= vcpus <= cores:
            raise ValueError(f"step {item!r}: vCPUs must be between 0.05 and this machine's {cores} cores")
        given: dict[str, int] = {}
        memory = memory_gb
        for option in options:
            kind, value = option[:1], option[1:]
            try:
                if kind == "m":
                    memory = float(value)
                elif kind in OPTIONS:
                    field, what, most = OPTIONS[kind]
                    number = int(value)
                    if not 1 <= number <= most:
                        raise ValueError(f"step {item!r}: {what} are 1 to {most}")
                    given[field] = number
                else:
                    raise LookupError
            except LookupError:
                raise ValueError(f"step {item!r}: options are {allowed}, not {option!r}") from None
            except ValueError as exc:
                if str(exc).startswith("step "):
                    raise
                raise ValueError(f"step {item!r}: options are {allowed}, not {option!r}") from None
        if memory < 1:
            raise ValueError(f"step {item!r}: memory must be at least 1 GB")
        steps.append(Step(vcpus, memory, **given))
    if not steps:
        raise ValueError("no steps: give e.g. --steps 0.5,1,2")
    if len({s for s in steps}) != len(steps):
        raise ValueError("the same step is listed twice")
    return steps
