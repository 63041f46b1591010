"""The launcher's description of services run as several processes (streams app instances, Flink
TaskManagers) and of services that run elsewhere (no process started here)."""

from __future__ import annotations

import pytest

from brokerstream.common import config
from brokerstream.launcher.stack import Stack


def cfg_of(tmp_path, **env):
    return config.load(environ={"BS_DATA_DIR": str(tmp_path / "data"), "BS_CPU_PRIORITY": "off", **env})


def test_one_instance_is_the_default(tmp_path):
    stack = Stack(cfg_of(tmp_path))
    assert [n for n in stack.services if n.startswith("streams")] == ["streams"]
    assert stack.cfg.gateway_urls == ["http://127.0.0.1:19080"]
    assert stack.expand(["streams", "kafka"]) == ["streams", "kafka"]


@pytest.mark.parametrize("count", [2, 4])
def test_each_instance_has_its_own_process_state_gateway_and_advertised_address(tmp_path, count):
    stack = Stack(cfg_of(tmp_path, BS_STREAMS_INSTANCES=str(count)))
    apps = [s for n, s in stack.services.items() if n.startswith("streams")]
    assert [s.name for s in apps] == ["streams"] + [f"streams-{n}" for n in range(2, count + 1)]
    envs = [s.environment() for s in apps]
    own = ("BROKER_STATE_DIR", "BROKER_GATEWAY_PORT", "BROKER_METRICS_PORT")
    for key in own:
        assert len({e[key] for e in envs}) == count, key
    # query forwarding: each advertises the address its own gateway listens on
    assert [f"http://{e['BROKER_GATEWAY_ADVERTISED_HOST']}:{e['BROKER_GATEWAY_PORT']}" for e in envs] == (
        stack.cfg.gateway_urls
    )
    # the same application otherwise: one consumer group sharing the partitions
    same = {k for k in envs[0] if k not in own}
    assert all(e[k] == envs[0][k] for e in envs for k in same)
    assert {s.cpu_group for s in apps} == {"orders"}
    # `streams` names them all, and they come after what they need
    assert stack.expand(["streams"]) == [s.name for s in apps]
    order = stack.closure(["streams"])
    assert order[-count:] == [s.name for s in apps] and "kafka" in order and "registry" in order
    ports = [p for s in stack.services.values() for p in s.ports().values()]
    assert len(ports) == len(set(ports)), "two services share a port"


@pytest.mark.parametrize("count", ["0", "5", "two"])
def test_an_instance_count_without_ports_is_refused(tmp_path, count):
    with pytest.raises((config.ConfigError, ValueError)):
        Stack(cfg_of(tmp_path, BS_STREAMS_INSTANCES=count))


def test_each_taskmanager_has_its_own_ports_and_the_slots_spread_over_them(tmp_path):
    stack = Stack(cfg_of(tmp_path, BS_FLINK_TASKMANAGERS="2"))
    first, second = stack.services["flink-taskmanager"], stack.services["flink-taskmanager-2"]
    assert first.ports() != second.ports()
    argv = " ".join(second.launch().argv)
    assert f"-Dtaskmanager.rpc.port={second.ports()['rpc']}" in argv
    assert f"-Dtaskmanager.data.port={second.ports()['data']}" in argv
    assert "-D" not in " ".join(first.launch().argv)  # the shared config file names the first one's ports
    assert first.config()["taskmanager.load-balance.mode"] == "SLOTS"
    assert stack.expand(["flink-taskmanager"]) == ["flink-taskmanager", "flink-taskmanager-2"]
    assert second.needs == ("flink-jobmanager",) and second.cpu_group == "pnl"


def test_a_stack_still_running_more_instances_than_configured_stops_them_all(tmp_path):
    import json
    import os

    cfg = cfg_of(tmp_path)
    run = cfg.run_dir
    run.mkdir(parents=True, exist_ok=True)
    # a pid file of instance 2 naming a live process (this test's own): a larger setting started it
    (run / "streams-2.pid").write_text(json.dumps({"pid": os.getpid()}))
    stack = Stack(cfg)
    assert stack.expand(["streams"]) == ["streams", "streams-2"]
    assert stack.services["streams-2"].ports()["gateway"] == cfg.gateway_port(2)
    # ... and `up` never starts it again: it starts what the stack is configured for
    assert "streams-2" not in stack.closure(["streams"]) and "streams-2" not in stack.closure(None)
    with pytest.raises(KeyError):
        stack.closure(["streams-2"])
    (run / "streams-2.pid").unlink()
    assert Stack(cfg).expand(["streams"]) == ["streams"]


