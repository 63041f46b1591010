"""What `up` does once the services are healthy: the topics of the catalog, then (as later parts of
the system arrive) schemas, connectors and jobs. Every step is idempotent."""

from __future__ import annotations

from brokerstream.clients.kafka_clients import client_conf
from brokerstream.common.config import Config
from brokerstream.common.errors import UserError
from brokerstream.common.topics import ensure_topics, load_catalog
from brokerstream.launcher.stack import Provisioner, Stack

# Topics of an earlier design whose presence means the data folder's state is in a layout this code no
# longer reads: positions had a topic of their own while the positions store's changelog held a compact
# layout; the changelog is now the positions topic, in Avro.
RETIRED_TOPICS = {
    "positions": "positions now live in the positions store's changelog, in Avro",
    # order ids had a store of their own; the results are now written to their member's partition and
    # read back by the member's task, which knows its decided ids from them
    "brokerstream-orders-order-ids-changelog": "decided order ids are now known from order-results, by member",
}


def refuse_retired(existing: set[str]) -> None:
    found = sorted(set(RETIRED_TOPICS) & existing)
    if found:
        why = "; ".join(f"{t}: {RETIRED_TOPICS[t]}" for t in found)
        raise UserError(
            f"this stack's data was made by an earlier design ({why}); `./brokerstream reset` starts it afresh"
        )


def topics(cfg: Config) -> str:
    from confluent_kafka.admin import AdminClient

    conf = client_conf(cfg, "admin")
    refuse_retired(set(AdminClient(conf).list_topics(timeout=30).topics))
    outcome = ensure_topics(conf, load_catalog(cfg))
    created = sum(1 for v in outcome.values() if v != "exists")
    return f"{len(outcome)} in catalog, {created} created or grown"


def postgres_ddl(cfg: Config) -> str:
    import psycopg

    from brokerstream.launcher import postgres_ddl as ddl

    with psycopg.connect(cfg.postgres_dsn(), autocommit=True) as conn:
        return ddl.apply(conn, cfg.root / "sql" / "postgres").line()


def schemas(cfg: Config) -> str:
    from brokerstream.clients.schemas import register_all

    registrations = register_all(cfg)
    return f"{len(registrations)} subjects registered (compatibility checked first)"


def connectors(cfg: Config) -> str:
    from brokerstream.clients.connectors import apply

    names = apply(cfg)
    return f"{len(names)} running: {', '.join(names)}"


def pnl_job(cfg: Config) -> str:
    from brokerstream.clients.flinkjobs import deploy

    return deploy(cfg)


def default_stack(cfg: Config) -> Stack:
    return Stack(
        cfg,
        provisioners=[
            Provisioner("postgres ddl", ("postgres",), postgres_ddl),
            Provisioner("topics", ("kafka",), topics),
            Provisioner("schemas", ("registry",), schemas),
            Provisioner("connectors", ("connect", "registry", "postgres"), connectors),
            # after the streams app: the job reads the topics it writes (they exist from phase 1 anyway)
            Provisioner("pnl job", ("flink-jobmanager", "flink-taskmanager", "kafka", "registry"), pnl_job, phase=2),
        ],
    )
