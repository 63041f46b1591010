import json

import fastavro
import pytest

from brokerstream.clients.schemas import SCHEMA_DIR, SchemaError, load_schema, schema_str, topic_subjects
from brokerstream.common import config


def test_every_topic_schema_is_self_contained_and_valid_avro():
    for _subject, record in topic_subjects(config.load(environ={})):
        schema = load_schema(record)
        fastavro.parse_schema(schema)  # raises on anything invalid
        assert json.loads(schema_str(record))["name"] == record


def test_shared_types_are_inlined_once_and_referenced_by_name_after():
    text = schema_str("OrderResult")
    assert text.count('"symbols":["BUY","SELL"]') == 1
    assert text.count('"name":"ReasonCode"') == 1


def test_every_field_is_documented_and_money_is_decimal_18_6():
    for path in SCHEMA_DIR.glob("*.avsc"):
        doc = json.loads(path.read_text())
        assert doc.get("doc"), path.name
        for field in doc.get("fields", []):
            assert field.get("doc"), f"{path.name}: {field['name']}"
            text = json.dumps(field["type"])
            assert '"double"' not in text or field["name"] in ("volatility", "metric_value"), field["name"]
            if '"decimal"' in text:
                assert '"precision": 18, "scale": 6' in text, f"{path.name}: {field['name']}"


def test_unknown_type_is_an_error(tmp_path):
    (tmp_path / "Broken.avsc").write_text(
        json.dumps(
            {
                "type": "record",
                "name": "Broken",
                "namespace": "io.brokerstream.avro",
                "fields": [{"name": "x", "type": "Nope", "doc": "x"}],
            }
        )
    )
    with pytest.raises(SchemaError, match="unknown type Nope"):
        load_schema("Broken", tmp_path)
