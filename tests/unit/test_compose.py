"""The compose file describes the same stack as the native launcher (validated without an engine)."""

import re
import shutil
import subprocess

import pytest
import yaml

from brokerstream.common import config

COMPOSE = config.ROOT / "platform" / "compose" / "docker-compose.yml"
SERVICES = {
    "postgres",
    "kafka",
    "schema-registry",
    "ksqldb-server",
    "connect",
    "flink-jobmanager",
    "flink-taskmanager",
    "flink-sql-gateway",
    "clickhouse",
    "locust",
    "init",
    "streams",
    "ksqldb-init",
    "baseline",
}


@pytest.fixture(scope="module")
def resolved():
    if shutil.which("docker-compose") is None:
        pytest.fail("docker-compose is missing: ./brokerstream install --test-tools puts it in place")
    proc = subprocess.run(
        ["docker-compose", "-f", str(COMPOSE), "config"], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}
    )
    assert proc.returncode == 0, proc.stderr
    return yaml.safe_load(proc.stdout)


def test_compose_config_validates_and_has_every_service(resolved):
    assert SERVICES <= set(resolved["services"])


def test_every_published_port_is_on_loopback(resolved):
    for name, svc in resolved["services"].items():
        for port in svc.get("ports", []):
            published = port if isinstance(port, str) else f"{port.get('host_ip')}:{port.get('published')}"
            assert published.startswith("127.0.0.1:"), f"{name}: {port}"


def test_compose_port_defaults_are_the_native_defaults():
    defaults = config.parse_env_file(config.DEFAULTS_FILE)
    text = COMPOSE.read_text()
    found = dict(re.findall(r"\$\{(BS_[A-Z0-9_]+):-([^}]+)\}", text))
    assert found, "compose should take its ports and sizes from BS_* variables"
    for key, value in found.items():
        assert defaults.get(key) == value, f"{key}: compose default {value}, stack.env {defaults.get(key)}"


def test_init_job_provisions_from_the_same_catalog(resolved):
    init = resolved["services"]["init"]
    assert init["command"][-1] == "provision"
    sources = {v.split(":")[0] if isinstance(v, str) else v["source"] for v in init.get("volumes", [])}
    assert str(config.ROOT / "platform" / "topics.yaml") in sources


def test_the_order_flow_runs_the_same_jar_with_the_same_settings_as_natively(resolved):
    from brokerstream.launcher.layout import Layout
    from brokerstream.launcher.services.streams import StreamsApp

    streams = resolved["services"]["streams"]
    native = StreamsApp(config.load(environ={}), Layout(config.load(environ={}))).environment()
    # every setting the launcher gives the app natively, compose gives it too
    assert set(native) <= set(streams["environment"]), set(native) - set(streams["environment"])
    assert streams["environment"]["BROKER_KAFKA_BOOTSTRAP"] == "kafka:9092"
    dockerfile = (COMPOSE.parent / "apps.Dockerfile").read_text()
    assert "streams/target/streams-0.1.0.jar" in dockerfile


def test_the_baseline_is_optional_and_runs_the_same_jar_with_the_same_settings_as_natively(resolved):
    from brokerstream.launcher.layout import Layout
    from brokerstream.launcher.services.baseline import Baseline

    baseline = resolved["services"]["baseline"]
    assert baseline["profiles"] == ["baseline"]  # like the native launcher: only when asked for
    native = Baseline(config.load(environ={}), Layout(config.load(environ={}))).environment()
    assert set(native) <= set(baseline["environment"]), set(native) - set(baseline["environment"])
    assert baseline["entrypoint"][-1] == "/app/baseline.jar"
    dockerfile = (COMPOSE.parent / "apps.Dockerfile").read_text()
    assert "baseline/target/baseline-0.1.0.jar" in dockerfile and "COPY rules rules" in dockerfile


def test_ksqldb_applies_the_declarations_then_the_catalog_after_provisioning(resolved):
    job = resolved["services"]["ksqldb-init"]
    assert job["depends_on"]["init"]["condition"] == "service_completed_successfully"
    assert job["depends_on"]["ksqldb-server"]["condition"] == "service_healthy"
    mounts = (
        {v["source"]: v["target"] for v in job["volumes"]}
        if isinstance(job["volumes"][0], dict)
        else {v.split(":")[0]: v.split(":")[1] for v in job["volumes"]}
    )
    assert mounts[str(config.ROOT / "sql" / "ksqldb")] == "/sql/ksqldb"
    script = " ".join(job["command"])
    assert script.index("/sql/ksqldb/streams.sql") < script.index("/sql/ksqldb/catalog.sql")


