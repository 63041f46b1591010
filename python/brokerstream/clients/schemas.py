"""The Avro schemas of schemas/src/main/avro (the files the Java classes are generated from), as
self-contained schema documents, and their registration in the schema registry.

Shared named types (Side, ReasonCode, ...) live in their own files; a topic's schema is its record
with every named type it uses inlined at first use, which is what the Java SCHEMA$ holds too.
Registration goes through the Confluent REST API; the registry's compatibility rule (BACKWARD)
decides whether a changed schema may become the next version of its subject.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from brokerstream.common.config import ROOT, Config
from brokerstream.common.errors import UserError
from brokerstream.common.topics import load_catalog

SCHEMA_DIR = ROOT / "schemas" / "src" / "main" / "avro"
NAMESPACE = "io.brokerstream.avro"
PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


class SchemaError(UserError):
    pass


def _definitions(schema_dir: Path) -> dict[str, dict]:
    defs = {}
    for path in sorted(schema_dir.glob("*.avsc")):
        doc = json.loads(path.read_text())
        full = f"{doc.get('namespace', NAMESPACE)}.{doc['name']}"
        defs[full] = doc
    return defs


def _inline(node: Any, defs: dict[str, dict], seen: set[str], namespace: str) -> Any:
    if isinstance(node, str):
        if node in PRIMITIVES:
            return node
        full = node if "." in node else f"{namespace}.{node}"
        if full in seen:
            return full
        if full not in defs:
            raise SchemaError(f"unknown type {node}")
        seen.add(full)
        return _inline(copy.deepcopy(defs[full]), defs, seen, namespace)
    if isinstance(node, list):
        return [_inline(branch, defs, seen, namespace) for branch in node]
    if isinstance(node, dict):
        kind = node.get("type")
        if kind in ("record", "enum", "fixed"):
            ns = node.get("namespace", namespace)
            seen.add(f"{ns}.{node['name']}")
            if kind == "record":
                node["fields"] = [dict(f, type=_inline(f["type"], defs, seen, ns)) for f in node["fields"]]
            return node
        if kind == "array":
            return dict(node, items=_inline(node["items"], defs, seen, namespace))
        if kind == "map":
            return dict(node, values=_inline(node["values"], defs, seen, namespace))
        if isinstance(kind, (dict, list)) or (isinstance(kind, str) and kind not in PRIMITIVES):
            return dict(node, type=_inline(kind, defs, seen, namespace))
        return node
    raise SchemaError(f"not an Avro schema node: {node!r}")


def load_schema(name: str, schema_dir: Path = SCHEMA_DIR) -> dict:
    """The self-contained schema of record `name` (e.g. "Order")."""
    defs = _definitions(schema_dir)
    full = name if "." in name else f"{NAMESPACE}.{name}"
    if full not in defs:
        raise SchemaError(f"no schema {name} in {schema_dir}")
    return _inline(full, defs, set(), NAMESPACE)


_FIELD_KEYS = ("name", "type", "doc", "default", "order", "aliases")


def _java_style(node: Any, namespace: str | None) -> Any:
    """Key order and namespace elision of Avro Java's Schema.toString(), so both languages send the
    registry the same text for the same schema (else each registers its own version)."""
    if isinstance(node, list):
        return [_java_style(n, namespace) for n in node]
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if kind in ("record", "enum", "fixed"):
        ns = node.get("namespace", namespace)
        out = {"type": kind, "name": node["name"]}
        if ns != namespace:
            out["namespace"] = ns
        if "doc" in node:
            out["doc"] = node["doc"]
        if kind == "record":
            out["fields"] = [_java_field(f, ns) for f in node["fields"]]
        elif kind == "enum":
            out["symbols"] = node["symbols"]
            if "default" in node:
                out["default"] = node["default"]
        else:
            out["size"] = node["size"]
        out.update(
            {
                k: v
                for k, v in node.items()
                if k not in out and k not in ("namespace", "aliases", "symbols", "size", "fields")
            }
        )
        if "aliases" in node:
            out["aliases"] = node["aliases"]
        return out
    out = {"type": _java_style(kind, namespace)}
    if kind == "array":
        out["items"] = _java_style(node["items"], namespace)
    if kind == "map":
        out["values"] = _java_style(node["values"], namespace)
    out.update({k: v for k, v in node.items() if k not in out})
    return out


def _java_field(field: dict, namespace: str) -> dict:
    out = {k: (_java_style(field[k], namespace) if k == "type" else field[k]) for k in _FIELD_KEYS if k in field}
    out.update({k: v for k, v in field.items() if k not in out})
    return out


def schema_str(name: str, schema_dir: Path = SCHEMA_DIR) -> str:
    """The registry text of record `name`: what the Java serde registers for its generated class."""
    return json.dumps(_java_style(load_schema(name, schema_dir), None), separators=(",", ":"))


@dataclass(frozen=True)
class Registration:
    subject: str
    schema_id: int
    version: int


class Registry:
    """The Confluent REST API of the schema registry (Apicurio's ccompat, or Confluent's)."""

    def __init__(self, url: str, timeout: float = 10.0):
        from requests.adapters import HTTPAdapter
        from urllib3.util.retry import Retry

        self.url = url.rstrip("/")
        self.timeout = timeout
        self.http = requests.Session()
        self.http.headers["Content-Type"] = CONTENT_TYPE
        # A registry that is restarting is asked again with backoff (about 40 s in all), not given up on;
        # 4xx answers (incompatible, unknown) are final at once.
        retry = Retry(
            total=12,
            connect=12,
            read=6,
            status=12,
            backoff_factor=0.2,
            backoff_max=5,
            status_forcelist=(500, 502, 503, 504),
            allowed_methods=None,
            raise_on_status=False,
        )
        self.http.mount("http://", HTTPAdapter(max_retries=retry))
        self.http.mount("https://", HTTPAdapter(max_retries=retry))

    def _post(self, path: str, schema: str) -> requests.Response:
        return self.http.post(
            self.url + path, data=json.dumps({"schema": schema, "schemaType": "AVRO"}), timeout=self.timeout
        )

    def register(self, subject: str, schema: str) -> Registration:
        resp = self._post(f"/subjects/{subject}/versions", schema)
        if resp.status_code == 409:
            raise SchemaError(
                f"{subject}: the registry refuses this schema as incompatible with the "
                f"registered versions (compatibility {self.compatibility(subject)}): {resp.text}"
            )
        if not resp.ok:
            raise SchemaError(f"{subject}: registration failed: HTTP {resp.status_code} {resp.text}")
        schema_id = resp.json()["id"]
        found = self._post(f"/subjects/{subject}", schema)
        version = found.json().get("version", 0) if found.ok else 0
        return Registration(subject, schema_id, version)

    def is_compatible(self, subject: str, schema: str) -> tuple[bool, str]:
        """Whether `schema` may become the next version of `subject` (True for a new subject)."""
        resp = self._post(f"/compatibility/subjects/{subject}/versions/latest?verbose=true", schema)
        if resp.status_code == 404:
            return True, "new subject"
        if not resp.ok:
            raise SchemaError(f"{subject}: compatibility check failed: HTTP {resp.status_code} {resp.text}")
        body = resp.json()
        return bool(body.get("is_compatible")), "; ".join(body.get("messages") or [])

    def compatibility(self, subject: str) -> str:
        for path in (f"/config/{subject}", "/config"):
            resp = self.http.get(self.url + path, timeout=self.timeout)
            if resp.ok:
                return resp.json().get("compatibilityLevel", "?")
        return "?"

    def subjects(self) -> list[str]:
        resp = self.http.get(self.url + "/subjects", timeout=self.timeout)
        resp.raise_for_status()
        return resp.json()

    def latest(self, subject: str) -> dict:
        resp = self.http.get(self.url + f"/subjects/{subject}/versions/latest", timeout=self.timeout)
        resp.raise_for_status()
        return resp.json()


def topic_subjects(cfg: Config) -> list[tuple[str, str]]:
    """(subject, record name) of every topic value in the catalog that has an Avro schema."""
    return [(f"{t.name}-value", t.value) for t in load_catalog(cfg) if t.value]


def check_all(cfg: Config, subjects: list[tuple[str, str]] | None = None, schema_dir: Path = SCHEMA_DIR) -> list[str]:
    """Problems registering would meet: one line per subject whose schema is incompatible with its
    latest registered version (by the registry's rule, BACKWARD)."""
    registry = Registry(cfg.registry_url)
    problems = []
    for subject, record in subjects or topic_subjects(cfg):
        ok, why = registry.is_compatible(subject, schema_str(record, schema_dir))
        if not ok:
            problems.append(f"{subject} ({record}): incompatible with the latest registered version: {why}")
    return problems


def register_all(
    cfg: Config, subjects: list[tuple[str, str]] | None = None, schema_dir: Path = SCHEMA_DIR
) -> list[Registration]:
    """Check every subject first, then register: a failing check registers nothing."""
    subjects = subjects or topic_subjects(cfg)
    problems = check_all(cfg, subjects, schema_dir)
    if problems:
        raise SchemaError("schema check failed:\n  " + "\n  ".join(problems))
    registry = Registry(cfg.registry_url)
    return [registry.register(subject, schema_str(record, schema_dir)) for subject, record in subjects]


# Seconds one registry request may take. The client's default is no limit: a request that never got
# its answer (seen once after a registry restart) hung a whole test run. With a limit the client
# retries on a fresh connection (its max.retries) and then fails loudly.
REGISTRY_TIMEOUT_S = 15


def registry_client(cfg: Config):
    """confluent-kafka's client of the Confluent-compatible registry API, with a request timeout."""
    from confluent_kafka.schema_registry import SchemaRegistryClient

    return SchemaRegistryClient({"url": cfg.registry_url, "timeout": REGISTRY_TIMEOUT_S})
