# Our JVM apps, built from this repository with the same Maven reactor the native install uses:
# the order flow (streams), the Flink jobs and the baseline monolith (Java 21: virtual threads).
FROM maven:3.9-eclipse-temurin-21 AS build
WORKDIR /src
COPY .mvn .mvn
COPY pom.xml .
COPY schemas schemas
COPY pricing pricing
COPY rules rules
COPY streams streams
COPY flink-jobs flink-jobs
COPY loadtest/loadgen loadtest/loadgen
COPY connectors/postgres-sink connectors/postgres-sink
COPY connectors/registry-faults connectors/registry-faults
COPY baseline baseline
RUN mvn -q -B -s .mvn/settings.xml package -DskipTests

FROM eclipse-temurin:21-jre
WORKDIR /app
COPY --from=build /src/streams/target/streams-0.1.0.jar /app/streams.jar
COPY --from=build /src/flink-jobs/target/flink-jobs-0.1.0.jar /app/flink-jobs.jar
COPY --from=build /src/baseline/target/baseline-0.1.0.jar /app/baseline.jar
ENTRYPOINT ["java", "-jar", "/app/streams.jar"]
