"""The stream SQL catalog: sql/flink (tables and named queries) run on the Flink SQL gateway, and
sql/ksqldb, the same catalog in ksqlDB's dialect for the compose stack.

A catalog file is blocks of `-- name:`, `-- purpose:` and the statements that create the query's
view (Flink) or persistent query (ksqlDB). `run` answers one named query over what the topics hold
now: a batch session whose tables stop at the latest offsets. `client` opens Flink's SQL client on a
streaming session with the tables and views loaded, so `SELECT * FROM <name>` runs live.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from brokerstream.clients.flinksql import Result, SqlError, SqlSession
from brokerstream.common.config import ROOT, Config
from brokerstream.common.errors import UserError

FLINK_DIR = ROOT / "sql" / "flink"
KSQLDB_DIR = ROOT / "sql" / "ksqldb"
FLINK_TABLES = FLINK_DIR / "tables.sql"
FLINK_CATALOG = FLINK_DIR / "catalog.sql"
KSQLDB_STREAMS = KSQLDB_DIR / "streams.sql"
KSQLDB_CATALOG = KSQLDB_DIR / "catalog.sql"

# Streaming sessions: a partition without records must not hold the watermark (and windows) back.
STREAMING_SETTINGS = {"execution.runtime-mode": "streaming", "table.exec.source.idle-timeout": "5 s"}
BATCH_SETTINGS = {"execution.runtime-mode": "batch"}

_PLACEHOLDER = re.compile(r"\$\{([a-z_]+)(?::(\w+))?\}")
_CREATES = re.compile(
    r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMPORARY\s+)?(TABLE|VIEW|STREAM)\s+"
    r"(?:IF\s+NOT\s+EXISTS\s+)?`?(\w+)`?",
    re.IGNORECASE,
)


class CatalogError(UserError, ValueError):
    pass


@dataclass(frozen=True)
class CatalogQuery:
    name: str
    purpose: str
    statements: tuple[str, ...]

    def creates(self) -> list[tuple[str, str]]:
        """(kind, name) of every object the statements create, in order."""
        found = []
        for statement in self.statements:
            match = _CREATES.match(statement)
            if match:
                found.append((match.group(1).upper(), match.group(2)))
        return found


def split_statements(text: str) -> list[str]:
    """Statements separated by `;`, without `--` comments; quotes and backticks are respected."""
    statements, current = [], []
    i, n = 0, len(text)
    quote: str | None = None
    while i < n:
        ch = text[i]
        if quote:
            current.append(ch)
            if ch == quote:
                quote = None
        elif ch in ("'", "`", '"'):
            quote = ch
            current.append(ch)
        elif text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif ch == ";":
            statements.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
        i += 1
    if quote:
        raise CatalogError(f"unterminated {quote} in SQL text")
    statements.append("".join(current).strip())
    return [s for s in statements if s]


def parse_catalog(path: Path) -> list[CatalogQuery]:
    text = path.read_text()
    blocks = re.split(r"^-- name:[ \t]*", text, flags=re.MULTILINE)
    queries, seen = [], set()
    for block in blocks[1:]:
        name, _, rest = block.partition("\n")
        name = name.strip()
        purpose = re.match(r"-- purpose:[ \t]*(.+)\n", rest)
        if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise CatalogError(f"{path}: query name {name!r} is not snake_case")
        if not purpose:
            raise CatalogError(f"{path}: query {name}: `-- purpose:` must follow `-- name:`")
        if name in seen:
            raise CatalogError(f"{path}: query {name} appears twice")
        statements = tuple(split_statements(rest))
        if not statements:
            raise CatalogError(f"{path}: query {name} has no statement")
        seen.add(name)
        queries.append(CatalogQuery(name, purpose.group(1).strip(), statements))
    if not queries:
        raise CatalogError(f"{path}: no `-- name:` blocks")
    return queries


def render(statement: str, values: Callable[[str, str | None], str]) -> str:
    """Fill ${key} and ${key:arg} placeholders; values are SQL string contents, so quotes are doubled."""
    return _PLACEHOLDER.sub(lambda m: values(m.group(1), m.group(2)).replace("'", "''"), statement)


def stack_values(cfg: Config) -> Callable[[str, str | None], str]:
    from brokerstream.clients.schemas import schema_str

    def value(key: str, arg: str | None) -> str:
        if key == "kafka_bootstrap":
            return cfg.kafka_bootstrap
        if key == "registry_url":
            return cfg.registry_url
        if key == "schema" and arg:
            return schema_str(arg)
        raise CatalogError(f"unknown placeholder ${{{key}{':' + arg if arg else ''}}}")

    return value


def table_statements(cfg: Config, path: Path = FLINK_TABLES) -> list[str]:
    values = stack_values(cfg)
    return [with_kafka_login(cfg, render(s, values)) for s in split_statements(path.read_text())]


_BOOTSTRAP_OPTION = re.compile(r"('properties\.bootstrap\.servers'\s*=\s*'[^']*',)")


def with_kafka_login(cfg: Config, statement: str) -> str:
    """In the secure profile, a Kafka table logs in as the flink principal: its options follow the
    bootstrap option. The session holds them; the SQL files stay free of secrets."""
    from brokerstream.clients.kafka_security import java_client_properties

    login = java_client_properties(cfg, "flink")
    if not login:
        return statement
    options = "".join(f"\n  'properties.{k}' = '{v.replace(chr(39), chr(39) * 2)}'," for k, v in login.items())
    return _BOOTSTRAP_OPTION.sub(lambda m: m.group(1) + options, statement)


def table_names(statements: list[str]) -> list[str]:
    return [m.group(2) for m in map(_CREATES.match, statements) if m and m.group(1).upper() == "TABLE"]


def scan_options(*, bounded: bool, since_ms: int | None) -> dict[str, str]:
    """How `run` narrows the tables: stop at the offsets of now, and start at a time if asked."""
    options = {}
    if bounded:
        options["scan.bounded.mode"] = "latest-offset"
    if since_ms is not None:
        options["scan.startup.mode"] = "timestamp"
        options["scan.startup.timestamp-millis"] = str(int(since_ms))
    return options


def session_statements(cfg: Config, *, bounded: bool, since_ms: int | None = None) -> list[str]:
    """Tables, their scan options, then every catalog view: what a session needs before it queries."""
    tables = table_statements(cfg)
    statements = list(tables)
    options = scan_options(bounded=bounded, since_ms=since_ms)
    if options:
        pairs = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
        statements += [f"ALTER TABLE {name} SET ({pairs})" for name in table_names(tables)]
    for query in parse_catalog(FLINK_CATALOG):
        statements += query.statements
    return statements


def parse_since(text: str | None, now_ms: int | None = None) -> int | None:
    """--since: epoch milliseconds, an ISO-8601 time (UTC unless it says), or an age like 90s, 15m, 2h."""
    if text is None:
        return None
    import datetime as dt
    import time

    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    text = text.strip()
    age = re.fullmatch(r"(\d+)([smhd])", text)
    if age:
        return now_ms - int(age.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[age.group(2)] * 1000
    if text.isdigit():
        return int(text)
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise CatalogError(f"--since {text!r}: expected epoch ms, an ISO time or an age like 15m") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return int(when.timestamp() * 1000)


def query_named(name: str) -> CatalogQuery:
    catalog = parse_catalog(FLINK_CATALOG)
    for query in catalog:
        if query.name == name:
            return query
    raise CatalogError(
        f"no query {name!r} in {FLINK_CATALOG.relative_to(ROOT)}; known: {', '.join(q.name for q in catalog)}"
    )


def run(cfg: Config, name: str, *, since_ms: int | None = None, timeout: float = 300.0) -> Result:
    """Every row of one catalog query over the topics as they are now (bounded, batch mode)."""
    query_named(name)
    with SqlSession(cfg.sql_gateway_url, dict(BATCH_SETTINGS)) as sql:
        for statement in session_statements(cfg, bounded=True, since_ms=since_ms):
            sql.execute(statement)
        try:
            return sql.execute(f"SELECT * FROM {name}", timeout=timeout)
        except SqlError as exc:
            if "Failed to deserialize" in str(exc):
                raise SqlError(
                    f"{exc}\nA record in one of the query's topics is not Avro in the wire format "
                    "(a dead letter's source, say): start after it with --since."
                ) from None
            raise


def format_rows(result: Result, as_json: bool = False) -> str:
    if as_json:
        return "\n".join(json.dumps(dict(zip(result.columns, row)), default=str) for row in result.rows)
    cells = [[str(c) for c in result.columns]] + [["NULL" if v is None else str(v) for v in row] for row in result.rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(result.columns))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines + [f"({len(result.rows)} rows)"])


def client_init_file(cfg: Config) -> Path:
    """The SQL client's init script: session settings, the tables and the catalog's views."""
    lines = [f"SET '{k}' = '{v}';" for k, v in STREAMING_SETTINGS.items()]
    lines += [s + ";" for s in session_statements(cfg, bounded=False)]
    path = cfg.run_dir / "flink" / "sql-client-init.sql"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n\n".join(lines) + "\n")
    return path


def client_argv(cfg: Config) -> tuple[list[str], dict[str, str]]:
    """The command line of Flink's SQL client against the stack's gateway, with the catalog loaded."""
    from brokerstream.launcher.layout import Layout
    from brokerstream.launcher.services.flink import FlinkSqlGateway

    gateway = FlinkSqlGateway(cfg, Layout(cfg))
    endpoint = cfg.sql_gateway_url.split("://", 1)[-1]
    argv = [
        "bash",
        gateway.script("sql-client.sh"),
        "gateway",
        "--endpoint",
        endpoint,
        "--init",
        str(client_init_file(cfg)),
        "--history",
        str(cfg.run_dir / "flink" / "sql-client-history"),
    ]
    return argv, gateway.env()


def client(cfg: Config) -> int:
    argv, env = client_argv(cfg)
    print("catalog queries (SELECT * FROM <name>;):")
    for query in parse_catalog(FLINK_CATALOG):
        print(f"  {query.name:<32} {query.purpose}")
    os.execvpe(argv[0], argv, env)
    return 0  # not reached
