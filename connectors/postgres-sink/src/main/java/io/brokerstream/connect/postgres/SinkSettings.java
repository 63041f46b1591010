package io.brokerstream.connect.postgres;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;

/**
 * The connector's settings: where Postgres is, and which table, key and conflict rule each topic
 * has.
 */
record SinkSettings(
    String url,
    String user,
    String password,
    Map<String, String> tableOfTopic,
    Map<String, List<String>> keyOfTable,
    Map<String, Boolean> updateOfTable,
    Map<String, String> versionOfTable,
    String connector,
    String offsetsTable,
    long retryBackoffMs,
    long retryBackoffMaxMs,
    long retryTimeoutMs,
    long statementTimeoutMs) {

  /** The first wait after a fault; each next one doubles, up to retry.backoff.max.ms. */
  static final long RETRY_BACKOFF_MS = 500;

  static final long RETRY_BACKOFF_MAX_MS = 10_000;

  /**
   * How long one batch may wait on faults before the task fails (and says why in its status): 15
   * minutes, longer than a standby's promotion or a restart of Postgres takes, short enough that a
   * database that will not come back pages someone the same quarter hour.
   */
  static final long RETRY_TIMEOUT_MS = 900_000;

  /**
   * How long one statement of the sink may run (Postgres's statement_timeout for its sessions): a
   * write stuck behind a lock for a minute is cancelled, counted as a fault and tried again, so the
   * task's status says it waits instead of hanging in silence. 0: no limit.
   */
  static final long STATEMENT_TIMEOUT_MS = 60_000;

  static final ConfigDef DEFINITION =
      new ConfigDef()
          .define(
              "connection.url",
              ConfigDef.Type.STRING,
              ConfigDef.Importance.HIGH,
              "JDBC URL of the database")
          .define(
              "connection.username",
              ConfigDef.Type.STRING,
              ConfigDef.Importance.HIGH,
              "database user")
          .define(
              "connection.password",
              ConfigDef.Type.PASSWORD,
              "",
              ConfigDef.Importance.HIGH,
              "its password")
          .define("topics", ConfigDef.Type.LIST, ConfigDef.Importance.HIGH, "the topics to sync")
          .define(
              "offsets.table",
              ConfigDef.Type.STRING,
              "sink_offsets",
              ConfigDef.Importance.MEDIUM,
              "the table where the sink keeps each partition's next offset, written in the same"
                  + " transaction as the rows")
          .define(
              "retry.backoff.ms",
              ConfigDef.Type.LONG,
              RETRY_BACKOFF_MS,
              ConfigDef.Importance.LOW,
              "the first wait after a fault of Postgres; doubled after each further one")
          .define(
              "retry.backoff.max.ms",
              ConfigDef.Type.LONG,
              RETRY_BACKOFF_MAX_MS,
              ConfigDef.Importance.LOW,
              "the longest wait between two tries")
          .define(
              "retry.timeout.ms",
              ConfigDef.Type.LONG,
              RETRY_TIMEOUT_MS,
              ConfigDef.Importance.MEDIUM,
              "how long a batch may wait on faults before the task fails")
          .define(
              "statement.timeout.ms",
              ConfigDef.Type.LONG,
              STATEMENT_TIMEOUT_MS,
              ConfigDef.Importance.LOW,
              "the longest one statement of the sink may run before Postgres cancels it (a fault,"
                  + " retried); 0: no limit");

  static SinkSettings of(Map<String, String> props) {
    String url = required(props, "connection.url");
    String topics = required(props, "topics");
    Map<String, String> tables = new LinkedHashMap<>();
    Map<String, List<String>> keys = new LinkedHashMap<>();
    Map<String, Boolean> update = new LinkedHashMap<>();
    Map<String, String> version = new LinkedHashMap<>();
    for (String topic : topics.split("\\s*,\\s*")) {
      String table =
          props.getOrDefault("table." + topic, topic.replace('.', '_').replace('-', '_'));
      tables.put(topic, table);
      try {
        keys.put(table, TableSync.keyOf(props, table));
      } catch (IllegalArgumentException e) {
        throw new ConfigException(e.getMessage());
      }
      String conflict = props.getOrDefault("conflict." + table, "update");
      if (!conflict.equals("update") && !conflict.equals("nothing")) {
        throw new ConfigException("conflict." + table + " is update or nothing, got " + conflict);
      }
      update.put(table, conflict.equals("update"));
      String v = props.get("version." + table);
      if (v != null && !v.isBlank()) {
        version.put(table, v.trim());
      }
    }
    return new SinkSettings(
        url,
        props.getOrDefault("connection.username", ""),
        props.getOrDefault("connection.password", ""),
        tables,
        keys,
        update,
        version,
        props.getOrDefault("name", "postgres-sink"),
        props.getOrDefault("offsets.table", "sink_offsets"),
        millis(props, "retry.backoff.ms", RETRY_BACKOFF_MS),
        millis(props, "retry.backoff.max.ms", RETRY_BACKOFF_MAX_MS),
        millis(props, "retry.timeout.ms", RETRY_TIMEOUT_MS),
        millis(props, "statement.timeout.ms", STATEMENT_TIMEOUT_MS));
  }

  private static long millis(Map<String, String> props, String key, long otherwise) {
    String v = props.get(key);
    if (v == null || v.isBlank()) {
      return otherwise;
    }
    try {
      long ms = Long.parseLong(v.trim());
      if (ms < 0) {
        throw new ConfigException(key + " must be >= 0, got " + v);
      }
      return ms;
    } catch (NumberFormatException e) {
      throw new ConfigException(key + " must be a number of milliseconds, got " + v);
    }
  }

  private static String required(Map<String, String> props, String key) {
    String v = props.get(key);
    if (v == null || v.isBlank()) {
      throw new ConfigException(key + " is required");
    }
    return v;
  }
}
