"""Which DDL files `up` runs: those new or changed since the ledger last recorded them."""

from __future__ import annotations

import pytest

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
