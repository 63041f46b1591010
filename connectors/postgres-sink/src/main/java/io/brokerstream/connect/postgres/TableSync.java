package io.brokerstream.connect.postgres;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.sink.SinkRecord;
import org.postgresql.PGConnection;

/**
 * One table's sync: a batch of records becomes one COPY into a session-local staging table and one
 * INSERT ... SELECT ... ON CONFLICT into the table, in the caller's transaction. Where the batch
 * holds a key more than once, its last record wins (Kafka order), as row-by-row upserts would have
 * left it: the batch is reduced here, before it is sent (sorting it in Postgres by text keys under
 * the database's collation cost more than the rest of the write).
 *
 * <p>Per row Postgres parses, plans and executes nothing: the statement runs once per batch. The
 * Debezium JDBC sink bound and executed an upsert per record (55 us of Postgres CPU per row here,
 * against 13). A table's {@code synced_at} column, when it has one, is stamped by the same
 * statement with the time each row is written ({@code clock_timestamp()}), where a row trigger ran
 * a PL/pgSQL function per row to do it.
 */
final class TableSync {
  /**
   * The key of a table whose rows are named by their place in Kafka (an order's events: many per
   * order).
   */
  static final List<String> KAFKA_KEY =
      List.of("__connect_topic", "__connect_partition", "__connect_offset");

  /** The column, where a table has it, that says when its row was last written. */
  static final String SYNCED_AT = "synced_at";

  final String table;
  private final List<String> key;
  private final boolean update;
  private final String version; // the column that orders a key's rows, or null
  private final boolean stamped;
  private final Set<String> columns; // the table's, in order
  private final String stage;
  private Schema lastSchema;
  private List<String> lastColumns;

  TableSync(
      String table, List<String> key, boolean update, String version, Set<String> tableColumns) {
    this.table = table;
    this.key = key;
    this.update = update;
    this.version = version;
    this.columns = tableColumns;
    this.stamped = tableColumns.contains(SYNCED_AT);
    this.stage = "bs_stage_" + table;
    for (String k : key) {
      if (!columns.contains(k)) {
        throw new IllegalArgumentException(
            "table " + table + " has no key column " + k + " (columns " + columns + ")");
      }
    }
    if (version != null && !columns.contains(version)) {
      throw new IllegalArgumentException(
          "table " + table + " has no version column " + version + " (columns " + columns + ")");
    }
  }

  /** The same table's sync on a new connection: the columns stay those read when the task began. */
  TableSync again() {
    return new TableSync(table, key, update, version, columns);
  }

  /** The columns of a table, in order, from the database. */
  static Set<String> columnsOf(Connection c, String table) throws SQLException {
    Set<String> out = new LinkedHashSet<>();
    try (PreparedStatement s =
        c.prepareStatement(
            "SELECT column_name FROM information_schema.columns "
                + "WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position")) {
      s.setString(1, table);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
    }
    if (out.isEmpty()) {
      throw new SQLException(
          "no table " + table + " in the current schema", "42P01"); // undefined_table
    }
    return out;
  }

  /**
   * The columns a record fills: its fields that the table has, and its Kafka place for a
   * Kafka-keyed table.
   */
  List<String> columnsFor(Schema schema) {
    if (schema == lastSchema) {
      return lastColumns;
    }
    List<String> out = new ArrayList<>();
    for (Field f : schema.fields()) {
      if (columns.contains(f.name())
          && !KAFKA_KEY.contains(f.name())
          && !f.name().equals(SYNCED_AT)) {
        out.add(f.name());
      }
    }
    if (key.equals(KAFKA_KEY)) {
      out.addAll(KAFKA_KEY);
    }
    for (String k : key) {
      if (!out.contains(k)) {
        throw new DataException(
            "a record of schema "
                + schema.name()
                + " has no field "
                + k
                + " for the key of "
                + table);
      }
    }
    lastSchema = schema;
    lastColumns = out;
    return out;
  }

  /** The batch's rows in COPY text, all of one schema's columns. */
  static String copyText(List<SinkRecord> records, List<String> columns) {
    StringBuilder out = new StringBuilder(records.size() * 160);
    for (SinkRecord r : records) {
      Struct value = (Struct) r.value();
      for (int i = 0; i < columns.size(); i++) {
        if (i > 0) {
          out.append('\t');
        }
        String c = columns.get(i);
        switch (c) {
          case "__connect_topic" -> CopyText.escape(out, r.topic());
          case "__connect_partition" -> out.append(r.kafkaPartition());
          case "__connect_offset" -> out.append(r.kafkaOffset());
          default -> CopyText.append(out, value.get(c), value.schema().field(c).schema());
        }
      }
      out.append('\n');
    }
    return out.toString();
  }

  /**
   * The last record of each key, in the order of those last records (a Kafka-keyed table's are all
   * unique).
   */
  static List<SinkRecord> lastOfEachKey(List<SinkRecord> records, List<String> key) {
    if (key.equals(KAFKA_KEY) || records.size() < 2) {
      return records;
    }
    Map<List<Object>, SinkRecord> last = new LinkedHashMap<>(records.size() * 2);
    for (SinkRecord r : records) {
      Struct v = (Struct) r.value();
      List<Object> k = new ArrayList<>(key.size());
      for (String c : key) {
        k.add(v.get(c));
      }
      last.remove(k); // re-inserted below: its place is its last record's
      last.put(k, r);
    }
    return last.size() == records.size() ? records : new ArrayList<>(last.values());
  }