MULTI = COMPOSE.parent / "multi-broker.yml"


def rendered(*overlays) -> dict:
    """The main file with overlays, as `docker-compose config` resolves them (no engine needed)."""
    files = [arg for path in (COMPOSE, *overlays) for arg in ("-f", str(path))]
    proc = subprocess.run(
        ["docker-compose", *files, "config"], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}
    )
    assert proc.returncode == 0, proc.stderr
    return yaml.safe_load(proc.stdout)


@pytest.fixture(scope="module")
def multi():
    return rendered(MULTI)


def test_the_multi_broker_overlay_is_the_native_three_node_cluster(multi):
    from brokerstream.launcher.services import all_services

    native_cfg = config.load(environ={"BS_KAFKA_BROKERS": "3"})
    native = {n: s for n, s in all_services(native_cfg).items() if n.startswith("kafka")}
    nodes = {n: s for n, s in multi["services"].items() if n.startswith("kafka")}
    assert set(nodes) == set(native) == {"kafka", "kafka-2", "kafka-3"}
    for name, svc in nodes.items():
        env = {k: str(v) for k, v in svc["environment"].items()}
        props = dict(line.split("=", 1) for line in native[name].properties().splitlines())
        assert env["KAFKA_NODE_ID"] == props["node.id"]
        assert env["KAFKA_CONTROLLER_QUORUM_VOTERS"].count("@") == 3
        for key in (
            "default.replication.factor",
            "min.insync.replicas",
            "offsets.topic.replication.factor",
            "transaction.state.log.replication.factor",
            "transaction.state.log.min.isr",
        ):
            assert env["KAFKA_" + key.replace(".", "_").upper()] == props[key], (name, key)
        # the host reaches each node and its metrics on their native ports
        ports = native[name].ports()
        assert sorted(p.split(":")[1] for p in svc["ports"]) == sorted([str(ports["broker"]), str(ports["metrics"])])
    bootstraps = {
        "schema-registry": "SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS",
        "connect": "BOOTSTRAP_SERVERS",
        "ksqldb-server": "KSQL_BOOTSTRAP_SERVERS",
        "init": "BS_KAFKA_BOOTSTRAP",
        "streams": "BROKER_KAFKA_BOOTSTRAP",
        "locust": "BS_KAFKA_BOOTSTRAP",
    }
    for service, key in bootstraps.items():
        assert multi["services"][service]["environment"][key].count(":9092") == 3, service
    assert multi["services"]["init"]["environment"]["BS_KAFKA_BROKERS"] == "3"
    assert str(multi["services"]["connect"]["environment"]["CONFIG_STORAGE_REPLICATION_FACTOR"]) == "3"


def test_the_overlay_takes_its_ports_from_the_native_defaults():
    defaults = config.parse_env_file(config.DEFAULTS_FILE)
    found = dict(re.findall(r"\$\{(BS_[A-Z0-9_]+):-([^}]+)\}", MULTI.read_text()))
    assert "BS_KAFKA_2_PORT" in found and "BS_KAFKA_3_PORT" in found
    for key, value in found.items():
        assert defaults.get(key) == value, f"{key}: overlay default {value}, stack.env {defaults.get(key)}"


def test_the_apps_image_copies_every_module_the_maven_reactor_builds():
    # the image runs the same `mvn package` as the native install: a module it lacks fails that build
    import re

    modules = re.findall(r"<module>([^<]+)</module>", (config.ROOT / "pom.xml").read_text())
    dockerfile = (COMPOSE.parent / "apps.Dockerfile").read_text()
    copied = set(re.findall(r"^COPY (\S+) \1$", dockerfile, re.M))
    assert modules and set(modules) <= copied, set(modules) - copied


SCALE_OUT = COMPOSE.parent / "scale-out.yml"


