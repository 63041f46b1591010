"""The secure Kafka profile as the launcher describes it: material, broker settings, client logins and
ACLs (no broker started here; tests/secure runs the order flow under the profile on a real stack)."""

from __future__ import annotations

import json
import stat
import subprocess

import pytest

from brokerstream.clients import kafka_security
from brokerstream.clients.kafka_clients import client_conf
from brokerstream.common import config
from brokerstream.common.config import ConfigError
from brokerstream.launcher.layout import Layout
from brokerstream.launcher.services import all_services
from brokerstream.launcher.services.kafka import ClusterSizeError, Kafka, _argfile_quote
from brokerstream.ops.streamsql import with_kafka_login


def cfg_of(tmp_path, **env):
    return config.load(environ={"BS_DATA_DIR": str(tmp_path / "data"), **env})


def secure(tmp_path, **env):
    cfg = cfg_of(tmp_path, BS_KAFKA_SECURITY="sasl_ssl", **env)
    kafka_security.ensure_material(cfg)
    return cfg


def props(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line)


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_plaintext_is_the_default_and_adds_nothing(tmp_path):
    cfg = cfg_of(tmp_path)
    assert cfg.kafka_security == "plaintext" and not cfg.kafka_secure
    assert client_conf(cfg) == {"bootstrap.servers": "127.0.0.1:19092"}
    assert kafka_security.java_client_file(cfg, "streams") is None
    assert not kafka_security.ensure_material(cfg)
    assert not (cfg.data_dir / "security").exists()
    assert "sasl" not in all_services(cfg)["kafka"].properties()


def test_an_unknown_mode_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="BS_KAFKA_SECURITY"):
        _ = cfg_of(tmp_path, BS_KAFKA_SECURITY="ssl").kafka_secure


