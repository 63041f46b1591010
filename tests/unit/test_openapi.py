"""The OpenAPI document describes the gateway's routes (the integration tests fuzz the server against it)."""

import json
import re

import yaml

from brokerstream.common.config import ROOT

OPENAPI = ROOT / "streams" / "src" / "main" / "resources" / "openapi.yaml"
GATEWAY = ROOT / "streams" / "src" / "main" / "java" / "io" / "brokerstream" / "streams" / "gateway" / "Gateway.java"
IDENTIFIERS = ROOT / "rules" / "src" / "main" / "java" / "io" / "brokerstream" / "rules" / "Identifiers.java"


def _routes() -> dict[str, set[str]]:
    """The gateway's route table: path (as OpenAPI spells it) -> methods."""
    routes = {}
    for path, methods in re.findall(
        r'^\s+[A-Z_]+\("([^"]+)", (?:true|false), ((?:"[A-Z]+"(?:, )?)+)\)', GATEWAY.read_text(), re.M
    ):
        if path.startswith("^"):
            var = (
                "memberId"
                if path.startswith("^/members")
                else "accountId"
                if path.startswith("^/accounts")
                else "instrumentId"
                if path.startswith("^/instruments")
                else "orderId"
            )
            path = path.strip("^$").replace("([^/]+)", "{" + var + "}")
        routes[path] = {m.lower() for m in re.findall(r'"([A-Z]+)"', methods)}
    return routes


def test_every_route_and_method_is_documented_and_nothing_else():
    doc = yaml.safe_load(OPENAPI.read_text())
    assert doc["openapi"].startswith("3.")
    documented = {path: set(ops) - {"parameters"} for path, ops in doc["paths"].items()}
    assert documented == _routes()
    assert "/orders/{orderId}/cancel" in documented and "delete" not in documented["/orders/{orderId}"]


def test_the_id_pattern_is_the_one_id_rule():
    doc = yaml.safe_load(OPENAPI.read_text())
    rule = re.search(r'PATTERN = "([^"]+)"', IDENTIFIERS.read_text()).group(1)
    assert doc["components"]["schemas"]["Id"]["pattern"] == rule
    ddl = (ROOT / "sql" / "postgres" / "001_reference.sql").read_text()
    assert rule.replace("\\", "") in ddl.replace("''", "'")


def test_every_reason_code_of_the_schema_is_documented():
    doc = yaml.safe_load(OPENAPI.read_text())
    documented = set(doc["components"]["schemas"]["OrderResult"]["properties"]["reason"]["enum"]) - {None}
    codes = set(json.loads((ROOT / "schemas/src/main/avro/ReasonCode.avsc").read_text())["symbols"])
    assert documented == codes


def test_every_order_status_of_the_schema_is_documented():
    doc = yaml.safe_load(OPENAPI.read_text())
    documented = set(doc["components"]["schemas"]["OrderResult"]["properties"]["status"]["enum"])
    assert documented == set(json.loads((ROOT / "schemas/src/main/avro/OrderStatus.avsc").read_text())["symbols"])


def test_refusals_that_ask_for_a_retry_document_retry_after():
    doc = yaml.safe_load(OPENAPI.read_text())
    for name in ("Unavailable", "TooManyPolls"):
        assert "Retry-After" in doc["components"]["responses"][name]["headers"]
