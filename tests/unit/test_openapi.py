"""The OpenAPI document describes the gateway's routes."""
import re

import yaml

from brokerstream.config import ROOT

OPENAPI = ROOT / "streams" / "src" / "main" / "resources" / "openapi.yaml"
GATEWAY = ROOT / "streams" / "src" / "main" / "java" / "io" / "brokerstream" / "streams" / "gateway" / "Gateway.java"


def test_the_document_is_valid_yaml_and_lists_every_route():
    doc = yaml.safe_load(OPENAPI.read_text())
    assert doc["openapi"].startswith("3.")
    paths = set(doc["paths"])
    assert paths == {"/orders", "/orders:batch", "/orders/{orderId}", "/accounts/{accountId}/positions",
                     "/members/{memberId}/risk", "/members/{memberId}/orders", "/health"}
    assert set(doc["paths"]["/orders/{orderId}"]) == {"get", "delete", "patch"}
    # every route the gateway matches is documented
    routes = re.findall(r'path\.equals\("(/[^"]+)"\)', GATEWAY.read_text())
    assert set(routes) - {"/openapi.yaml"} <= paths


def test_every_reason_code_of_the_schema_is_documented():
    import json
    doc = yaml.safe_load(OPENAPI.read_text())
    documented = set(doc["components"]["schemas"]["OrderResult"]["properties"]["reason"]["enum"])
    codes = set(json.loads((ROOT / "schemas/src/main/avro/ReasonCode.avsc").read_text())["symbols"])
    assert documented == codes


def test_every_order_status_of_the_schema_is_documented():
    import json
    doc = yaml.safe_load(OPENAPI.read_text())
    documented = set(doc["components"]["schemas"]["OrderResult"]["properties"]["status"]["enum"])
    assert documented == set(json.loads((ROOT / "schemas/src/main/avro/OrderStatus.avsc").read_text())["symbols"])
