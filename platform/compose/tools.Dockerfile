# Our Python tooling (launcher provisioning, generators, load drivers, analytics) for compose's
# one-shot jobs. Same pinned requirements as the native venv.
# the P&L job's jar, built like apps.Dockerfile builds it (no dependency between the two images)
FROM maven:3.9-eclipse-temurin-17 AS jobs
WORKDIR /src
COPY .mvn .mvn
COPY pom.xml .
COPY schemas schemas
COPY pricing pricing
COPY streams streams
COPY flink-jobs flink-jobs
RUN mvn -q -B -s .mvn/settings.xml package -DskipTests -pl flink-jobs -am

FROM python:3.11-slim
WORKDIR /app
COPY requirements.lock /app/
RUN pip install --no-cache-dir --no-deps -r requirements.lock
COPY python /app/python
COPY platform /app/platform
COPY schemas /app/schemas
COPY connectors /app/connectors
COPY sql /app/sql
COPY loadtest /app/loadtest
COPY flink-jobs/src/main/resources /app/flink-jobs/src/main/resources
# the P&L job, submitted to the Flink session cluster by `provision`
COPY --from=jobs /src/flink-jobs/target/flink-jobs-0.1.0.jar /app/flink-jobs/target/flink-jobs-0.1.0.jar
ENV PYTHONPATH=/app/python
ENTRYPOINT []
