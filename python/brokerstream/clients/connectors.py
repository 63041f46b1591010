"""Kafka Connect connectors from connectors/*.json, through the Connect REST API.

`apply` creates or updates each connector (PUT /connectors/NAME/config is idempotent) and waits until
the connector and all its tasks run; a failed task is reported with its trace, never left silent.

While the worker rejoins its group (after a broker restart, say) its REST calls hang or answer 409
"rebalance in progress" / 500 "request timed out"; a Connect made with `patience` retries those until
its deadline, because every call it makes is idempotent.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import requests

from brokerstream.common.config import ROOT, Config
from brokerstream.common.errors import UserError

CONNECTOR_DIR = ROOT / "connectors"


class ConnectorError(UserError):
    pass


@dataclass(frozen=True)
class ConnectorSpec:
    name: str
    config: dict[str, str]
    path: Path


def load_specs(directory: Path = CONNECTOR_DIR) -> list[ConnectorSpec]:
    specs = []
    for path in sorted(directory.glob("*.json")):
        doc = json.loads(path.read_text())
        if set(doc) != {"name", "config"}:
            raise ConnectorError(f"{path}: expected exactly 'name' and 'config'")
        specs.append(ConnectorSpec(doc["name"], {k: str(v) for k, v in doc["config"].items()}, path))
    return specs


# Answers of a worker that is rejoining its group, not of a wrong request.
TRANSIENT_STATUS = frozenset({409, 500, 502, 503, 504})


class Connect:
    def __init__(self, url: str, timeout: float = 15.0, patience: float = 0.0):
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.patience = patience

    def _request(self, method: str, path: str, **kw) -> requests.Response:
        deadline = time.monotonic() + self.patience
        pause = 0.5
        while True:
            try:
                resp = requests.request(method, self.url + path, timeout=self.timeout, **kw)
                if resp.status_code not in TRANSIENT_STATUS or time.monotonic() >= deadline:
                    return resp
            except (requests.Timeout, requests.ConnectionError):
                if time.monotonic() >= deadline:
                    raise
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, 5.0)

    def put_config(self, spec: ConnectorSpec) -> None:
        resp = self._request("PUT", f"/connectors/{spec.name}/config", json=spec.config)
        if not resp.ok:
            raise ConnectorError(f"{spec.name}: Connect refused the configuration: HTTP {resp.status_code} {resp.text}")

    def status(self, name: str) -> dict | None:
        resp = self._request("GET", f"/connectors/{name}/status")
        if resp.status_code == 404:
            return None
        resp.raise_for_status()
        return resp.json()

    def names(self) -> list[str]:
        resp = self._request("GET", "/connectors")
        resp.raise_for_status()
        return sorted(resp.json())

    def restart(self, name: str) -> None:
        resp = self._request("POST", f"/connectors/{name}/restart?includeTasks=true&onlyFailed=false")
        if resp.status_code not in (200, 202, 204):
            raise ConnectorError(f"{name}: restart refused: HTTP {resp.status_code} {resp.text}")

    def pause(self, name: str) -> None:
        self._request("PUT", f"/connectors/{name}/pause").raise_for_status()

    def resume(self, name: str) -> None:
        self._request("PUT", f"/connectors/{name}/resume").raise_for_status()

    def delete(self, name: str) -> None:
        resp = self._request("DELETE", f"/connectors/{name}")
        if resp.status_code not in (204, 404):
            resp.raise_for_status()


def problems_of(name: str, status: dict | None, tasks_wanted: int | None = None) -> list[str]:
    """What is wrong with one connector: missing, not running, a task not running, or (when `tasks_wanted`
    is given) another number of tasks than its configuration asks for."""
    if status is None:
        return [f"{name}: not registered"]
    found = []
    if status["connector"]["state"] != "RUNNING":
        found.append(f"{name}: connector {status['connector']['state']}")
    tasks = status.get("tasks", [])
    if not tasks:
        found.append(f"{name}: no tasks")
    elif tasks_wanted is not None and len(tasks) != tasks_wanted:
        found.append(f"{name}: {len(tasks)} tasks, {tasks_wanted} configured")
    for task in tasks:
        if task["state"] != "RUNNING":
            trace = (task.get("trace") or "").strip().splitlines()
            found.append(f"{name} task {task['id']}: {task['state']}" + (f": {trace[0]}" if trace else ""))
    return found


def wait_running(
    connect: Connect, names: list[str], timeout: float = 60.0, tasks_wanted: dict[str, int] | None = None
) -> None:
    """Waits until every connector and task of `names` runs, and each connector named in `tasks_wanted` runs
    that many tasks: a worker takes a new tasks.max after answering the PUT, so until it has rebalanced
    the status still lists the old tasks, all RUNNING."""
    wanted = tasks_wanted or {}
    deadline = time.monotonic() + timeout
    while True:
        problems = [p for n in names for p in problems_of(n, connect.status(n), wanted.get(n))]
        if not problems:
            return
        failed = [p for p in problems if "FAILED" in p]
        if failed or time.monotonic() > deadline:
            raise ConnectorError("connectors not running:\n  " + "\n  ".join(problems))
        time.sleep(0.5)


# Connectors an earlier layout shipped and this one does not: removed where they are still registered.
# Postgres now gets marks, and views add positions up, instead of a synced row per position, account and
# member; one sink writes everything the order flow writes (results with the P&L fills realized, positions, events).
RETIRED = ("sink-pnl-positions", "sink-pnl-accounts", "sink-pnl-members", "sink-positions", "sink-order-events")


def sized(specs: list[ConnectorSpec], sink_tasks: str | None) -> list[ConnectorSpec]:
    """The specs with each sink's tasks.max set to `sink_tasks` (BS_CONNECT_SINK_TASKS); empty: as written."""
    if not sink_tasks:
        return specs
    tasks = int(sink_tasks) if sink_tasks.strip().isdigit() else 0
    if not 1 <= tasks <= 32:
        raise ConnectorError(f"BS_CONNECT_SINK_TASKS must be 1 to 32, got {tasks}")
    return [
        ConnectorSpec(s.name, {**s.config, "tasks.max": str(tasks)}, s.path) if s.name.startswith("sink-") else s
        for s in specs
    ]


def apply(
    cfg: Config, specs: list[ConnectorSpec] | None = None, timeout: float = 60.0, patience: float = 180.0
) -> list[str]:
    connect = Connect(cfg.connect_url, patience=patience)
    specs = sized(load_specs() if specs is None else specs, cfg.get("BS_CONNECT_SINK_TASKS"))
    registered = set(connect.names())
    for name in RETIRED:
        if name in registered and name not in {s.name for s in specs}:
            connect.delete(name)
    for spec in specs:
        connect.put_config(spec)
    # each of our connectors runs exactly tasks.max tasks: the sink makes that many, Debezium's Postgres one allows 1
    tasks_wanted = {s.name: int(s.config.get("tasks.max", "1")) for s in specs}
    wait_running(connect, [s.name for s in specs], timeout, tasks_wanted)
    return [s.name for s in specs]


def check(cfg: Config) -> list[str]:
    """Problems of every connector: those of connectors/*.json (absent counts) and any other registered."""
    connect = Connect(cfg.connect_url)
    names = {spec.name for spec in load_specs()} | set(connect.names())
    return [p for name in sorted(names) for p in problems_of(name, connect.status(name))]
