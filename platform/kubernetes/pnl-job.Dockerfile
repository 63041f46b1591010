# Flink with the P&L job's jar where a FlinkDeployment in application mode finds it
# (local:///opt/flink/usrlib/flink-jobs.jar). Built from the repository root after the apps image:
#   docker build -f platform/compose/apps.Dockerfile -t brokerstream/apps:0.1.0 .
#   docker build -f platform/kubernetes/pnl-job.Dockerfile -t brokerstream/pnl-job:0.1.0 .
ARG APPS_IMAGE=brokerstream/apps:0.1.0
FROM ${APPS_IMAGE} AS apps

# Flink's distribution ships its Prometheus reporter as a plugin (plugins/metrics-prometheus), loaded as is.
FROM flink:2.2.1-java17
COPY --from=apps /app/flink-jobs.jar /opt/flink/usrlib/flink-jobs.jar
