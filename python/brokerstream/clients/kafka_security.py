"""The authenticated Kafka profile (BS_KAFKA_SECURITY=sasl_ssl): who the principals are, what each may
do, and the material they log in with.

Material lives in $BS_DATA_DIR/security, made once by `ensure_material` and readable by the stack's
user only: a CA, the brokers' certificate (one for all nodes: they share the loopback address), one
random SCRAM password per principal, and for Java clients one properties file per principal. No secret
is passed on a command line: the broker's storage format reads its SCRAM users from an argument file.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from dataclasses import dataclass
from pathlib import Path

from brokerstream.common.config import Config, kafka_node_name
from brokerstream.common.errors import UserError
from brokerstream.common.topics import POSITIONS

MECHANISM = "SCRAM-SHA-512"
# Super user: the brokers among themselves and the launcher (topics, ACLs). The controllers know the
# brokers by their TLS certificate (SCRAM cannot work before the metadata log is loaded).
ADMIN = "admin"
BROKER_CN = "broker"
GATEWAY = "gateway"
STREAMS = "streams"
PRINCIPALS = (ADMIN, GATEWAY, STREAMS, "connect", "flink", "tools")
ORDERS_TOPIC = "orders"
# What a member sends: its orders and its cancels and amends. Only the gateway,
# which checked the member's key, writes them.
MEMBER_TOPICS = (ORDERS_TOPIC, "order-commands")
# The book and its way back to the members (the member task fills an order at the price a trigger names),
# the positions topic, which is the order flow's positions store's changelog (a restoring task would
# book what it holds), and the results, which the member task reads back as the order ids it decided (a
# forged one would make a member's next order with that id a retry): only the order flow itself (the
# streams principal; the baseline logs in as it) writes them.
FLOW_TOPICS = ("orders.resting", "order-triggers", "order-triggers.fast", POSITIONS, "order-results")


@dataclass(frozen=True)
class Acl:
    principal: str
    resource: str  # TOPIC, GROUP, TRANSACTIONAL_ID, CLUSTER
    name: str  # a literal name; "*" is every name
    operation: str  # ALL, READ, WRITE, DESCRIBE, ...
    permission: str = "ALLOW"


def acls() -> list[Acl]:
    """The gateway may write orders and cancels and nothing else. Every service principal may do anything
    but that: a DENY beats any ALLOW, so an order or a cancel can only enter Kafka through the gateway,
    which checked the member's key. The book's topics (entries, triggers) and the positions only the
    streams principal writes. Reading them stays open to the services that process them."""
    out = [Acl(GATEWAY, "TOPIC", t, op) for t in MEMBER_TOPICS for op in ("WRITE", "DESCRIBE")]
    for p in PRINCIPALS:
        if p in (ADMIN, GATEWAY):
            continue
        out += [
            Acl(p, "TOPIC", "*", "ALL"),
            Acl(p, "GROUP", "*", "ALL"),
            Acl(p, "TRANSACTIONAL_ID", "*", "ALL"),
            Acl(p, "CLUSTER", "kafka-cluster", "DESCRIBE"),
            Acl(p, "CLUSTER", "kafka-cluster", "IDEMPOTENT_WRITE"),
            Acl(p, "CLUSTER", "kafka-cluster", "DESCRIBE_CONFIGS"),
            *(Acl(p, "TOPIC", t, "WRITE", "DENY") for t in MEMBER_TOPICS),
        ]
        if p != STREAMS:
            out += [Acl(p, "TOPIC", t, "WRITE", "DENY") for t in FLOW_TOPICS]
    return out


class SecurityError(UserError):
    pass


def security_dir(cfg: Config) -> Path:
    return cfg.data_dir / "security"


def ca_file(cfg: Config) -> Path:
    return security_dir(cfg) / "ca.pem"


def broker_pem(cfg: Config) -> Path:
    """The brokers' private key (PKCS#8, unencrypted, mode 0600) followed by their certificate."""
    return security_dir(cfg) / "broker.pem"


