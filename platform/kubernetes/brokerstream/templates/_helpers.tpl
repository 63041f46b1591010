{{/* The catalog made from platform/topics.yaml, the secure profile and connectors/*.json. */}}
{{- define "brokerstream.catalog" -}}
{{- .Files.Get "files/catalog.yaml" | fromYaml | toJson -}}
{{- end -}}

{{- define "brokerstream.labels" -}}
app.kubernetes.io/part-of: brokerstream
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}

{{/* Strimzi's TLS listener with SCRAM logins: every client of the chart uses it. */}}
{{- define "brokerstream.bootstrap" -}}
{{ .Values.kafka.cluster }}-kafka-bootstrap:9093
{{- end -}}

{{/* A Kubernetes name for a Kafka name: lower case, no underscores at either end. */}}
{{- define "brokerstream.k8sName" -}}
{{- . | lower | replace "_" "-" | trimAll "-" -}}
{{- end -}}

{{/*
An init container writing the Kafka login file the apps read (ClientLogin: security protocol, SASL, trust
store), from the KafkaUser's secret and the cluster CA's certificate; no password in argv or the pod spec.
Call with (dict "root" $ "user" "streams" "file" "kafka.properties").
*/}}
{{- define "brokerstream.loginInit" -}}
- name: login-{{ .user }}
  image: {{ .root.Values.images.apps }}
  imagePullPolicy: {{ .root.Values.images.pullPolicy }}
  command: ["sh", "-c"]
  args:
    - |
      umask 077
      {
        echo "security.protocol=SASL_SSL"
        echo "sasl.mechanism=SCRAM-SHA-512"
        echo "ssl.truststore.type=PEM"
        echo "ssl.truststore.location=/etc/brokerstream/ca/ca.crt"
        printf 'sasl.jaas.config=%s\n' "$JAAS"
      } > /etc/brokerstream/login/{{ .file }}
  env:
    - name: JAAS
      valueFrom:
        secretKeyRef: {name: {{ .user }}, key: sasl.jaas.config}
  volumeMounts:
    - {name: login, mountPath: /etc/brokerstream/login}
{{- end -}}
