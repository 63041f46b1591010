"""Applies the Postgres DDL of `sql/postgres/` once per version of each file.

Every `up` runs this, usually while the sink connector writes the flow's tables. The files are
idempotent, but re-running them is not free: `CREATE INDEX IF NOT EXISTS` takes a SHARE lock on its
table and `ALTER TABLE ... IF NOT EXISTS` an ACCESS EXCLUSIVE one even when there is nothing to do, and
taking them table after table while the sink's transactions hold row locks across several tables can
deadlock. So a ledger table remembers the SHA-256 of each file as applied; a file runs only when it is
new or has changed, each in a transaction of its own with its ledger row. A run that does meet a
writer (a first `up` of a new version while the sink runs) waits at most `LOCK_TIMEOUT` for a lock and
tries again on a deadlock or a lock timeout, or when two `up`s at once (several hosts) create the same
table.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

from psycopg import errors

LEDGER = "brokerstream_ddl"
LOCK_TIMEOUT = "5s"
ATTEMPTS = 6

LEDGER_DDL = f"""CREATE TABLE IF NOT EXISTS {LEDGER} (
  file       text PRIMARY KEY,
  sha256     text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)"""
RECORD = (
    f"INSERT INTO {LEDGER} (file, sha256) VALUES (%s, %s) "
    "ON CONFLICT (file) DO UPDATE SET sha256 = EXCLUDED.sha256, applied_at = now()"
)
CONFLICTS = (errors.DeadlockDetected, errors.LockNotAvailable, errors.UniqueViolation)


@dataclass(frozen=True)
class Outcome:
    applied: tuple[str, ...]
    unchanged: tuple[str, ...]
    retries: int

    def line(self) -> str:
        parts = [f"{len(self.applied)} DDL files of sql/postgres applied"]
        if self.applied:
            parts[0] += f" ({', '.join(self.applied)})"
        parts.append(f"{len(self.unchanged)} unchanged")
        if self.retries:
            parts.append(f"{self.retries} retried after a lock conflict")
        return ", ".join(parts)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def pending(files: dict[str, str], ledger: dict[str, str]) -> list[str]:
    """The files (name -> sha256) to run, in name order: those the ledger lacks or holds another hash for."""
    return [name for name in sorted(files) if ledger.get(name) != files[name]]


def in_transaction(conn, statements: list[tuple[str, tuple | None]], sleep=time.sleep) -> int:
    """Runs the (sql, params) statements in one transaction, again after a conflict; returns the retries."""
    attempt = 1
    while True:
        try:
            with conn.transaction():
                conn.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
                for sql, params in statements:
                    conn.execute(sql, params)
            return attempt - 1
        except CONFLICTS:
            if attempt == ATTEMPTS:
                raise
            sleep(0.5 * attempt)
            attempt += 1


def apply(conn, folder: Path, sleep=time.sleep) -> Outcome:
    """Runs the pending files of `folder` on `conn` (a psycopg connection in autocommit mode)."""
    texts = {path.name: path.read_text() for path in sorted(folder.glob("*.sql"))}
    files = {name: digest(text) for name, text in texts.items()}
    retries = in_transaction(conn, [(LEDGER_DDL, None)], sleep)
    ledger = dict(conn.execute(f"SELECT file, sha256 FROM {LEDGER}").fetchall())
    todo = pending(files, ledger)
    for name in todo:
        retries += in_transaction(conn, [(texts[name], None), (RECORD, (name, files[name]))], sleep)
    return Outcome(tuple(todo), tuple(n for n in sorted(files) if n not in todo), retries)
