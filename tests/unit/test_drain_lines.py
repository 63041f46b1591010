"""What `bench drain` prints of its cost: CPU per order by service and, of it, the JIT compilers' warm-up."""

from brokerstream.loadtest.bench.drain import DrainResult


def result(**cost) -> DrainResult:
    return DrainResult(
        orders=1000,
        warmup=100,
        prefill_rate=5000.0,
        restart_seconds=3.0,
        drain_seconds=0.5,
        throughput=2000.0,
        latency_ms={"p50": 10.0, "p99": 40.0},
        outcomes={"ACCEPTED": 1000},
        ticks_per_second=0.0,
        **cost,
    )


def test_the_drains_cost_names_the_compilers_share_when_there_is_one():
    plain = "\n".join(result(cpu_us_per_order={"streams": 50.0, "kafka": 9.6}).lines())
    assert "CPU per order while draining (ticks included): 60 us: streams 50, kafka 10" in plain
    assert "JIT" not in plain
    warm = result(cpu_us_per_order={"streams": 50.0}, jit_us_per_order={"streams": 12.4, "kafka": 0.3}).lines()
    assert "  of which the JVMs' JIT compilers 13 us (warm-up, not per order)" in warm
