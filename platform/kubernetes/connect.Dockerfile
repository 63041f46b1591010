# Strimzi's Kafka Connect image with the plugins the native worker loads: Debezium's Postgres source, our
# Postgres sink, the Apicurio Avro converter and our registry-faults wrapper of it, fetched by the same POM the native install runs
# (platform/runtime/connect-plugins.pom.xml). Built from the repository root:
#   docker build -f platform/kubernetes/connect.Dockerfile -t brokerstream/connect:0.1.0 .
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY .mvn .mvn
COPY pom.xml .
COPY schemas schemas
COPY pricing pricing
COPY rules rules
COPY streams streams
COPY flink-jobs flink-jobs
COPY loadtest/loadgen loadtest/loadgen
COPY baseline baseline
COPY connectors/postgres-sink connectors/postgres-sink
COPY connectors/registry-faults connectors/registry-faults
COPY platform/runtime/connect-plugins.pom.xml platform/runtime/
RUN mvn -q -B -s .mvn/settings.xml package -DskipTests -pl connectors/postgres-sink,connectors/registry-faults -am && \
    mvn -q -B -s .mvn/settings.xml -f platform/runtime/connect-plugins.pom.xml package

FROM quay.io/strimzi/kafka:0.48.0-kafka-4.1.0
USER root:root
COPY --from=build /src/platform/runtime/target/plugins/ /opt/kafka/plugins/
COPY --from=build /src/connectors/postgres-sink/target/postgres-sink-0.1.0.jar /opt/kafka/plugins/brokerstream-postgres-sink/
COPY --from=build /src/connectors/postgres-sink/target/plugin/ /opt/kafka/plugins/brokerstream-postgres-sink/
# the registry-faults converter beside the Apicurio converter it wraps (one classloader sees both)
COPY --from=build /src/connectors/registry-faults/target/registry-faults-0.1.0.jar /opt/kafka/plugins/apicurio-avro-converter/
USER 1001
