"""Postgres authentication and where its password travels (no server: the files and argv we write)."""

from brokerstream.common import config
from brokerstream.launcher.layout import Layout
from brokerstream.launcher.services.postgres import hba_conf, ident, literal
from brokerstream.launcher.services.registry import Registry


def _rules(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def test_superuser_only_by_peer_on_the_socket_and_nobody_without_a_password():
    rules = _rules(hba_conf("127.0.0.1"))
    assert not [r for r in rules if r[-1] == "trust"]
    assert rules[0] == ["local", "all", "postgres", "peer"]
    # first match wins: the superuser's TCP attempts hit a reject before any password rule
    first_host_for_postgres = next(r for r in rules if r[0] == "host" and r[2] in ("postgres", "all"))
    assert first_host_for_postgres[2] == "postgres" and first_host_for_postgres[-1] == "reject"
    assert {r[-1] for r in rules if r[2] == "all"} == {"scram-sha-256"}
    addresses = {r[3] for r in rules if r[0] == "host" and r[2] == "all"}
    assert addresses == {"127.0.0.1/32", "::1/128"}


def test_binding_beyond_loopback_still_asks_for_a_password():
    rules = _rules(hba_conf("0.0.0.0"))
    wide = [r for r in rules if r[0] == "host" and r[3] == "all" and r[2] == "all"]
    assert wide and all(r[-1] == "scram-sha-256" for r in wide)
    assert rules.index(["host", "all", "postgres", "all", "reject"]) < rules.index(wide[0])


def test_sql_quoting_survives_hostile_names_and_passwords():
    assert literal("it's") == "'it''s'"
    assert literal("x'; DROP ROLE brokerstream; --") == "'x''; DROP ROLE brokerstream; --'"
    assert ident('we"ird') == '"we""ird"'


def test_registry_gets_the_password_in_its_environment_not_its_command_line(tmp_path):
    cfg = config.load(
        environ={"BS_DATA_DIR": str(tmp_path), "BS_POSTGRES_PASSWORD": "s3cret-pw", "BS_JAVA21_HOME": "/opt/jdk"}
    )
    launch = Registry(cfg, Layout(cfg)).launch()
    assert not [a for a in launch.argv if "s3cret-pw" in a]
    assert launch.env["APICURIO_DATASOURCE_PASSWORD"] == "s3cret-pw"


def test_a_password_with_url_characters_still_makes_a_valid_dsn(tmp_path):
    import psycopg.conninfo

    cfg = config.load(environ={"BS_DATA_DIR": str(tmp_path), "BS_POSTGRES_PASSWORD": "p@ss:w/rd%"})
    parsed = psycopg.conninfo.conninfo_to_dict(cfg.postgres_dsn())
    assert parsed["password"] == "p@ss:w/rd%" and parsed["dbname"] == cfg["BS_POSTGRES_DB"]