def test_an_empty_list_of_services_names_none_and_only_none_names_the_whole_stack(tmp_path):
    # a computed list that came out empty (no instance beyond the wanted count) must not stop everything
    stack = Stack(cfg_of(tmp_path))
    assert stack.closure([]) == [] and stack.down([]) == {}
    assert "kafka" in stack.closure(None)


def test_external_services_are_waited_for_at_their_addresses_and_never_started_or_stopped(tmp_path):
    from brokerstream.launcher.services.external import External

    cfg = cfg_of(
        tmp_path,
        BS_EXTERNAL_SERVICES="postgres, kafka,registry,connect,flink",
        BS_KAFKA_BOOTSTRAP="10.0.0.5:9092,10.0.0.6:9092",
        BS_REGISTRY_URL="http://10.0.0.7:8081",
        BS_KAFKA_BROKERS="3",
    )
    stack = Stack(cfg)
    outside = {n for n, s in stack.services.items() if isinstance(s, External)}
    assert outside == {
        "postgres",
        "kafka",
        "registry",
        "connect",
        "flink-jobmanager",
        "flink-taskmanager",
        "flink-sql-gateway",
    }
    assert not any(n.startswith("kafka-") for n in stack.services)  # the cluster is one address, not three nodes
    assert stack.services["kafka"].address == "10.0.0.5:9092,10.0.0.6:9092"
    assert stack.services["registry"].address == "http://10.0.0.7:8081"
    # our apps still start here, after the external services they need
    assert stack.services["streams"].needs == ("kafka", "registry")
    assert stack.closure(["streams"])[-1] == "streams"
    with pytest.raises(RuntimeError, match="external"):
        stack.services["kafka"].launch()
    assert stack.down(["kafka", "postgres"]) == {
        "kafka": "external: left running",
        "postgres": "external: left running",
    }
    # the app's settings point at the external addresses
    assert stack.services["streams"].environment()["BROKER_KAFKA_BOOTSTRAP"] == "10.0.0.5:9092,10.0.0.6:9092"
    assert stack.services["streams"].environment()["BROKER_REGISTRY_URL"] == "http://10.0.0.7:8081"


def test_an_unknown_external_service_is_refused_by_name(tmp_path):
    with pytest.raises(config.ConfigError, match="zookeeper unknown"):
        Stack(cfg_of(tmp_path, BS_EXTERNAL_SERVICES="kafka,zookeeper"))


@pytest.mark.parametrize("gc", ["G1", "Parallel", "Serial"])
def test_every_jvm_the_launcher_starts_runs_the_configured_collector_and_no_other(tmp_path, gc):
    from brokerstream.launcher.services.base import GARBAGE_COLLECTORS

    stack = Stack(cfg_of(tmp_path, BS_JAVA_GC=gc))
    chosen = set(GARBAGE_COLLECTORS[gc])
    others = {f for name, flags in GARBAGE_COLLECTORS.items() if name != gc for f in flags} - chosen
    jvms = 0
    for name, service in stack.services.items():
        if name == "postgres":
            continue
        opts = service.config()["env.java.opts.all"] if name.startswith("flink") else " ".join(service.launch().argv)
        assert chosen <= set(opts.split()), f"{name}: {opts}"
        assert not others & set(opts.split()), f"{name}: {opts}"
        jvms += 1
    assert jvms >= 6


def test_an_unknown_collector_is_refused_by_name(tmp_path):
    stack = Stack(cfg_of(tmp_path, BS_JAVA_GC="ZGC"))
    with pytest.raises(ValueError, match="BS_JAVA_GC"):
        stack.services["streams"].launch()


