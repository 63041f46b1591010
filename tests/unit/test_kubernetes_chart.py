"""The Helm chart (platform/kubernetes/brokerstream) lints, renders, and says what the native stack says:
its topics, users, ACLs and connectors are the catalogs', its workloads get the native settings."""

from __future__ import annotations

import re
import subprocess

import pytest
import yaml

from brokerstream.clients import kafka_security
from brokerstream.clients.connectors import load_specs
from brokerstream.clients.flinkjobs import pnl_arguments
from brokerstream.common import config
from brokerstream.common.topics import load_catalog
from brokerstream.launcher.kubernetes import CATALOG_FILE, CHART, OPERATIONS, RESOURCE_TYPES, catalog
from brokerstream.launcher.layout import Layout

# The Kubernetes version rendered for (a Helm built by `go install` assumes 1.20, older than the chart needs)
KUBE_VERSION = "1.30.0"
DNS_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")


def helm(*args: str) -> subprocess.CompletedProcess:
    binary = Layout(config.load(environ={})).helm
    if not binary.exists():
        pytest.fail(f"{binary} is missing: ./brokerstream install --test-tools builds it")
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=120)


def render_text(*sets: str) -> str:
    proc = helm("template", "bs", str(CHART), "--kube-version", KUBE_VERSION, *(a for s in sets for a in ("--set", s)))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def render(*sets: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(render_text(*sets)) if d]


def kubevalidate(manifests: str) -> subprocess.CompletedProcess:
    binary = Layout(config.load(environ={})).kubevalidate
    if not binary.exists():
        pytest.fail(f"{binary} is missing: ./brokerstream install --test-tools builds it")
    return subprocess.run([str(binary)], input=manifests, capture_output=True, text=True, timeout=60)


def of_kind(docs: list[dict], kind: str) -> list[dict]:
    return [d for d in docs if d["kind"] == kind]


@pytest.fixture(scope="module")
def docs():
    return render()


def test_the_chart_lints():
    proc = helm("lint", str(CHART), "--strict", "--kube-version", KUBE_VERSION)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_core_resources_decode_strictly_into_the_kubernetes_api_types():
    proc = kubevalidate(render_text())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line.split() for line in proc.stdout.splitlines()]
    assert {w[2] for w in lines if w[0] == "valid"} == {"Service", "StatefulSet", "Deployment", "ConfigMap", "Job"}
    # the operators' kinds have no API types here: the tests below check them against the native catalogs
    assert {w[2] for w in lines if w[0] == "unchecked"} == {
        "Kafka",
        "KafkaNodePool",
        "KafkaTopic",
        "KafkaUser",
        "KafkaConnect",
        "KafkaConnector",
        "FlinkDeployment",
        "Cluster",
    }


@pytest.mark.parametrize(
    "spec, wrong",
    [
        ("replicaz: 2", "replicaz"),
        ("replicas: two", "replicas"),
        ("template: {spec: {containers: [{name: a, image: b, port: 80}]}}", "port"),
    ],
)
def test_the_validator_refuses_what_the_api_server_would(spec, wrong):
    proc = kubevalidate(f"---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: x}}\nspec:\n  {spec}\n")
    assert proc.returncode == 1 and wrong in proc.stdout, proc.stdout


def test_the_committed_catalog_is_made_from_the_native_catalogs():
    assert CATALOG_FILE.read_text() == catalog(config.load(environ={})), (
        "files/catalog.yaml is stale: ./brokerstream kubernetes catalog"
    )


def test_every_resource_has_a_valid_name_and_nothing_is_exposed_outside_the_cluster(docs):
    for d in docs:
        assert DNS_NAME.match(d["metadata"]["name"]), d["metadata"]["name"]
    for svc in of_kind(docs, "Service"):
        assert svc["spec"].get("type", "ClusterIP") == "ClusterIP", svc["metadata"]["name"]


def test_the_topics_are_the_catalogs_sized_for_the_cluster(docs):
    values = yaml.safe_load((CHART / "values.yaml").read_text())["kafka"]
    cfg = config.load(
        environ={
            "BS_TOPIC_PARTITIONS": str(values["topicPartitions"]),
            "BS_TICK_PARTITIONS": str(values["tickPartitions"]),
            "BS_KAFKA_BROKERS": "3",
        }
    )
    want = {t.name: (t.partitions, values["replicas"], t.config) for t in load_catalog(cfg)}
    got = {
        t["spec"]["topicName"]: (t["spec"]["partitions"], t["spec"]["replicas"], t["spec"].get("config", {}))
        for t in of_kind(docs, "KafkaTopic")
    }
    assert got == want
    assert all(t["metadata"]["labels"]["strimzi.io/cluster"] == values["cluster"] for t in of_kind(docs, "KafkaTopic"))


def test_the_users_and_acls_are_the_secure_profiles(docs):
    users = {u["metadata"]["name"]: u for u in of_kind(docs, "KafkaUser")}
    assert set(users) == set(kafka_security.PRINCIPALS)
    for principal, user in users.items():
        assert user["spec"]["authentication"]["type"] == "scram-sha-512"
        got = sorted(
            (a["resource"]["type"], a["resource"].get("name", "kafka-cluster"), op, a["type"])
            for a in user["spec"].get("authorization", {}).get("acls", [])
            for op in a["operations"]
        )
        want = sorted(
            (RESOURCE_TYPES[a.resource], a.name, OPERATIONS[a.operation], a.permission.lower())
            for a in kafka_security.acls()
            if a.principal == principal
        )
        assert got == want, principal
    # only the gateway may write what members send
    writers = {
        name
        for name, u in users.items()
        for a in u["spec"].get("authorization", {}).get("acls", [])
        if a["resource"].get("name") == "orders" and a["type"] == "allow"
    }
    assert writers == {"gateway"}
    (kafka,) = of_kind(docs, "Kafka")
    assert kafka["spec"]["kafka"]["authorization"]["superUsers"] == [kafka_security.ADMIN]


