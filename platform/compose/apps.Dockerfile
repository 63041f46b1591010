# Our JVM apps, built from this repository with the same Maven reactor the native install uses:
# the order flow (streams) and the Flink jobs.
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY .mvn .mvn
COPY pom.xml .
COPY schemas schemas
COPY pricing pricing
COPY streams streams
COPY flink-jobs flink-jobs
RUN mvn -q -B -s .mvn/settings.xml package -DskipTests

FROM eclipse-temurin:17-jre
WORKDIR /app
COPY --from=build /src/streams/target/streams-0.1.0.jar /app/streams.jar
COPY --from=build /src/flink-jobs/target/flink-jobs-0.1.0.jar /app/flink-jobs.jar
ENTRYPOINT ["java", "-jar", "/app/streams.jar"]
