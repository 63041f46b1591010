"""Members' API keys: issue, rotate, revoke, list.

    ./brokerstream keys issue MEMBER [--label TEXT]     a new random key, shown once
    ./brokerstream keys rotate MEMBER [--label TEXT]    a new key, and the member's other keys revoked
    ./brokerstream keys revoke MEMBER [--key-id K]      every active key of the member, or one
    ./brokerstream keys list MEMBER                     ids, labels, status (never the keys)

A key is "bsk_" and 43 characters of a 256-bit random secret. Only its SHA-256 is stored (api_keys),
under a public id ("k_" and 12 hex digits of the hash). Debezium carries each change to ref.api-keys,
which every gateway instance holds: a new key works, and a revoked one is refused, within seconds.
The seed-derived keys of generated reference data are rows of the same table, labelled
"generated test data (seed N)"; they stand for no real member.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import psycopg

from brokerstream.common.config import Config
from brokerstream.common.errors import UserError
from brokerstream.gen.refdata import key_id, sha256_hex

PREFIX = "bsk_"


@dataclass(frozen=True)
class Issued:
    key: str
    key_id: str
    member_id: str
    label: str


def new_key() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def _member_exists(conn, member_id: str) -> None:
    row = conn.execute("SELECT status FROM members WHERE member_id = %s", (member_id,)).fetchone()
    if row is None:
        raise UserError(f"no member {member_id}")


def _insert(conn, member_id: str, label: str) -> Issued:
    key = new_key()
    digest = sha256_hex(key)
    conn.execute(
        "INSERT INTO api_keys (key_sha256, key_id, member_id, label, status) VALUES (%s, %s, %s, %s, 'ACTIVE')",
        (digest, key_id(digest), member_id, label),
    )
    return Issued(key, key_id(digest), member_id, label)


def issue(cfg: Config, member_id: str, label: str = "issued") -> Issued:
    with psycopg.connect(cfg.postgres_dsn()) as conn, conn.transaction():
        _member_exists(conn, member_id)
        return _insert(conn, member_id, label)


def rotate(cfg: Config, member_id: str, label: str = "rotated") -> tuple[Issued, list[str]]:
    """A new key and every other active key of the member revoked, in one transaction."""
    with psycopg.connect(cfg.postgres_dsn()) as conn, conn.transaction():
        _member_exists(conn, member_id)
        issued = _insert(conn, member_id, label)
        revoked = [
            r[0]
            for r in conn.execute(
                "UPDATE api_keys SET status = 'REVOKED', revoked_at = now() "
                "WHERE member_id = %s AND status = 'ACTIVE' AND key_id <> %s RETURNING key_id",
                (member_id, issued.key_id),
            )
        ]
        return issued, revoked


def revoke(cfg: Config, member_id: str, key: str | None = None) -> list[str]:
    with psycopg.connect(cfg.postgres_dsn()) as conn, conn.transaction():
        _member_exists(conn, member_id)
        sql = "UPDATE api_keys SET status = 'REVOKED', revoked_at = now() WHERE member_id = %s AND status = 'ACTIVE'"
        args: tuple = (member_id,)
        if key:
            sql += " AND key_id = %s"
            args += (key,)
        revoked = [r[0] for r in conn.execute(sql + " RETURNING key_id", args)]
        if key and not revoked:
            raise UserError(f"member {member_id} has no active key {key}")
        return revoked


def listing(cfg: Config, member_id: str) -> list[tuple]:
    with psycopg.connect(cfg.postgres_dsn()) as conn:
        _member_exists(conn, member_id)
        return conn.execute(
            "SELECT key_id, label, status, created_at, revoked_at FROM api_keys WHERE member_id = %s "
            "ORDER BY created_at, key_id",
            (member_id,),
        ).fetchall()
