"""Schemas against the real registry: the project's own, and evolutions of a throwaway subject."""

import json
import uuid

import pytest

from brokerstream.clients.schemas import Registry, SchemaError, check_all, register_all, topic_subjects

V1 = {
    "type": "record",
    "name": "Thing",
    "namespace": "io.brokerstream.avro",
    "doc": "test",
    "fields": [{"name": "id", "type": "string", "doc": "id"}],
}


def write(dir_, schema):
    (dir_ / "Thing.avsc").write_text(json.dumps(schema))


def test_every_topic_schema_is_registered_and_compatible(stack):
    assert check_all(stack) == []
    registry = Registry(stack.registry_url)
    for subject, record in topic_subjects(stack):
        latest = registry.latest(subject)
        assert json.loads(latest["schema"])["name"] == record, subject


def test_a_compatible_evolution_registers_and_an_incompatible_one_is_refused(stack, tmp_path):
    subject = f"evolve-{uuid.uuid4().hex[:8]}-value"
    subjects = [(subject, "Thing")]
    write(tmp_path, V1)
    first = register_all(stack, subjects, tmp_path)[0]
    assert first.version == 1

    # adding a field with a default: BACKWARD compatible, becomes version 2
    write(tmp_path, dict(V1, fields=V1["fields"] + [{"name": "note", "type": "string", "default": "", "doc": "n"}]))
    assert check_all(stack, subjects, tmp_path) == []
    second = register_all(stack, subjects, tmp_path)[0]
    assert second.version == 2 and second.schema_id != first.schema_id

    # adding a field without a default: old data could not be read; the check names the subject
    write(tmp_path, dict(V1, fields=V1["fields"] + [{"name": "qty", "type": "long", "doc": "q"}]))
    problems = check_all(stack, subjects, tmp_path)
    assert len(problems) == 1 and subject in problems[0]
    with pytest.raises(SchemaError, match=subject):
        register_all(stack, subjects, tmp_path)
    assert Registry(stack.registry_url).latest(subject)["version"] == 2


def test_the_schema_check_command_passes_on_the_repository_schemas(stack, stack_env):
    from .conftest import launcher

    out = launcher(stack_env, "schemas", "check").stdout
    assert "every schema is compatible" in out