def credentials_file(cfg: Config) -> Path:
    return security_dir(cfg) / "credentials.json"


def java_client_file(cfg: Config, principal: str) -> Path | None:
    """A Java client properties file for the principal; None in the plaintext profile."""
    if not cfg.kafka_secure:
        return None
    return security_dir(cfg) / f"client-{principal}.properties"


def password(cfg: Config, principal: str) -> str:
    if principal not in PRINCIPALS:
        raise SecurityError(f"unknown Kafka principal {principal!r}; known: {', '.join(PRINCIPALS)}")
    path = credentials_file(cfg)
    if not path.exists():
        raise SecurityError(f"{path} is missing: `./brokerstream up` makes the secure profile's credentials")
    return json.loads(path.read_text())[principal]


SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
# Flink's lib/ holds flink-sql-connector-kafka, whose Kafka client is relocated; its classes are loaded
# parent-first, so the P&L job's and the SQL tables' clients look the login module up under that name.
FLINK_SCRAM_MODULE = "org.apache.flink.kafka.shaded." + SCRAM_MODULE


def jaas(user: str, secret: str, module: str = SCRAM_MODULE) -> str:
    q = lambda s: s.replace("\\", "\\\\").replace('"', '\\"')  # noqa: E731
    return f'{module} required username="{q(user)}" password="{q(secret)}";'


def java_client_properties(cfg: Config, principal: str) -> dict[str, str]:
    """What a Java Kafka client adds to its bootstrap address to log in as `principal`."""
    if not cfg.kafka_secure:
        return {}
    return {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": MECHANISM,
        "sasl.jaas.config": jaas(
            principal, password(cfg, principal), FLINK_SCRAM_MODULE if principal == "flink" else SCRAM_MODULE
        ),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(ca_file(cfg)),
    }


def ensure_material(cfg: Config) -> bool:
    """Makes what is missing (CA, broker certificate, passwords, client files); True if it made any."""
    if not cfg.kafka_secure:
        return False
    d = security_dir(cfg)
    d.mkdir(parents=True, exist_ok=True)
    d.chmod(0o700)
    made = False
    if not ca_file(cfg).exists() or not broker_pem(cfg).exists():
        _make_certificates(cfg)
        made = True
    creds = credentials_file(cfg)
    if not creds.exists():
        write_private(creds, json.dumps({p: secrets.token_urlsafe(24) for p in PRINCIPALS}, indent=1))
        made = True
    for p in PRINCIPALS:
        body = "".join(f"{k}={_escape(v)}\n" for k, v in java_client_properties(cfg, p).items())
        path = java_client_file(cfg, p)
        if not path.exists() or path.read_text() != body:
            write_private(path, body)
    return made


def broker_settings(cfg: Config, host: str, port: int, cport: int) -> dict[str, str]:
    """Listeners and authorization of a node in the secure profile. Clients and brokers meet on a
    SASL_SSL listener; the controllers' listener takes TLS with client certificates (the brokers')."""
    ssl = {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(broker_pem(cfg)),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(ca_file(cfg)),
    }
    settings = {
        "listeners": f"BROKER://{host}:{port},CONTROLLER://{host}:{cport}",
        "advertised.listeners": f"BROKER://{host}:{port}",
        "inter.broker.listener.name": "BROKER",
        "listener.security.protocol.map": "BROKER:SASL_SSL,CONTROLLER:SSL",
        "sasl.enabled.mechanisms": MECHANISM,
        "sasl.mechanism.inter.broker.protocol": MECHANISM,
        f"listener.name.broker.{MECHANISM.lower()}.sasl.jaas.config": jaas(ADMIN, password(cfg, ADMIN)),
        "listener.name.controller.ssl.client.auth": "required",
        # the certificate's CN is the principal: User:broker
        "ssl.principal.mapping.rules": "RULE:^CN=([a-zA-Z0-9._-]+)$/$1/,DEFAULT",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": f"User:{ADMIN};User:{BROKER_CN}",
        "allow.everyone.if.no.acl.found": "false",
    }
    settings.update(ssl)
    return settings


