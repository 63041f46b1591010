"""Python writers that must land where Java's partitioner (and Kafka Streams) puts a key."""

import pytest

from brokerstream.gen.produce import java_partition, murmur2


# Kafka's own vectors (clients' UtilsTest.testMurmur2)
@pytest.mark.parametrize(
    "key, expected",
    [
        ("21", -973932308),
        ("foobar", -790332482),
        ("a-little-bit-long-string", -985981536),
        ("a-little-bit-longer-string", -1486304829),
        ("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
        ("abc", 479470107),
    ],
)
def test_murmur2_is_javas(key, expected):
    assert murmur2(key.encode()) == expected


def test_the_partition_is_the_positive_hash_modulo_the_count():
    assert java_partition(b"21", 4) == (-973932308 & 0x7FFFFFFF) % 4
    assert {java_partition(f"M{n:06d}".encode(), 4) for n in range(100)} == {0, 1, 2, 3}
    assert all(java_partition(b"", n) < n for n in (1, 3, 8))
