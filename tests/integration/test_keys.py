"""API keys on the real stack: issued keys work, rotated and revoked ones stop working, and a suspended
member's keys stop working, each within 5 s on the gateway (through Postgres, Debezium and the
gateway's global store)."""

from __future__ import annotations

import re
import time

import psycopg
import pytest

from .conftest import GatewayClient, launcher

MEMBER = "M000004"


def status_within(url: str, key: str, expected: int, seconds: float = 5.0) -> float:
    """Seconds until GET /members/{MEMBER}/risk answers `expected` with this key (fails after `seconds`)."""
    gw = GatewayClient(url, key)
    t0 = time.monotonic()
    while True:
        code = gw.get(f"/members/{MEMBER}/risk").status_code
        if code == expected:
            return time.monotonic() - t0
        assert time.monotonic() - t0 < seconds, f"still {code} after {seconds} s (wanted {expected})"
        time.sleep(0.1)


def issued(out: str) -> tuple[str, str]:
    return (
        re.search(r"key id (k_[0-9a-f]{12})", out).group(1),
        re.search(r"key \(shown once, keep it safe\): (bsk_\S+)", out).group(1),
    )


def test_issue_rotate_revoke_and_suspension_take_effect_within_5_seconds(stack, stack_env, world):
    url = stack.gateway_url
    first_id, first = issued(launcher(stack_env, "keys", "issue", MEMBER, "--label", "ops laptop").stdout)
    status_within(url, first, 200)
    listing = launcher(stack_env, "keys", "list", MEMBER).stdout
    assert first_id in listing and "ops laptop" in listing and first not in listing
    assert "generated test data (seed 42)" in listing  # the seed key, named as what it is

    out = launcher(stack_env, "keys", "rotate", MEMBER).stdout
    second_id, second = issued(out)
    assert first_id in out and second != first
    status_within(url, second, 200)
    status_within(url, first, 401)

    with psycopg.connect(stack.postgres_dsn(), autocommit=True) as conn:
        try:
            conn.execute("UPDATE members SET status = 'SUSPENDED' WHERE member_id = %s", (MEMBER,))
            status_within(url, second, 403)
        finally:
            conn.execute("UPDATE members SET status = 'ACTIVE' WHERE member_id = %s", (MEMBER,))
    status_within(url, second, 200)

    assert second_id in launcher(stack_env, "keys", "revoke", MEMBER, "--key-id", second_id).stdout
    status_within(url, second, 401)
    with psycopg.connect(stack.postgres_dsn()) as conn:
        stored = [r[0] for r in conn.execute("SELECT key_sha256 FROM api_keys WHERE member_id = %s", (MEMBER,))]
    assert first not in stored and second not in stored and all(len(h) == 64 for h in stored)


def test_keys_for_an_unknown_member_are_refused(stack_env, stack):
    proc = launcher(stack_env, "keys", "issue", "M999999", check=False)
    assert proc.returncode == 1 and "no member M999999" in proc.stderr


@pytest.fixture(autouse=True)
def _reset_seed_key(stack, world):
    """Rotation revokes the member's generated key too: give it back for the tests after these."""
    yield
    with psycopg.connect(stack.postgres_dsn(), autocommit=True) as conn:
        conn.execute(
            "UPDATE api_keys SET status = 'ACTIVE', revoked_at = NULL "
            "WHERE member_id = %s AND label LIKE 'generated test data%%'",
            (MEMBER,),
        )
