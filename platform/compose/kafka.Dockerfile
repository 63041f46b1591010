# Apache Kafka with the Prometheus JMX exporter as a Java agent: each node serves its request and topic
# counters (platform/metrics/kafka-jmx.yaml) on port 9404, as the native launcher's nodes do on
# BS_KAFKA_METRICS_PORT. Built from the repository root.
FROM apache/kafka:4.3.1
ARG JMX_EXPORTER_VERSION=1.0.1
USER root
RUN mkdir -p /opt/metrics && \
    wget -q -O /opt/metrics/jmx_prometheus_javaagent.jar \
      "https://repo1.maven.org/maven2/io/prometheus/jmx/jmx_prometheus_javaagent/$JMX_EXPORTER_VERSION/jmx_prometheus_javaagent-$JMX_EXPORTER_VERSION.jar"
COPY platform/metrics/kafka-jmx.yaml /opt/metrics/kafka-jmx.yaml
USER appuser
ENV KAFKA_OPTS="-javaagent:/opt/metrics/jmx_prometheus_javaagent.jar=9404:/opt/metrics/kafka-jmx.yaml"