def _jvm_options(service) -> list[str]:
    """What a JVM the launcher starts is given: its argv, or for Flink the options its script adds."""
    launch = service.launch()
    flink = {k: v for k, v in (launch.env or {}).items() if k.startswith("FLINK_ENV_JAVA_OPTS_")}
    return " ".join(flink.values()).split() if service.name.startswith("flink") else list(launch.argv)


@pytest.mark.parametrize(
    "named, c1",
    [
        ("", set()),
        (
            "registry,flink-jobmanager,flink-sql-gateway",
            {"registry", "flink-jobmanager", "flink-sql-gateway"},
        ),
        # a group name covers every instance of it
        (" streams , flink-taskmanager", {"streams", "streams-2", "flink-taskmanager", "flink-taskmanager-2"}),
        ("kafka,connect,baseline", {"kafka", "connect", "baseline"}),
    ],
)
def test_the_jvms_named_for_c1_alone_compile_with_it_and_no_other_does(tmp_path, named, c1):
    stack = Stack(cfg_of(tmp_path, BS_JAVA_C1_ONLY=named, BS_STREAMS_INSTANCES="2", BS_FLINK_TASKMANAGERS="2"))
    jvms = {name: s for name, s in stack.services.items() if name != "postgres"}
    assert {"streams-2", "flink-taskmanager-2", "baseline", "flink-sql-gateway"} <= set(jvms)
    got = {name for name, s in jvms.items() if "-XX:TieredStopAtLevel=1" in _jvm_options(s)}
    assert got == c1


def test_the_default_compiles_the_control_plane_with_c1_alone_and_the_order_path_with_both(tmp_path):
    stack = Stack(cfg_of(tmp_path))
    c1 = {n for n, s in stack.services.items() if n != "postgres" and "-XX:TieredStopAtLevel=1" in _jvm_options(s)}
    assert c1 == {"registry", "flink-jobmanager", "flink-sql-gateway"}


def test_an_unknown_jvm_named_for_c1_is_refused_by_name(tmp_path):
    stack = Stack(cfg_of(tmp_path, BS_JAVA_C1_ONLY="registry,zookeeper"))
    with pytest.raises(ValueError, match="BS_JAVA_C1_ONLY.*zookeeper"):
        stack.services["registry"].launch()


PLACED = (
    "postgres=10.0.0.1,kafka=10.0.0.1,registry=10.0.0.1,streams=10.0.0.1,"
    "kafka-2=10.0.0.2,connect=10.0.0.2,streams-2=10.0.0.2,"
    "kafka-3=10.0.0.3,flink-jobmanager=10.0.0.3,flink-taskmanager=10.0.0.3,flink-sql-gateway=10.0.0.3"
)


def placed(tmp_path, here: str):
    return cfg_of(
        tmp_path,
        BS_BIND=here,
        BS_HOSTS=PLACED,
        BS_KAFKA_BROKERS="3",
        BS_STREAMS_INSTANCES="2",
        BS_KAFKA_SECURITY="plaintext",
    )


def test_services_placed_on_other_hosts_are_only_waited_for_and_everyone_finds_each_at_its_host(tmp_path):
    from brokerstream.launcher.services.external import External

    cfg = placed(tmp_path, "10.0.0.2")
    stack = Stack(cfg)
    local = {n for n, s in stack.services.items() if not isinstance(s, External) and not s.optional}
    assert local == {"kafka-2", "connect", "streams-2"}
    remote = stack.services["kafka"]
    assert remote.address.startswith("10.0.0.1:") and remote.needs == ()
    with pytest.raises(RuntimeError):
        remote.launch()
    # clients: each address from its service's host
    assert cfg.kafka_bootstrap == "10.0.0.1:19092,10.0.0.2:19094,10.0.0.3:19096"
    assert cfg.registry_url.startswith("http://10.0.0.1:") and cfg["BS_POSTGRES_HOST"] == "10.0.0.1"
    assert cfg.connect_url.startswith("http://10.0.0.2:") and cfg.flink_url.startswith("http://10.0.0.3:")
    assert cfg.gateway_urls == ["http://10.0.0.1:19080", "http://10.0.0.2:19101"]
    # the local Kafka node listens and advertises here, and knows the other voters at their hosts
    props = dict(line.split("=", 1) for line in stack.services["kafka-2"].properties().splitlines())
    assert props["listeners"].startswith("PLAINTEXT://10.0.0.2:19094")
    assert props["advertised.listeners"] == "PLAINTEXT://10.0.0.2:19094"
    assert props["controller.quorum.voters"] == "1@10.0.0.1:19093,2@10.0.0.2:19095,3@10.0.0.3:19097"
    env = stack.services["streams-2"].environment()
    assert env["BROKER_GATEWAY_ADVERTISED_HOST"] == "10.0.0.2"
    assert env["BROKER_KAFKA_BOOTSTRAP"] == cfg.kafka_bootstrap
    assert "10.0.0.1" in stack.services["connect"].properties()  # the registry's host for its converter
    flink = Stack(placed(tmp_path, "10.0.0.3")).services["flink-jobmanager"].config()
    assert flink["jobmanager.rpc.address"] == flink["taskmanager.host"] == "10.0.0.3"


