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
    Map<String, Boolean> updateOfTable) {

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
          .define("topics", ConfigDef.Type.LIST, ConfigDef.Importance.HIGH, "the topics to sync");

  static SinkSettings of(Map<String, String> props) {
    String url = required(props, "connection.url");
    String topics = required(props, "topics");
    Map<String, String> tables = new LinkedHashMap<>();
    Map<String, List<String>> keys = new LinkedHashMap<>();
    Map<String, Boolean> update = new LinkedHashMap<>();
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
    }
    return new SinkSettings(
        url,
        props.getOrDefault("connection.username", ""),
        props.getOrDefault("connection.password", ""),
        tables,
        keys,
        update);
  }

  private static String required(Map<String, String> props, String key) {
    String v = props.get(key);
    if (v == null || v.isBlank()) {
      throw new ConfigException(key + " is required");
    }
    return v;
  }
}
