# Kafka Connect with Debezium (the Postgres source ships in this image), our Postgres sink
# (connectors/postgres-sink, built by `./brokerstream install`) and Confluent's Avro converter, which talks to
# compose's Confluent Schema Registry, wrapped by our registry-faults converter (connectors/registry-faults) so
# an outage is waited out, not dead-lettered. Built from the repository root.
FROM quay.io/debezium/connect:3.7.0.Final
ARG CONFLUENT_VERSION=7.9.2
RUN mkdir -p /kafka/connect/confluent-avro-converter && cd /kafka/connect/confluent-avro-converter && \
    for a in kafka-connect-avro-converter kafka-connect-avro-data kafka-avro-serializer kafka-schema-serializer \
             kafka-schema-registry-client kafka-schema-converter common-utils common-config; do \
      curl -sfLO "https://packages.confluent.io/maven/io/confluent/$a/$CONFLUENT_VERSION/$a-$CONFLUENT_VERSION.jar"; \
    done && \
    curl -sfLO https://repo1.maven.org/maven2/org/apache/avro/avro/1.11.4/avro-1.11.4.jar && \
    curl -sfLO https://repo1.maven.org/maven2/com/google/guava/guava/32.1.3-jre/guava-32.1.3-jre.jar
COPY connectors/postgres-sink/target/postgres-sink-0.1.0.jar connectors/postgres-sink/target/plugin/*.jar \
     /kafka/connect/brokerstream-postgres-sink/
COPY connectors/registry-faults/target/registry-faults-0.1.0.jar /kafka/connect/confluent-avro-converter/
