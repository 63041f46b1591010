"""Our Flink jobs on the session cluster, through its REST API: deploy (idempotent), status, stop with
a savepoint, resume from one.

The P&L job's settings come from flink-jobs/src/main/resources/pnl.properties; the stack's addresses
and any `BS_PNL_<KEY>` value of the configuration (platform/stack.env or the environment) are passed
as `--key=value` program arguments.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import requests

from brokerstream.clients.kafka_security import java_client_file
from brokerstream.common.config import Config
from brokerstream.common.errors import UserError

PNL_JOB = "brokerstream-pnl"
JAR = Path("flink-jobs") / "target" / "flink-jobs-0.1.0.jar"
SETTINGS = Path("flink-jobs") / "src" / "main" / "resources" / "pnl.properties"
LIVE = {"CREATED", "INITIALIZING", "RUNNING", "RESTARTING", "RECONCILING"}


def _defaults(cfg: Config) -> dict[str, str]:
    """pnl.properties: every setting of the job with its default."""
    return {
        k.strip(): v.strip()
        for k, v in (
            line.split("=", 1)
            for line in (cfg.root / SETTINGS).read_text().splitlines()
            if "=" in line and not line.lstrip().startswith("#")
        )
    }


def _override(cfg: Config, key: str) -> str | None:
    """The stack's BS_PNL_<KEY> for a job setting, if given."""
    return cfg.get("BS_PNL_" + key.upper().replace(".", "_").replace("-", "_")) or None


def pnl_arguments(cfg: Config) -> list[str]:
    values = {
        "bootstrap.servers": cfg.kafka_bootstrap,
        "registry.url": cfg.registry_url,
        "checkpoint.dir": f"file://{cfg.data_dir / 'flink' / 'checkpoints'}",
        # a file name: the job reads the secure profile's login there, not from its arguments
        "kafka.login": str(java_client_file(cfg, "flink") or ""),
    }
    for key in _defaults(cfg):
        override = _override(cfg, key)
        if override:
            values[key] = override
    return [f"--{k}={v}" for k, v in values.items()]


def pnl_setting(cfg: Config, key: str) -> str:
    """One P&L job setting as the job gets it: BS_PNL_<KEY> over pnl.properties."""
    return _override(cfg, key) or _defaults(cfg)[key]


class FlinkError(UserError):
    """A refusal of Flink's REST API; `detail` keeps the whole answer (stack traces and causes)."""

    def __init__(self, message: str, detail: str):
        super().__init__(message)
        self.detail = detail


@dataclass
class Job:
    job_id: str
    name: str
    state: str


