"""PostgreSQL 15: a cluster in the project's data folder, loopback only, logical decoding on.

Postgres refuses to run as root, so the cluster belongs to the `postgres` system user; our role
(BS_POSTGRES_USER) owns the application database and the registry's, and may replicate (Debezium).
"""
from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
from dataclasses import dataclass

from ..progress import StepFailed, run
from .base import Launch, Service

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
            return
        if self.pgdata.exists():  # a half-made cluster from an interrupted initdb
            shutil.rmtree(self.pgdata)
        run([self.bin("initdb"), "-D", str(self.pgdata), "-U", OS_USER, "-E", "UTF8", "--locale=C",
             "--auth-local=trust", "--auth-host=scram-sha-256"],
            env=self._env(), what="initdb", log=self.layout.log("postgres-initdb"), user=OS_USER)

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
        return subprocess.run([self.bin("pg_isready"), "-q", "-h", self.cfg.bind, "-p", str(self.cfg.port("postgres"))],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0

    def after_start(self) -> None:
        user, password = self.cfg["BS_POSTGRES_USER"], self.cfg["BS_POSTGRES_PASSWORD"]
        self.superuser_sql(f"""
            DO $$ BEGIN
              IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{user}') THEN
                CREATE ROLE "{user}" LOGIN REPLICATION PASSWORD '{password}';
              END IF;
            END $$;""")
        for db in (self.cfg["BS_POSTGRES_DB"], self.cfg["BS_REGISTRY_DB"]):
            exists = self.superuser_sql(f"SELECT 1 FROM pg_database WHERE datname = '{db}'").strip()
            if not exists:
                self.superuser_sql(f'CREATE DATABASE "{db}" OWNER "{user}"')

    def superuser_sql(self, sql: str, db: str = "postgres") -> str:
        """Run SQL as the cluster's superuser over the unix socket (trust auth); returns psql's rows."""
        proc = subprocess.run(
            [self.bin("psql"), "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-h", str(self.socket_dir),
             "-p", str(self.cfg.port("postgres")), "-U", OS_USER, "-d", db, "-c", sql],
            capture_output=True, text=True, user=OS_USER)
        if proc.returncode != 0:
            raise StepFailed(f"psql failed: {proc.stderr.strip()}")
        return proc.stdout

    def _env(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": "/tmp"}
