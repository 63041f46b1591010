"""Resource steps: what the stack is given at each step of a scaling experiment.

A step names its vCPUs (a CPU quota on the whole stack), its memory (a memory limit) and, for
scale-out, the streams app's stream threads and the P&L job's parallelism. On the command line:

    0.5,1,1.5,2            vertical: vCPUs only, memory from --memory-gb
    2:t2:p2,2:t4:p4        horizontal: vCPUs, then tN stream threads, pN P&L parallelism, mGB memory
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    vcpus: float
    memory_gb: float
    stream_threads: int | None = None  # None: as configured (BS_STREAMS_THREADS)
    pnl_parallelism: int | None = None  # None: as configured (BS_PNL_PARALLELISM)

    @property
    def name(self) -> str:
        parts = [f"{self.vcpus:g} vCPU"]
        if self.stream_threads:
            parts.append(f"{self.stream_threads} stream threads")
        if self.pnl_parallelism:
            parts.append(f"P&L x{self.pnl_parallelism}")
        return ", ".join(parts)

    def settings(self) -> dict[str, str]:
        """The BS_* settings a run at this step is recorded (and priced) with."""
        out = {"BS_RUN_VCPUS": f"{self.vcpus:g}", "BS_RUN_MEMORY_GB": f"{self.memory_gb:g}"}
        if self.stream_threads:
            out["BS_STREAMS_THREADS"] = str(self.stream_threads)
        if self.pnl_parallelism:
            out["BS_PNL_PARALLELISM"] = str(self.pnl_parallelism)
        return out


def parse(text: str, memory_gb: float, cores: int | None = None) -> list[Step]:
    """Steps from `0.5,1,2` or `2:t2:p2`; errors name the item and what is allowed."""
    cores = cores or os.cpu_count() or 1
    steps = []
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
        threads = parallelism = None
        memory = memory_gb
        for option in options:
            kind, value = option[:1], option[1:]
            try:
                if kind == "t":
                    threads = int(value)
                elif kind == "p":
                    parallelism = int(value)
                elif kind == "m":
                    memory = float(value)
                else:
                    raise ValueError
            except ValueError:
                raise ValueError(
                    f"step {item!r}: options are tN (stream threads), pN (P&L parallelism), "
                    f"mGB (memory), not {option!r}"
                ) from None
        if (threads is not None and not 1 <= threads <= 32) or (parallelism is not None and not 1 <= parallelism <= 32):
            raise ValueError(f"step {item!r}: threads and parallelism are 1 to 32")
        if memory < 1:
            raise ValueError(f"step {item!r}: memory must be at least 1 GB")
        steps.append(Step(vcpus, memory, threads, parallelism))
    if not steps:
        raise ValueError("no steps: give e.g. --steps 0.5,1,2")
    if len({s for s in steps}) != len(steps):
        raise ValueError("the same step is listed twice")
    return steps
