"""PostgreSQL 15: a cluster in the project's data folder, loopback only, logical decoding on.

Postgres refuses to run as root, so the cluster belongs to the `postgres` system user; our role
(BS_POSTGRES_USER) owns the application database and the registry's, and may replicate (Debezium).

Authentication (pg_hba.conf, rewritten on every start): the superuser only over the unix socket and
only as the `postgres` OS user (peer); every other connection, socket or TCP, with a SCRAM password.
The role's password is set from BS_POSTGRES_PASSWORD on every start (so changing it takes effect)
and reaches psql on stdin, never on a command line other users can read in `ps`.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
from dataclasses import dataclass

from brokerstream.common.progress import StepFailed, run
from brokerstream.launcher.services.base import Launch, Service

OS_USER = "postgres"


@dataclass
class Postgres(Service):
    def __post_init__(self) -> None:
        self.name = "postgres"
        self.cpu_group = "sync"
        self.stop_signal = signal.SIGINT  # "fast" shutdown: roll back, checkpoint, exit
        self.stop_grace = 30.0

    @property
    def pgdata(self):
        return self.data / "pgdata"

    @property
    def socket_dir(self):
        return self.data / "socket"

    def bin(self, tool: str) -> str:
        return str(self.cfg.path("BS_POSTGRES_BIN") / tool)

    def ports(self) -> dict[str, int]:
        return {"sql": self.cfg.port("postgres")}

    def prepare(self) -> None:
        owner = pwd.getpwnam(OS_USER)
        for folder in (self.data, self.socket_dir):
            folder.mkdir(parents=True, exist_ok=True)
            os.chown(folder, owner.pw_uid, owner.pw_gid)
        if (self.pgdata / "PG_VERSION").exists():
            self.prepare_hba()
            return
        if self.pgdata.exists():  # a half-made cluster from an interrupted initdb
            shutil.rmtree(self.pgdata)
        run(
            [
                self.bin("initdb"),
                "-D",
                str(self.pgdata),
                "-U",
                OS_USER,
                "-E",
                "UTF8",
                "--locale=C",
                "--auth-local=peer",
                "--auth-host=scram-sha-256",
            ],
            env=self._env(),
            what="initdb",
            log=self.layout.log("postgres-initdb"),
            user=OS_USER,
        )
        self.prepare_hba()

    def prepare_hba(self) -> None:
        hba = self.pgdata / "pg_hba.conf"
        hba.write_text(hba_conf(self.cfg.bind))
        owner = pwd.getpwnam(OS_USER)
        os.chown(hba, owner.pw_uid, owner.pw_gid)
        os.chmod(hba, 0o600)

    def launch(self) -> Launch:
        settings = {
            "listen_addresses": self.cfg.bind,
            "port": str(self.cfg.port("postgres")),
            "unix_socket_directories": str(self.socket_dir),
            # Debezium reads changes through logical replication (pgoutput).
            "wal_level": "logical",
            "max_replication_slots": "10",
            "max_wal_senders": "10",
            "max_connections": "200",
            "shared_buffers": "256MB",
            # The sinks write tens of thousands of rows a second: fewer, larger checkpoints.
            "max_wal_size": "4GB",
            "wal_buffers": "16MB",
            "checkpoint_timeout": "15min",
            "log_min_messages": "warning",
        }
        argv = [self.bin("postgres"), "-D", str(self.pgdata)]
        for key, value in settings.items():
            argv += ["-c", f"{key}={value}"]
        return Launch(argv=argv, env=self._env(), user=OS_USER)

    def healthy(self) -> bool:
        return (
            subprocess.run(
                [self.bin("pg_isready"), "-q", "-h", self.host, "-p", str(self.cfg.port("postgres"))],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            ).returncode
            == 0
        )

    def after_start(self) -> None:
        user, password = self.cfg["BS_POSTGRES_USER"], self.cfg["BS_POSTGRES_PASSWORD"]
        if not password:
            raise StepFailed("BS_POSTGRES_PASSWORD is empty: every role logs in with a password")
        exists = self.superuser_sql(f"SELECT 1 FROM pg_roles WHERE rolname = {literal(user)}").strip()
        verb = "ALTER" if exists else "CREATE"
        self.superuser_sql(f"{verb} ROLE {ident(user)} LOGIN REPLICATION PASSWORD {literal(password)}")
        for db in (self.cfg["BS_POSTGRES_DB"], self.cfg["BS_REGISTRY_DB"]):
            exists = self.superuser_sql(f"SELECT 1 FROM pg_database WHERE datname = {literal(db)}").strip()
            if not exists:
                self.superuser_sql(f"CREATE DATABASE {ident(db)} OWNER {ident(user)}")

    def superuser_sql(self, sql: str, db: str = "postgres") -> str:
        """Run SQL as the cluster's superuser over the unix socket (peer auth, as the postgres OS user);
        the statement goes on stdin. Returns psql's rows."""
        proc = subprocess.run(
            [
                self.bin("psql"),
                "-X",
                "-q",
                "-t",
                "-A",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                str(self.socket_dir),
                "-p",
                str(self.cfg.port("postgres")),
                "-U",
                OS_USER,
                "-d",
                db,
                "-f",
                "-",
            ],
            input=sql,
            capture_output=True,
            text=True,
            user=OS_USER,
        )
        if proc.returncode != 0:
            raise StepFailed(f"psql failed: {proc.stderr.strip()}")
        return proc.stdout

    def _env(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": "/tmp"}


def hba_conf(bind: str) -> str:
    """Who may connect how: the superuser by peer on the socket, everyone else with a SCRAM password."""
    lines = [
        "# written by ./brokerstream on every start (python/brokerstream/launcher/services/postgres.py)",
        "# TYPE  DATABASE     USER      ADDRESS        METHOD",
        "local   all          postgres                 peer",
        "local   all          all                      scram-sha-256",
        "host    all          postgres  all            reject",
        "host    replication  postgres  all            reject",
        "host    all          all       127.0.0.1/32   scram-sha-256",
        "host    all          all       ::1/128        scram-sha-256",
        "host    replication  all       127.0.0.1/32   scram-sha-256",
        "host    replication  all       ::1/128        scram-sha-256",
    ]
    if bind not in ("127.0.0.1", "localhost", "::1"):
        # bound beyond loopback on purpose: still nobody without the password, and never the superuser
        lines += [
            "host    all          all       all            scram-sha-256",
            "host    replication  all       all            scram-sha-256",
        ]
    return "\n".join(lines) + "\n"


def literal(text: str) -> str:
    """A SQL string literal (standard_conforming_strings is on)."""
    return "'" + text.replace("'", "''") + "'"


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
