"""Clients of the services: Kafka (and its security settings), the schema registry, Kafka Connect,
Flink's REST API and SQL gateway."""
