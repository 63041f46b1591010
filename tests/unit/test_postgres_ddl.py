"""Which DDL files `up` runs: those new or changed since the ledger last recorded them."""

from __future__ import annotations

from contextlib import nullcontext
from types import SimpleNamespace

import pytest
from psycopg import errors

from brokerstream.launcher import postgres_ddl
from brokerstream.launcher.postgres_ddl import Outcome, digest, pending


@pytest.mark.parametrize(
    ("files", "ledger", "expected"),
    [
        ({"001.sql": "a", "002.sql": "b"}, {}, ["001.sql", "002.sql"]),
        ({"001.sql": "a", "002.sql": "b"}, {"001.sql": "a", "002.sql": "b"}, []),
        ({"001.sql": "a", "002.sql": "b"}, {"001.sql": "a", "002.sql": "old"}, ["002.sql"]),
        ({"002.sql": "b", "001.sql": "a"}, {"002.sql": "b"}, ["001.sql"]),
        # a file removed from the folder is not run and not an error
        ({"001.sql": "a"}, {"001.sql": "a", "003.sql": "c"}, []),
        ({"010.sql": "x", "002.sql": "y"}, {}, ["002.sql", "010.sql"]),
    ],
)
def test_pending_is_new_or_changed_files_in_name_order(files, ledger, expected):
    assert pending(files, ledger) == expected


def test_digest_tells_one_character_apart():
    assert digest("CREATE TABLE t (id int);") != digest("CREATE TABLE t (id int) ;")
    assert len(digest("")) == 64


def test_outcome_line_names_what_ran_and_what_did_not():
    assert Outcome((), ("001.sql", "002.sql"), 0).line() == "0 DDL files of sql/postgres applied, 2 unchanged"
    assert (
        Outcome(("002.sql",), ("001.sql",), 2).line()
        == "1 DDL files of sql/postgres applied (002.sql), 1 unchanged, 2 retried after a lock conflict"
    )


class FakeConn:
    """Enough of a psycopg connection: a ledger, and a statement that fails the first `failures` times."""

    def __init__(self, failures: int, error):
        self.ledger: dict[str, str] = {}
        self.failures, self.error = failures, error
        self.ran: list[str] = []

    def transaction(self):
        return nullcontext()

    def execute(self, sql, params=None):
        if sql.startswith("SELECT file"):
            return SimpleNamespace(fetchall=lambda: list(self.ledger.items()))
        if sql.startswith("INSERT INTO"):
            self.ledger[params[0]] = params[1]
        elif sql.startswith("CREATE TABLE t"):
            if self.failures:
                self.failures -= 1
                raise self.error()
            self.ran.append(sql)
        return None


@pytest.mark.parametrize("error", ["DeadlockDetected", "LockNotAvailable", "UniqueViolation"])
def test_a_lock_conflict_is_tried_again_and_the_file_recorded_once_it_ran(tmp_path, error):
    (tmp_path / "001_t.sql").write_text("CREATE TABLE t (id int);")
    conn, waits = FakeConn(2, getattr(errors, error)), []
    outcome = postgres_ddl.apply(conn, tmp_path, sleep=waits.append)
    assert outcome.applied == ("001_t.sql",) and outcome.retries == 2 and waits == [0.5, 1.0]
    assert conn.ran == ["CREATE TABLE t (id int);"] and conn.ledger == {"001_t.sql": digest("CREATE TABLE t (id int);")}
    assert postgres_ddl.apply(conn, tmp_path, sleep=waits.append).applied == ()  # recorded: not run again


def test_conflicts_past_the_attempts_fail_the_step_and_record_nothing(tmp_path):
    (tmp_path / "001_t.sql").write_text("CREATE TABLE t (id int);")
    conn = FakeConn(postgres_ddl.ATTEMPTS, errors.DeadlockDetected)
    with pytest.raises(errors.DeadlockDetected):
        postgres_ddl.apply(conn, tmp_path, sleep=lambda _: None)
    assert conn.ledger == {}


def test_another_error_is_not_tried_again(tmp_path):
    (tmp_path / "001_t.sql").write_text("CREATE TABLE t (id int);")
    conn, waits = FakeConn(1, errors.SyntaxError), []
    with pytest.raises(errors.SyntaxError):
        postgres_ddl.apply(conn, tmp_path, sleep=waits.append)
    assert waits == [] and conn.ledger == {}
