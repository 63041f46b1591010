"""One progress line per long step, with its duration; failures name the step."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from brokerstream.common.errors import UserError


class StepFailed(UserError):
    pass


_PRINT_LOCK = threading.Lock()  # `up` and `down` report from one thread per service


def say(tag: str, message: str) -> None:
    with _PRINT_LOCK:
        print(f"[{tag}] {message}", flush=True)


@contextmanager
def step(tag: str, label: str) -> Iterator[None]:
    say(tag, f"{label} ...")
    t0 = time.monotonic()
    try:
        yield
    except Exception:
        say(tag, f"{label} FAILED after {time.monotonic() - t0:.1f} s")
        raise
    say(tag, f"{label} done in {time.monotonic() - t0:.1f} s")


def run(
    argv: Sequence[str],
    *,
    log: Path | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    what: str | None = None,
    user: str | None = None,
) -> None:
    """Run a command; on failure raise with the tail of its output (kept whole in log, if given)."""
    proc = subprocess.run(
        list(argv),
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        user=user,
    )
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(proc.stdout)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-40:])
        where = f" (full output: {log})" if log else ""
        raise StepFailed(f"{what or argv[0]} exited with {proc.returncode}{where}:\n{tail}")


def fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr, flush=True)
    raise SystemExit(1)
