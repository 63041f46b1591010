"""A small client of the Flink SQL gateway's REST API (v1): sessions, statements, paged results."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from brokerstream.common.errors import UserError


class SqlError(UserError, RuntimeError):
    """The gateway refused or failed a statement: a message for the user, not a stack trace."""


def _call(base: str, method: str, path: str, body: Any = None, timeout: float = 30.0) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
    except urllib.error.HTTPError as exc:
        raise SqlError(
            f"{method} {path}: HTTP {exc.code}: {_root_cause(exc.read().decode(errors='replace'))}"
        ) from None
    # DECIMAL columns arrive as JSON numbers: parsed as Decimal they stay exact.
    return json.loads(raw, parse_float=Decimal) if raw else {}


def _root_cause(body: str) -> str:
    """The gateway answers with a whole Java stack trace; the last cause is what the user needs."""
    causes = [line.strip() for line in body.replace("\\n", "\n").splitlines() if line.strip().startswith("Caused by:")]
    return causes[-1][:2000] if causes else body[:2000]


@dataclass
class Result:
    columns: list[str]
    rows: list[list[Any]]
    job_id: str | None = None


@dataclass
class SqlSession:
    """One gateway session; statements run in order and share its catalog (CREATE TABLE ...)."""

    url: str
    properties: dict[str, str] = field(default_factory=dict)
    handle: str | None = None

    def __enter__(self) -> "SqlSession":
        self.handle = _call(self.url, "POST", "/v1/sessions", {"properties": self.properties})["sessionHandle"]
        return self

    def __exit__(self, *exc) -> None:
        if self.handle:
            try:
                _call(self.url, "DELETE", f"/v1/sessions/{self.handle}")
            except (SqlError, OSError):
                pass
            self.handle = None

    def execute(self, sql: str, *, max_rows: int | None = None, timeout: float = 120.0) -> Result:
        """Run one statement and collect its result; a streaming query stops at max_rows or timeout."""
        op = _call(self.url, "POST", f"/v1/sessions/{self.handle}/statements", {"statement": sql})["operationHandle"]
        base = f"/v1/sessions/{self.handle}/operations/{op}"
        deadline = time.monotonic() + timeout
        path = f"{base}/result/0?rowFormat=JSON"
        columns: list[str] = []
        rows: list[list[Any]] = []
        job_id = None
        try:
            while path:
                try:
                    page = _call(self.url, "GET", path)
                except SqlError as exc:
                    raise SqlError(f"{sql.strip()[:200]}\n{exc}") from None
                job_id = page.get("jobID") or job_id
                kind = page.get("resultType")
                if kind == "EOS":
                    break
                results = page.get("results") or {}
                if results.get("columns"):
                    columns = [c["name"] for c in results["columns"]]
                for row in results.get("data", []):
                    # A changelog: the latest version of a row replaces its retraction.
                    if row.get("kind") in ("INSERT", "UPDATE_AFTER"):
                        rows.append(row["fields"])
                    elif row.get("kind") in ("DELETE", "UPDATE_BEFORE") and row["fields"] in rows:
                        rows.remove(row["fields"])
                if max_rows is not None and len(rows) >= max_rows:
                    break
                if time.monotonic() > deadline:
                    if max_rows is None:
                        raise SqlError(f"no end of results after {timeout} s: {sql.strip()[:200]}")
                    break
                next_uri = page.get("nextResultUri")
                if kind == "NOT_READY" or (kind == "PAYLOAD" and not results.get("data")):
                    time.sleep(0.2)
                path = next_uri  # already carries the row format

        finally:
            try:
                _call(self.url, "DELETE", f"{base}/close")
            except (SqlError, OSError):
                pass
        return Result(columns=columns, rows=rows, job_id=job_id)


def job_state(flink_url: str, job_id: str) -> str:
    return _call(flink_url, "GET", f"/jobs/{job_id}")["state"]


def wait_job(flink_url: str, job_id: str, states=("FINISHED", "FAILED", "CANCELED"), timeout: float = 120.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        state = job_state(flink_url, job_id)
        if state in states or time.monotonic() > deadline:
            return state
        time.sleep(0.3)