def test_the_scale_out_overlay_is_the_native_second_instance():
    from brokerstream.launcher.services import all_services

    services = rendered(SCALE_OUT)["services"]
    native = all_services(config.load(environ={"BS_STREAMS_INSTANCES": "2", "BS_FLINK_TASKMANAGERS": "2"}))
    for group in ("streams", "flink-taskmanager"):
        assert {n for n in native if n.startswith(group)} == {n for n in services if n.startswith(group)}, group
    # the second TaskManager joins the same JobManager with the first one's settings
    first_tm, second_tm = (
        services[n]["environment"]["FLINK_PROPERTIES"] for n in ("flink-taskmanager", "flink-taskmanager-2")
    )
    assert set(second_tm.splitlines()) <= set(first_tm.splitlines())
    assert "taskmanager.load-balance.mode: SLOTS" in second_tm
    first, second = services["streams"], services["streams-2"]
    # the same settings as the first instance but its own name (query forwarding), state and port
    differ = {k for k in first["environment"] if first["environment"][k] != second["environment"].get(k)}
    assert differ == {"BROKER_GATEWAY_ADVERTISED_HOST"}, differ
    assert second["environment"]["BROKER_GATEWAY_ADVERTISED_HOST"] == "streams-2"
    assert second["volumes"][0].split(":")[0] != first["volumes"][0].split(":")[0]
    ports = native["streams-2"].ports()
    assert [p.split(":")[1] for p in second["ports"]] == [str(ports["gateway"]), str(ports["metrics"])]
    defaults = config.parse_env_file(config.DEFAULTS_FILE)
    found = dict(re.findall(r"\$\{(BS_[A-Z0-9_]+):-([^}]+)\}", SCALE_OUT.read_text()))
    for key, value in found.items():
        assert defaults.get(key) == value, f"{key}: overlay default {value}, stack.env {defaults.get(key)}"


def test_the_connect_worker_keeps_the_native_workers_group_topics_and_rebalance_settings(resolved):
    from brokerstream.launcher.layout import Layout
    from brokerstream.launcher.services.connect import Connect

    cfg = config.load(environ={})
    native = dict(line.split("=", 1) for line in Connect(cfg, Layout(cfg)).properties().splitlines() if "=" in line)
    env = resolved["services"]["connect"]["environment"]
    # the Debezium image reads a few settings by their own names and the rest as CONNECT_<NAME>
    plain = {"group.id", "config.storage.topic", "offset.storage.topic", "status.storage.topic"}
    for key in (*plain, "exactly.once.source.support", "scheduled.rebalance.max.delay.ms"):
        name = key.upper().replace(".", "_")
        value = env.get(name if key in plain else "CONNECT_" + name)
        assert str(value) == native[key], f"{key}: compose {value}, native {native[key]}"


def test_the_jvms_that_compile_with_c1_alone_natively_do_so_in_compose(resolved):
    native = set(config.parse_env_file(config.DEFAULTS_FILE)["BS_JAVA_C1_ONLY"].split(","))
    assert native == {"registry", "flink-jobmanager", "flink-sql-gateway"}, "compose names these three"
    services = resolved["services"]
    registry = services["schema-registry"]["environment"]
    assert "-XX:TieredStopAtLevel=1" in registry["JAVA_TOOL_OPTIONS"].split()
    flink = yaml.safe_load(services["flink-jobmanager"]["environment"]["FLINK_PROPERTIES"])
    for part in ("jobmanager", "sql-gateway"):
        assert "-XX:TieredStopAtLevel=1" in flink[f"env.java.opts.{part}"].split()
    assert "env.java.opts.taskmanager" not in flink and "env.java.opts.all" not in flink
    # the TaskManager shares the properties but reads neither of those two
    for name in ("kafka", "connect", "streams"):
        assert "TieredStopAtLevel" not in str(services[name].get("environment", {})), name


def test_flinks_rest_metrics_refresh_as_often_as_natively(resolved, tmp_path):
    # the benches read the P&L job's counters through the REST API; its cache refresh sets how fresh they are
    from brokerstream.launcher.stack import Stack

    cfg = config.load(environ={"BS_DATA_DIR": str(tmp_path)})
    native = Stack(cfg).services["flink-jobmanager"].config()["metrics.fetcher.update-interval"]
    assert native == "1000"
    flink = yaml.safe_load(resolved["services"]["flink-jobmanager"]["environment"]["FLINK_PROPERTIES"])
    assert str(flink["metrics.fetcher.update-interval"]) == native
