"""The compose file describes the same stack as the native launcher (validated without an engine)."""
import re
import shutil
import subprocess

import pytest
import yaml

from brokerstream import config

COMPOSE = config.ROOT / "platform" / "compose" / "docker-compose.yml"
SERVICES = {"postgres", "kafka", "schema-registry", "ksqldb-server", "connect", "flink-jobmanager",
            "flink-taskmanager", "flink-sql-gateway", "clickhouse", "locust", "init", "streams", "ksqldb-init"}


@pytest.fixture(scope="module")
def resolved():
    if shutil.which("docker-compose") is None:
        pytest.fail("docker-compose is missing: ./brokerstream install puts it in place")
    proc = subprocess.run(["docker-compose", "-f", str(COMPOSE), "config"], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin"})
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


def test_ksqldb_applies_the_declarations_then_the_catalog_after_provisioning(resolved):
    job = resolved["services"]["ksqldb-init"]
    assert job["depends_on"]["init"]["condition"] == "service_completed_successfully"
    assert job["depends_on"]["ksqldb-server"]["condition"] == "service_healthy"
    mounts = {v["source"]: v["target"] for v in job["volumes"]} if isinstance(job["volumes"][0], dict) else \
        {v.split(":")[0]: v.split(":")[1] for v in job["volumes"]}
    assert mounts[str(config.ROOT / "sql" / "ksqldb")] == "/sql/ksqldb"
    script = " ".join(job["command"])
    assert script.index("/sql/ksqldb/streams.sql") < script.index("/sql/ksqldb/catalog.sql")
