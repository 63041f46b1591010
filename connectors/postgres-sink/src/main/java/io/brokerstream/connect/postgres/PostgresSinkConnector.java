package io.brokerstream.connect.postgres;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.sink.SinkConnector;

/**
 * The flow's topics into their Postgres tables, upserting by each table's primary key (or by the
 * record's place in Kafka), a batch at a time.
 *
 * <pre>
 *   connection.url, connection.username, connection.password
 *   table.&lt;topic&gt;     the table a topic's records go to (default: the topic, '.' and '-' as '_')
 *   key.&lt;table&gt;       its primary key's columns, comma separated, or kafka (__connect_topic, _partition, _offset)
 *   conflict.&lt;table&gt;  update (default: the newest record of a key wins) or nothing (rows never change)
 * </pre>
 *
 * Columns are the record's fields the table has; {@code synced_at}, where the table has it, is the
 * time the sink wrote the row (set by its statement, never from a record). A record that cannot be
 * written goes to the worker's dead letter queue with its cause (errors.tolerance=all).
 */
public final class PostgresSinkConnector extends SinkConnector {
  static final String VERSION = "0.1.0";
  private Map<String, String> settings;

  @Override
  public void start(Map<String, String> props) {
    settings = Map.copyOf(props);
    SinkSettings.of(settings); // refuses a configuration that cannot work before any task starts
  }

  @Override
  public Class<? extends Task> taskClass() {
    return PostgresSinkTask.class;
  }

  @Override
  public List<Map<String, String>> taskConfigs(int maxTasks) {
    List<Map<String, String>> out = new ArrayList<>();
    for (int i = 0; i < maxTasks; i++) {
      out.add(settings);
    }
    return out;
  }

  @Override
  public void stop() {}

  @Override
  public ConfigDef config() {
    return SinkSettings.DEFINITION;
  }

  @Override
  public String version() {
    return VERSION;
  }
}
