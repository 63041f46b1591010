"""The one ClickHouse client interface: clickhouse-connect on BS_CLICKHOUSE_DSN, embedded chdb
(`chdb:///folder`, the native default) or a server (`http://host:8123`, compose).

An embedded store belongs to one process at a time (chdb locks its folder): during a run the load
driver owns it and writes the samples at the end of the run; `report` opens it afterwards.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import clickhouse_connect

from brokerstream.common.config import ROOT

SQL_DIR = ROOT / "sql" / "clickhouse"


def connect(cfg):
    dsn = cfg["BS_CLICKHOUSE_DSN"]
    if dsn.startswith("chdb://"):
        Path(dsn[len("chdb://") :]).mkdir(parents=True, exist_ok=True)
    return clickhouse_connect.get_client(dsn=dsn)


def statements(text: str) -> list[str]:
    """The statements of a SQL file: comments dropped, split on ';'."""
    text = "\n".join(line for line in text.splitlines() if not line.strip().startswith("--"))
    return [s.strip() for s in text.split(";") if s.strip()]


def apply_ddl(client, folder: Path = SQL_DIR) -> None:
    for path in sorted(folder.glob("*.sql")):
        if path.name == "queries.sql":
            continue
        for statement in statements(path.read_text()):
            client.command(statement)


@dataclass(frozen=True)
class NamedQuery:
    name: str
    purpose: str
    sql: str


def named_queries(path: Path = SQL_DIR / "queries.sql") -> dict[str, NamedQuery]:
    queries: dict[str, NamedQuery] = {}
    for block in re.split(r"^-- name: ", path.read_text(), flags=re.M)[1:]:
        name, rest = block.split("\n", 1)
        purpose = re.search(r"^-- purpose: (.*)$", rest, flags=re.M)
        body = "\n".join(line for line in rest.splitlines() if not line.strip().startswith("--")).strip()
        queries[name.strip()] = NamedQuery(name.strip(), purpose.group(1) if purpose else "", body.rstrip(";"))
    return queries


def run_query(client, query: NamedQuery, **numbers: float) -> tuple[list[str], list[tuple]]:
    """Runs a named query; its {placeholders} take numbers only (checked), never text."""
    sql = query.sql.format(**{k: repr(float(v)) for k, v in numbers.items()})
    result = client.query(sql)
    return list(result.column_names), [tuple(r) for r in result.result_rows]
