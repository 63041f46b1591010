"""API keys: random, long, shown once; only hashes and a public id are kept."""

from brokerstream.gen.refdata import key_id, sha256_hex
from brokerstream.ops import keys


def test_keys_are_random_prefixed_and_long():
    a, b = keys.new_key(), keys.new_key()
    assert a != b
    assert a.startswith("bsk_") and len(a) == 4 + 43  # 32 random bytes, base64url
    assert set(a[4:]) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def test_a_key_id_names_a_key_without_giving_it_away():
    k = keys.new_key()
    digest = sha256_hex(k)
    assert key_id(digest) == "k_" + digest[:12]
    assert k[4:16] not in key_id(digest)
