"""Load shapes as plain logic (Locust's LoadTestShape classes in loadtest/ delegate to these).

Each `tick(elapsed, window)` returns (users, spawn_rate) or None to stop; `window` holds what the
last seconds looked like (requests/s, p95 ms, error ratio)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Window:
    rps: float
    p95_ms: float
    error_ratio: float


@dataclass
class Constant:
    users: int
    duration: float
    spawn_rate: float = 50

    def tick(self, elapsed: float, window: Window | None):
        return (self.users, self.spawn_rate) if elapsed < self.duration else None


@dataclass
class BreakingPoint:
    """Ramp, hold, ramp again, until p95 exceeds the SLO or errors exceed the limit at the end of a
    hold; C_SLA is then the throughput of the last step that met both (0 if none did)."""

    start_users: int
    step_users: int
    hold_seconds: float
    slo_p95_ms: float
    max_error_ratio: float = 0.01
    max_users: int = 10_000
    spawn_rate: float = 50
    warmup_seconds: float = 0  # first, start_users for this long, not judged (JIT, caches, connections)
    c_sla: float = 0.0
    stopped_because: str = ""
    steps: list = field(default_factory=list)
    _step: int = 0

    def users_at(self, step: int) -> int:
        return self.start_users + step * self.step_users

    def tick(self, elapsed: float, window: Window | None):
        if elapsed < self.warmup_seconds:
            return self.start_users, self.spawn_rate
        step = int((elapsed - self.warmup_seconds) // self.hold_seconds)
        if step > self._step:  # a hold has just ended: judge it by its last window
            held = self.users_at(self._step)
            self._step = step
            if window is not None:
                self.steps.append((held, window.rps, window.p95_ms, window.error_ratio))
                if window.p95_ms > self.slo_p95_ms:
                    self.stopped_because = f"p95 {window.p95_ms:.0f} ms > SLO {self.slo_p95_ms:.0f} ms at {held} users"
                    return None
                if window.error_ratio > self.max_error_ratio:
                    self.stopped_because = (
                        f"errors {window.error_ratio:.1%} > {self.max_error_ratio:.0%} at {held} users"
                    )
                    return None
                self.c_sla = window.rps
        users = self.users_at(step)
        if users > self.max_users:
            self.stopped_because = f"reached {self.max_users} users without breaking"
            return None
        return users, self.spawn_rate


@dataclass
class StepBursts:
    """A baseline with short bursts of growing size: baseline, burst of +1 x step, baseline, +2 x step..."""

    baseline_users: int
    burst_users: int
    baseline_seconds: float
    burst_seconds: float
    bursts: int
    spawn_rate: float = 100

    def tick(self, elapsed: float, window: Window | None):
        period = self.baseline_seconds + self.burst_seconds
        n = int(elapsed // period)
        if n >= self.bursts:
            return (self.baseline_users, self.spawn_rate) if elapsed < n * period + self.baseline_seconds else None
        in_burst = elapsed - n * period >= self.baseline_seconds
        return (self.baseline_users + (n + 1) * self.burst_users if in_burst else self.baseline_users, self.spawn_rate)
