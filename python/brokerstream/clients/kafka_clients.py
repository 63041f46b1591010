"""Configuration for the Python tools' Kafka clients (confluent-kafka / librdkafka): the stack's
addresses and, in the authenticated profile, a login as one principal. Every tool builds its clients
from here, so a profile switch reaches all of them.

The tools log in as `tools`, which may not write `orders`. Lab tools that stand in for the gateway
(the drain's prefill, Kafka-driven load) ask for the gateway principal by name.
"""

from __future__ import annotations

from brokerstream.clients.kafka_security import MECHANISM, ca_file, password
from brokerstream.common.config import Config

TOOLS = "tools"


def client_conf(cfg: Config, principal: str = TOOLS, *, bootstrap: str | None = None, **extra) -> dict:
    conf = {"bootstrap.servers": bootstrap or cfg.kafka_bootstrap}
    if cfg.kafka_secure:
        conf.update(
            {
                "security.protocol": "SASL_SSL",
                "sasl.mechanisms": MECHANISM,
                "sasl.username": principal,
                "sasl.password": password(cfg, principal),
                "ssl.ca.location": str(ca_file(cfg)),
            }
        )
    conf.update(extra)
    return conf
