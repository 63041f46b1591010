from pathlib import Path

import pytest

from brokerstream.common import config


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "stack.env"
    path.write_text(text)
    return path


def test_defaults_resolve_references_and_environment_overrides_them(tmp_path):
    path = write(
        tmp_path,
        "# comment\nBS_DATA_DIR=${BS_HOME}/.data\nBS_BIND=127.0.0.1\nBS_KAFKA_PORT=19092\n"
        "BS_KAFKA_BOOTSTRAP=${BS_BIND}:${BS_KAFKA_PORT}\n",
    )
    cfg = config.load(environ={"BS_KAFKA_PORT": "29092", "UNRELATED": "x"}, defaults_file=path)
    assert cfg.port("kafka") == 29092
    assert cfg.kafka_bootstrap == "127.0.0.1:29092"  # references see the override
    assert cfg.data_dir == config.ROOT / ".data"
    assert "UNRELATED" not in cfg.values


def test_unknown_reference_and_cycles_are_errors(tmp_path):
    with pytest.raises(config.ConfigError, match="undefined key BS_NOPE"):
        config.load(environ={}, defaults_file=write(tmp_path, "BS_A=${BS_NOPE}\n"))
    with pytest.raises(config.ConfigError, match="circular"):
        config.load(environ={}, defaults_file=write(tmp_path, "BS_A=${BS_B}\nBS_B=${BS_A}\n"))


def test_malformed_lines_name_file_and_line(tmp_path):
    with pytest.raises(config.ConfigError, match=r"stack.env:2: expected KEY=VALUE"):
        config.parse_env_file(write(tmp_path, "BS_A=1\nthis is not a setting\n"))


def test_non_integer_port_is_a_clear_error(tmp_path):
    cfg = config.load(environ={"BS_KAFKA_PORT": "nine"}, defaults_file=write(tmp_path, "BS_KAFKA_PORT=1\n"))
    with pytest.raises(config.ConfigError, match="BS_KAFKA_PORT must be an integer"):
        cfg.port("kafka")


def test_project_defaults_bind_loopback_and_ports_are_distinct():
    cfg = config.load(environ={})
    assert cfg.bind == "127.0.0.1"
    ports = {k: v for k, v in cfg.values.items() if k.endswith("_PORT")}
    assert len(set(ports.values())) == len(ports), ports