def scram_format_arguments(cfg: Config) -> list[str]:
    """`--add-scram` arguments for the storage format: one user per principal."""
    out = []
    for p in PRINCIPALS:
        out += ["--add-scram", f"{MECHANISM}=[name={p},password={password(cfg, p)}]"]
    return out


def write_private(path: Path, text: str) -> None:
    """Created 0600 before a byte is written, so the secret is never readable by others."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _escape(value: str) -> str:
    # java.util.Properties: a backslash escapes; '=' and ':' in values are fine after the first.
    return value.replace("\\", "\\\\")


def _run(argv: list[str], what: str) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode:
        raise SecurityError(f"{what} failed: {proc.stderr.strip()[-800:]}")


def _make_certificates(cfg: Config) -> None:
    """A private CA and one broker certificate for the nodes' addresses (clients verify the host name:
    the certificate names the IP they dial)."""
    d = security_dir(cfg)
    ca_key, broker_key = d / "ca.key", d / "broker.key"
    csr, ext = d / "broker.csr", d / "broker.ext"
    for key in (ca_key, broker_key):
        # created 0600 first: openssl then writes into the existing file
        write_private(key, "")
        _run(
            ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(key)],
            what=f"key {key.name}",
        )
    _run(
        [
            "openssl",
            "req",
            "-x509",
            "-new",
            "-key",
            str(ca_key),
            "-sha256",
            "-days",
            "3650",
            "-subj",
            "/CN=brokerstream local CA",
            "-out",
            str(ca_file(cfg)),
        ],
        what="CA certificate",
    )
    # every address a node listens at: this stack's, and each node's host when BS_HOSTS places them apart
    names = {"IP:127.0.0.1", "DNS:localhost"}
    for host in {cfg.bind, *(cfg.host(kafka_node_name(n)) for n in range(1, cfg.kafka_brokers + 1))}:
        names.add(f"IP:{host}" if host.replace(".", "").isdigit() else f"DNS:{host}")
    ext.write_text(f"subjectAltName={','.join(sorted(names))}\nextendedKeyUsage=serverAuth,clientAuth\n")
    _run(
        ["openssl", "req", "-new", "-key", str(broker_key), "-subj", f"/CN={BROKER_CN}", "-out", str(csr)],
        what="broker certificate request",
    )
    cert = d / "broker.crt"
    _run(
        [
            "openssl",
            "x509",
            "-req",
            "-in",
            str(csr),
            "-CA",
            str(ca_file(cfg)),
            "-CAkey",
            str(ca_key),
            "-CAcreateserial",
            "-days",
            "825",
            "-sha256",
            "-extfile",
            str(ext),
            "-out",
            str(cert),
        ],
        what="broker certificate",
    )
    write_private(broker_pem(cfg), broker_key.read_text() + cert.read_text())
    for tmp in (csr, ext):
        tmp.unlink()


def apply_acls(admin, timeout: float = 30.0) -> int:
    """Creates the ACLs of `acls()` through an admin client logged in as the super user (creating an
    existing binding is a no-op); returns how many bindings there are."""
    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType, ResourceType

    resource = {
        "TOPIC": ResourceType.TOPIC,
        "GROUP": ResourceType.GROUP,
        "TRANSACTIONAL_ID": ResourceType.TRANSACTIONAL_ID,
        "CLUSTER": ResourceType.BROKER,
    }
    bindings = [
        AclBinding(
            resource[a.resource],
            a.name,
            ResourcePatternType.LITERAL,
            f"User:{a.principal}",
            "*",
            AclOperation[a.operation],
            AclPermissionType[a.permission],
        )
        for a in acls()
    ]
    for future in admin.create_acls(bindings, request_timeout=timeout).values():
        future.result(timeout)
    return len(bindings)