@pytest.mark.parametrize("sink_tasks", [0, 3])
def test_the_connectors_are_connectors_json(sink_tasks):
    docs = render(f"connect.sinkTasks={sink_tasks}")
    got = {c["metadata"]["name"]: c["spec"] for c in of_kind(docs, "KafkaConnector")}
    specs = {s.name: s.config for s in load_specs()}
    assert set(got) == set(specs)
    for name, conf in specs.items():
        spec = got[name]
        assert spec["class"] == conf["connector.class"]
        tasks = sink_tasks if sink_tasks and name.startswith("sink-") else int(conf.get("tasks.max", "1"))
        assert spec["tasksMax"] == tasks, name
        assert spec["config"] == {k: v for k, v in conf.items() if k not in ("connector.class", "tasks.max")}


def test_connect_runs_with_the_native_workers_settings(docs):
    from brokerstream.launcher.services.connect import Connect

    cfg = config.load(environ={})
    native = dict(line.split("=", 1) for line in Connect(cfg, Layout(cfg)).properties().splitlines() if "=" in line)
    (connect,) = of_kind(docs, "KafkaConnect")
    chart = {k: str(v) for k, v in connect["spec"]["config"].items()}
    # everything but addresses, files and replication (the cluster's own) is the same
    local = ("bootstrap.servers", "listeners", "rest.", "plugin.", "value.converter.apicurio.registry.url")
    shared = {k for k in native if not k.startswith(local) and not k.endswith("replication.factor")}
    assert shared <= set(chart), shared - set(chart)
    assert {k: chart[k] for k in shared} == {k: native[k] for k in shared}
    env = {e["name"] for e in connect["spec"]["template"]["connectContainer"]["env"]}
    placeholders = {m for s in load_specs() for v in s.config.values() for m in re.findall(r"\$\{env:(\w+)\}", v)}
    assert placeholders <= env


def test_the_order_flow_is_a_statefulset_with_the_native_settings_and_stable_names(docs):
    from brokerstream.launcher.services.streams import StreamsApp

    cfg = config.load(environ={})
    native = StreamsApp(cfg, Layout(cfg)).environment()
    (sts,) = [s for s in of_kind(docs, "StatefulSet") if s["metadata"]["name"] == "brokerstream-streams"]
    container = sts["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert set(native) <= set(env), set(native) - set(env)
    # application.server: the pod's own stable name under the headless service
    assert env["BROKER_GATEWAY_ADVERTISED_HOST"] == f"$(POD_NAME).{sts['spec']['serviceName']}"
    assert int(env["BROKER_STREAMS_NUM_STANDBY_REPLICAS"]) >= 1
    assert sts["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "state"
    init = {c["name"] for c in sts["spec"]["template"]["spec"]["initContainers"]}
    assert init == {"login-streams", "login-gateway"}


def test_the_pnl_job_upgrades_through_savepoints_with_the_native_arguments(docs):
    (job,) = of_kind(docs, "FlinkDeployment")
    assert job["spec"]["job"]["upgradeMode"] == "savepoint"
    names = {a.split("=", 1)[0] for a in job["spec"]["job"]["args"]}
    native = {a.split("=", 1)[0] for a in pnl_arguments(config.load(environ={}))}
    assert names == native


def test_postgres_decodes_logically_and_gets_the_native_ddl(docs):
    (pg,) = of_kind(docs, "Cluster")
    assert pg["spec"]["postgresql"]["parameters"]["wal_level"] == "logical"
    ddl = {c["metadata"]["name"]: c for c in of_kind(docs, "ConfigMap")}["brokerstream-ddl"]["data"]
    sql = config.ROOT / "sql" / "postgres"
    assert ddl == {p.name: p.read_text().rstrip("\n") for p in sorted(sql.glob("*.sql"))}


def test_the_jvms_that_compile_with_c1_alone_natively_do_so_in_the_chart(docs):
    native = config.load(environ={})["BS_JAVA_C1_ONLY"].split(",")
    assert {"registry", "flink-jobmanager"} <= set(native)
    (job,) = of_kind(docs, "FlinkDeployment")
    assert "-XX:TieredStopAtLevel=1" in job["spec"]["flinkConfiguration"]["env.java.opts.jobmanager"].split()
    assert "env.java.opts.taskmanager" not in job["spec"]["flinkConfiguration"]
    (registry,) = [d for d in of_kind(docs, "Deployment") if d["metadata"]["name"] == "brokerstream-registry"]
    env = {e["name"]: e.get("value") for e in registry["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert "-XX:TieredStopAtLevel=1" in env["JAVA_TOOL_OPTIONS"].split()


def test_flinks_rest_metrics_refresh_as_often_as_natively(docs, tmp_path):
    from brokerstream.common import config
    from brokerstream.launcher.stack import Stack

    native = Stack(config.load(environ={"BS_DATA_DIR": str(tmp_path)})).services["flink-jobmanager"].config()
    (job,) = of_kind(docs, "FlinkDeployment")
    key = "metrics.fetcher.update-interval"
    assert job["spec"]["flinkConfiguration"][key] == native[key] == "1000"
