# Flink with the Kafka and Avro (Confluent registry) SQL formats, as the native launcher installs
# them (platform/runtime/flink-extras.pom.xml), so sql/flink/ runs unchanged.
FROM flink:2.2.1-java17
RUN cd /opt/flink/lib && \
    curl -sfLO https://repo1.maven.org/maven2/org/apache/flink/flink-sql-connector-kafka/5.0.0-2.2/flink-sql-connector-kafka-5.0.0-2.2.jar && \
    curl -sfLO https://repo1.maven.org/maven2/org/apache/flink/flink-sql-avro-confluent-registry/2.2.0/flink-sql-avro-confluent-registry-2.2.0.jar