def test_material_is_private_verifies_against_the_ca_and_is_made_once(tmp_path):
    cfg = secure(tmp_path)
    d = kafka_security.security_dir(cfg)
    assert mode(d) == 0o700
    for secret in ("ca.key", "broker.key", "broker.pem", "credentials.json", "client-tools.properties"):
        assert mode(d / secret) == 0o600, secret
    creds = json.loads((d / "credentials.json").read_text())
    assert set(creds) == set(kafka_security.PRINCIPALS)
    assert len(set(creds.values())) == len(creds) and all(len(p) >= 32 for p in creds.values())
    check = subprocess.run(
        ["openssl", "verify", "-CAfile", str(d / "ca.pem"), str(d / "broker.crt")], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr
    text = subprocess.run(
        ["openssl", "x509", "-in", str(d / "broker.crt"), "-noout", "-text"], capture_output=True, text=True, check=True
    ).stdout
    assert "IP Address:127.0.0.1" in text and "CN = broker" in text
    before = (d / "broker.pem").read_text()
    assert not kafka_security.ensure_material(cfg)  # a second `up` keeps what the brokers know
    assert (d / "broker.pem").read_text() == before and json.loads((d / "credentials.json").read_text()) == creds


def test_brokers_speak_sasl_ssl_to_clients_and_tls_with_certificates_to_controllers(tmp_path):
    cfg = secure(tmp_path)
    p = props(all_services(cfg)["kafka"].properties())
    assert p["listeners"] == "BROKER://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093"
    assert p["listener.security.protocol.map"] == "BROKER:SASL_SSL,CONTROLLER:SSL"
    assert p["listener.name.controller.ssl.client.auth"] == "required"
    assert p["allow.everyone.if.no.acl.found"] == "false"
    assert p["super.users"] == "User:admin;User:broker"
    assert 'username="admin"' in p["listener.name.broker.scram-sha-512.sasl.jaas.config"]
    connect = props(all_services(cfg)["connect"].properties())
    for prefix in ("", "producer.", "consumer.", "admin."):
        assert connect[prefix + "security.protocol"] == "SASL_SSL"
        assert 'username="connect"' in connect[prefix + "sasl.jaas.config"]


def test_every_client_logs_in_as_its_own_principal_and_order_writers_as_the_gateway(tmp_path):
    cfg = secure(tmp_path)
    creds = json.loads(kafka_security.credentials_file(cfg).read_text())
    tools = client_conf(cfg, **{"group.id": "g"})
    assert (tools["security.protocol"], tools["sasl.mechanisms"]) == ("SASL_SSL", "SCRAM-SHA-512")
    assert (tools["sasl.username"], tools["sasl.password"], tools["group.id"]) == ("tools", creds["tools"], "g")
    assert client_conf(cfg, kafka_security.GATEWAY)["sasl.username"] == "gateway"
    env = all_services(cfg)["streams"].environment()
    assert env["BROKER_KAFKA_LOGIN"].endswith("client-streams.properties")
    assert env["BROKER_GATEWAY_KAFKA_LOGIN"].endswith("client-gateway.properties")
    assert not any(creds[p] in v for p in creds for v in env.values())  # files, not secrets, in the env
    from brokerstream.clients.flinkjobs import pnl_arguments

    args = pnl_arguments(cfg)
    assert any(a.startswith("--kafka.login=") and a.endswith("client-flink.properties") for a in args)
    assert not any(creds[p] in a for p in creds for a in args)
    with pytest.raises(kafka_security.SecurityError, match="unknown Kafka principal"):
        client_conf(cfg, "mallory")


def test_only_the_gateway_may_write_orders_and_cancels(tmp_path):
    acls = kafka_security.acls()
    for topic in ("orders", "order-commands"):
        writers = {
            a.principal
            for a in acls
            if a.resource == "TOPIC" and a.name == topic and a.operation == "WRITE" and a.permission == "ALLOW"
        }
        assert writers == {"gateway"}
        for p in set(kafka_security.PRINCIPALS) - {"admin", "gateway"}:
            # a principal allowed every topic is denied them explicitly (DENY wins over ALLOW)
            assert kafka_security.Acl(p, "TOPIC", topic, "WRITE", "DENY") in acls
    assert {a.name for a in acls if a.principal == "gateway"} == {"orders", "order-commands"}


def test_only_the_order_flow_may_write_the_book_its_triggers_and_the_results():
    acls = kafka_security.acls()
    for topic in ("orders.resting", "order-triggers", "order-triggers.fast", "order-results"):
        for p in set(kafka_security.PRINCIPALS) - {"admin", "gateway", "streams"}:
            assert kafka_security.Acl(p, "TOPIC", topic, "WRITE", "DENY") in acls, (p, topic)
        assert not [a for a in acls if a.principal == "streams" and a.name == topic and a.permission == "DENY"]
        # the gateway is allowed nothing but orders and cancels in the first place
        assert not [a for a in acls if a.principal == "gateway" and a.name == topic]


def test_scram_users_reach_the_format_through_an_argument_file(tmp_path):
    cfg = secure(tmp_path)
    args = kafka_security.scram_format_arguments(cfg)
    assert args.count("--add-scram") == len(kafka_security.PRINCIPALS)
    assert _argfile_quote('a"b\\c') == '"a\\"b\\\\c"'


def test_a_folder_made_plaintext_refuses_the_secure_profile(tmp_path):
    plain, sec = cfg_of(tmp_path), cfg_of(tmp_path, BS_KAFKA_SECURITY="sasl_ssl")
    Kafka(plain, Layout(plain)).check_cluster_size()
    with pytest.raises(ClusterSizeError, match="security plaintext"):
        Kafka(sec, Layout(sec)).check_cluster_size()


def test_flink_sql_tables_log_in_as_flink(tmp_path):
    statement = (
        "CREATE TABLE t (x INT) WITH ('connector' = 'kafka', "
        "'properties.bootstrap.servers' = '127.0.0.1:19092', 'topic' = 't')"
    )
    assert with_kafka_login(cfg_of(tmp_path), statement) == statement
    out = with_kafka_login(secure(tmp_path), statement)
    assert "'properties.security.protocol' = 'SASL_SSL'," in out
    assert 'username="flink"' in out and out.endswith("'topic' = 't')")
    assert "org.apache.flink.kafka.shaded.org.apache.kafka.common.security.scram.ScramLoginModule" in out


def test_with_nodes_on_several_hosts_the_certificate_names_every_nodes_address(tmp_path):
    cfg = secure(
        tmp_path,
        BS_BIND="10.0.0.9",
        BS_KAFKA_BROKERS="3",
        BS_HOSTS="kafka=10.0.0.1,kafka-2=10.0.0.2,kafka-3=10.0.0.3",
    )
    d = kafka_security.security_dir(cfg)
    text = subprocess.run(
        ["openssl", "x509", "-in", str(d / "broker.crt"), "-noout", "-ext", "subjectAltName"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.9", "127.0.0.1"):
        assert f"IP Address:{address}" in text, text
    node = props(all_services(cfg)["kafka-2"].service.properties())  # a Remote here: placed on 10.0.0.2
    assert node["advertised.listeners"] == "BROKER://10.0.0.2:19094"