class Flink:
    def __init__(self, url: str, timeout: float = 30.0):
        self.url = url.rstrip("/")
        self.timeout = timeout

    def _call(self, method: str, path: str, **kw) -> dict:
        resp = requests.request(method, self.url + path, timeout=self.timeout, **kw)
        if resp.status_code >= 400:
            raise FlinkError(f"Flink REST {method} {path}: {resp.status_code} {resp.text[:500]}", resp.text)
        return resp.json() if resp.content else {}

    def jobs(self) -> list[Job]:
        return [Job(j["jid"], j["name"], j["state"]) for j in self._call("GET", "/jobs/overview")["jobs"]]

    def live(self, name: str) -> Job | None:
        return next((j for j in self.jobs() if j.name == name and j.state in LIVE), None)

    def submit(self, jar: Path, args: list[str], savepoint: str | None = None) -> str:
        with jar.open("rb") as f:
            uploaded = self._call(
                "POST", "/jars/upload", files={"jarfile": (jar.name, f, "application/x-java-archive")}
            )
        jar_id = uploaded["filename"].rsplit("/", 1)[-1]
        body = {"programArgsList": args}
        if savepoint:
            body.update(savepointPath=savepoint, allowNonRestoredState=False)
        try:
            return self._call("POST", f"/jars/{jar_id}/run", json=body)["jobid"]
        finally:
            self._call("DELETE", f"/jars/{jar_id}")

    def wait_state(self, job_id: str, states: set[str], timeout: float = 120.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            state = self._call("GET", f"/jobs/{job_id}")["state"]
            if state in states:
                return state
            if state in {"FAILED", "CANCELED"} or time.monotonic() > deadline:
                raise UserError(f"job {job_id} is {state}, waited for {sorted(states)}")
            time.sleep(0.5)

    def wait_tasks_running(self, job_id: str, timeout: float = 120.0) -> None:
        """RUNNING as a job is not yet running tasks: wait until every vertex is."""
        deadline = time.monotonic() + timeout
        while True:
            vertices = self._call("GET", f"/jobs/{job_id}")["vertices"]
            if vertices and all(v["status"] == "RUNNING" for v in vertices):
                return
            if time.monotonic() > deadline:
                raise UserError(
                    f"job {job_id}: tasks not running after {timeout:.0f} s: "
                    f"{[(v['name'], v['status']) for v in vertices]}"
                )
            time.sleep(0.5)

    def stop_with_savepoint(self, job_id: str, directory: str, timeout: float = 120.0) -> str:
        trigger = self._call("POST", f"/jobs/{job_id}/stop", json={"targetDirectory": directory, "drain": False})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = self._call("GET", f"/jobs/{job_id}/savepoints/{trigger['request-id']}")
            if status["status"]["id"] == "COMPLETED":
                op = status["operation"]
                if "failure-cause" in op:
                    raise UserError(f"savepoint of {job_id} failed: {op['failure-cause'].get('stack-trace', '')[:800]}")
                return op["location"]
            time.sleep(0.5)
        raise UserError(f"savepoint of {job_id} not done within {timeout:.0f} s")

    def cancel(self, job_id: str) -> None:
        self._call("PATCH", f"/jobs/{job_id}?mode=cancel")

    def metric_sum(self, job_id: str, vertex_prefix: str, names: list[str]) -> dict[str, float]:
        """Sums of task metrics over the subtasks of the vertex whose name starts with the prefix."""
        vertices = self._call("GET", f"/jobs/{job_id}")["vertices"]
        vertex = next(v for v in vertices if v["name"].startswith(vertex_prefix))
        path = f"/jobs/{job_id}/vertices/{vertex['id']}/subtasks/metrics"
        # user metrics are listed under the operator's name: "<operator>.<name>"
        available = [m["id"] for m in self._call("GET", path)]
        ids = {m: n for m in available for n in names if m == n or m.endswith("." + n)}
        got = self._call("GET", path, params={"get": ",".join(ids), "agg": "sum"}) if ids else []
        return {ids[m["id"]]: float(m["sum"]) for m in got}


def savepoint_marker(cfg: Config) -> Path:
    return cfg.data_dir / "flink" / "pnl-savepoint"


def deploy(cfg: Config, *, resume: bool = True) -> str:
    """Submits the P&L job unless it is already live; resumes from the savepoint `stop` left, if any."""
    flink = Flink(cfg.flink_url)
    live = flink.live(PNL_JOB)
    if live:
        return f"{PNL_JOB} already {live.state} ({live.job_id})"
    jar = cfg.root / JAR
    if not jar.exists():
        raise UserError(f"{jar} is missing: build it with ./brokerstream install")
    marker = savepoint_marker(cfg)
    savepoint = marker.read_text().strip() if resume and marker.exists() else None
    note = ""
    try:
        job_id = flink.submit(jar, pnl_arguments(cfg), savepoint)
    except FlinkError as exc:
        if not savepoint or not savepoint_mismatch(exc.detail):
            raise
        # A savepoint of an older version of the job whose operators changed: its state is rebuilt
        # from the compacted topics (positions, reference data, prices) on a fresh start, so nothing
        # is lost but the time to read them; the old savepoint stays where it is.
        marker.rename(marker.with_name(marker.name + ".unusable"))
        note = f", started fresh: the savepoint {savepoint} does not fit this version of the job"
        savepoint = None
        job_id = flink.submit(jar, pnl_arguments(cfg), None)
    flink.wait_state(job_id, {"RUNNING"})
    flink.wait_tasks_running(job_id)
    if savepoint:
        marker.unlink()
    return f"{PNL_JOB} running ({job_id})" + (f", resumed from {savepoint}" if savepoint else note)


def savepoint_mismatch(error: str) -> bool:
    """Whether Flink refused a savepoint because the job's operators or state no longer match it."""
    return any(
        text in error
        for text in (
            "Cannot map checkpoint/savepoint state",
            "Failed to rollback to checkpoint/savepoint",
            "StateMigrationException",
            "incompatible",
        )
    )


def stop(cfg: Config) -> str:
    """Stops the P&L job with a savepoint; the next deploy resumes from it."""
    flink = Flink(cfg.flink_url)
    live = flink.live(PNL_JOB)
    if not live:
        return f"{PNL_JOB} is not running"
    # a job restarting (its TaskManager just stopped, say) cannot take a savepoint: wait for its tasks
    flink.wait_state(live.job_id, {"RUNNING"})
    flink.wait_tasks_running(live.job_id)
    location = flink.stop_with_savepoint(live.job_id, f"file://{cfg.data_dir / 'flink' / 'savepoints'}")
    marker = savepoint_marker(cfg)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(location)
    return f"{PNL_JOB} stopped with savepoint {location}"