  /**
   * The statement that moves a staged batch (one record per key) into the table; a {@code stamped}
   * table's synced_at is set to the time each row is written, also when an update rewrites it. With
   * a {@code version} column a row is only ever replaced by a higher version: a replay (after a
   * restart, or by a second task) can rewrite nothing older over what is there.
   */
  static String upsert(
      String table,
      String stage,
      List<String> columns,
      List<String> key,
      boolean update,
      boolean stamped) {
    return upsert(table, stage, columns, key, update, stamped, null);
  }

  static String upsert(
      String table,
      String stage,
      List<String> columns,
      List<String> key,
      boolean update,
      boolean stamped,
      String version) {
    String cols = columns.stream().map(TableSync::quote).collect(Collectors.joining(", "));
    String keys = key.stream().map(TableSync::quote).collect(Collectors.joining(", "));
    StringBuilder sql =
        new StringBuilder("INSERT INTO ")
            .append(quote(table))
            .append(" (")
            .append(cols)
            .append(stamped ? ", " + quote(SYNCED_AT) : "")
            .append(")")
            .append(" SELECT ")
            .append(cols)
            .append(stamped ? ", clock_timestamp()" : "")
            .append(" FROM ")
            .append(quote(stage))
            .append(" ON CONFLICT (")
            .append(keys)
            .append(") DO ");
    List<String> rest = columns.stream().filter(c -> !key.contains(c)).toList();
    if (!update || rest.isEmpty()) {
      sql.append("NOTHING");
    } else {
      sql.append("UPDATE SET ")
          .append(
              rest.stream()
                  .map(c -> quote(c) + " = EXCLUDED." + quote(c))
                  .collect(Collectors.joining(", ")));
      if (stamped) {
        sql.append(", ").append(quote(SYNCED_AT)).append(" = EXCLUDED.").append(quote(SYNCED_AT));
      }
      if (version != null && columns.contains(version)) {
        sql.append(" WHERE ")
            .append(quote(table))
            .append('.')
            .append(quote(version))
            .append(" < EXCLUDED.")
            .append(quote(version));
      }
    }
    return sql.toString();
  }

  static String quote(String identifier) {
    return '"' + identifier.replace("\"", "\"\"") + '"';
  }

  /**
   * Creates the session's staging table, emptied by every commit: a batch never sees another's
   * rows. Made once per connection and committed at once, so a rolled-back batch cannot take it
   * away from the next.
   */
  void stage(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(
          "CREATE TEMP TABLE IF NOT EXISTS "
              + quote(stage)
              + " (LIKE "
              + quote(table)
              + ") ON COMMIT DELETE ROWS");
    }
  }

  /** Empties the staging table inside a transaction that writes this table more than once. */
  void emptyStage(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("DELETE FROM " + quote(stage));
    }
  }

  /**
   * Writes the records (non-null Struct values of this table's topic) in the connection's
   * transaction; {@link #stage} ran on this connection before.
   */
  void write(Connection c, List<SinkRecord> records) throws SQLException {
    if (records.isEmpty()) {
      return;
    }
    // one schema per run of records: a new schema version starts a new COPY
    int from = 0;
    while (from < records.size()) {
      Schema schema = ((Struct) records.get(from).value()).schema();
      int to = from + 1;
      while (to < records.size() && ((Struct) records.get(to).value()).schema() == schema) {
        to++;
      }
      List<String> cols = columnsFor(schema);
      List<SinkRecord> run = lastOfEachKey(records.subList(from, to), key);
      byte[] rows = copyText(run, cols).getBytes(StandardCharsets.UTF_8);
      String copy =
          "COPY "
              + quote(stage)
              + " ("
              + cols.stream().map(TableSync::quote).collect(Collectors.joining(", "))
              + ") FROM STDIN";
      try {
        c.unwrap(PGConnection.class).getCopyAPI().copyIn(copy, new ByteArrayInputStream(rows));
      } catch (IOException e) {
        throw new SQLException("COPY into " + stage + " failed", e);
      }
      try (Statement s = c.createStatement()) {
        s.executeUpdate(upsert(table, stage, cols, key, update, stamped, version));
        if (to < records.size()) {
          s.execute("TRUNCATE " + quote(stage)); // the next run of this transaction starts empty
        }
      }
      from = to;
    }
  }

  /** The key columns of each table, from `key.<table>` settings: a comma list, or `kafka`. */
  static List<String> keyOf(Map<String, String> settings, String table) {
    String k = settings.get("key." + table);
    if (k == null || k.isBlank()) {
      throw new IllegalArgumentException(
          "key." + table + " is missing: the columns of its primary key, or kafka");
    }
    return k.trim().equals("kafka") ? KAFKA_KEY : List.of(k.trim().split("\\s*,\\s*"));
  }
}