def test_each_provisioner_runs_once_on_the_host_of_its_first_service(tmp_path):
    from brokerstream.launcher.stack import Provisioner

    ran = []
    provisioners = [
        Provisioner(name, needs, lambda cfg, name=name: ran.append(name) or "done")
        for name, needs in (
            ("topics", ("kafka",)),
            ("connectors", ("connect", "registry")),
            ("job", ("flink-jobmanager",)),
        )
    ]
    for here in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):
        stack = Stack(placed(tmp_path, here), provisioners=provisioners)
        assert stack.provision()
    assert ran == ["topics", "connectors", "job"]


@pytest.mark.parametrize("hosts", ["nosuch=10.0.0.1", "kafka", "kafka=", "=10.0.0.1"])
def test_a_placement_of_no_known_service_or_without_an_address_is_refused(tmp_path, hosts):
    with pytest.raises(config.ConfigError):
        Stack(cfg_of(tmp_path, BS_HOSTS=hosts))


def test_up_right_after_a_kill_starts_a_fresh_process_once_the_dying_one_is_gone(tmp_path):
    """`up` finds the recorded process still alive but not healthy (killed a moment before; a big JVM takes a
    while to exit): it waits, and when that process is gone it starts the service instead of failing."""
    import dataclasses
    import sys
    import time

    from brokerstream.launcher.procs import spawn, terminate
    from brokerstream.launcher.services.base import Launch, Service

    marker = tmp_path / "healthy"

    @dataclasses.dataclass
    class Marked(Service):
        def __post_init__(self) -> None:
            self.name = "marked"

        def launch(self) -> Launch:
            code = f"import pathlib, time; pathlib.Path({str(marker)!r}).touch(); time.sleep(60)"
            return Launch([sys.executable, "-c", code])

        def healthy(self) -> bool:
            return marker.exists()

    cfg = cfg_of(tmp_path, BS_START_TIMEOUT="20")
    stack = Stack(cfg)
    svc = Marked(cfg, stack.layout)
    stack.services[svc.name] = svc
    pidfile = stack.layout.pidfile(svc.name)
    dying = spawn(["sleep", "1"], log=svc.log, pidfile=pidfile)
    t0 = time.monotonic()
    try:
        outcome = stack._start_one(svc)
        assert outcome.ok, outcome.message
        assert time.monotonic() - t0 >= 0.9  # it waited for the dying process, not started beside it
        fresh = pidfile.live_pid()
        assert fresh is not None and fresh != dying
    finally:
        terminate(pidfile, grace=5)


def test_a_process_it_started_that_exits_before_it_is_healthy_is_a_failed_start(tmp_path):
    import dataclasses

    from brokerstream.launcher.services.base import Launch, Service

    @dataclasses.dataclass
    class Crashing(Service):
        def __post_init__(self) -> None:
            self.name = "crashing"

        def launch(self) -> Launch:
            return Launch(["sh", "-c", "echo cannot bind; exit 3"])

        def healthy(self) -> bool:
            return False

    cfg = cfg_of(tmp_path, BS_START_TIMEOUT="20")
    stack = Stack(cfg)
    svc = Crashing(cfg, stack.layout)
    stack.services[svc.name] = svc
    outcome = stack._start_one(svc)
    assert not outcome.ok and "exited before it was healthy" in outcome.message and "cannot bind" in outcome.message
