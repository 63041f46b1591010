package io.brokerstream.connect.postgres;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Each batch Connect hands over is one transaction: per table, a COPY and an upsert ({@link
 * TableSync}). Committed before put returns, so the offsets Connect commits afterwards never run
 * ahead of Postgres; a batch written again after a restart rewrites the same rows (upserts by key).
 * A batch that Postgres refuses is written again record by record, and the records it still refuses
 * go to the dead letter queue with their cause; a lost connection is retried (the batch is handed
 * over again).
 */
public final class PostgresSinkTask extends SinkTask {
  private static final Logger log = LoggerFactory.getLogger(PostgresSinkTask.class);
  private SinkSettings settings;
  private Connection connection;
  private final Map<String, TableSync> tables = new LinkedHashMap<>();
  private ErrantRecordReporter reporter;

  @Override
  public String version() {
    return PostgresSinkConnector.VERSION;
  }

  @Override
  public void start(Map<String, String> props) {
    settings = SinkSettings.of(props);
    try {
      reporter = context.errantRecordReporter();
    } catch (NoSuchMethodError | NoClassDefFoundError e) {
      reporter = null; // an older worker: a refused record fails the task
    }
    try {
      connection(); // a wrong password or a missing table fails the task now, not at its first
      // record
    } catch (SQLException e) {
      close();
      failIfMisconfigured(e);
      log.warn(
          "Postgres is not reachable yet ({}): the first batch will try again", e.getMessage());
    }
  }

  private Connection connection() throws SQLException {
    if (connection == null || connection.isClosed()) {
      connection =
          DriverManager.getConnection(settings.url(), settings.user(), settings.password());
      connection.setAutoCommit(false);
      tables.clear(); // staging tables are the session's
      for (Map.Entry<String, List<String>> e : settings.keyOfTable().entrySet()) {
        String table = e.getKey();
        tables.put(
            table,
            new TableSync(
                table,
                e.getValue(),
                settings.updateOfTable().get(table),
                TableSync.columnsOf(connection, table)));
      }
      connection.commit();
    }
    return connection;
  }

  @Override
  public void put(Collection<SinkRecord> records) {
    if (records.isEmpty()) {
      return;
    }
    Map<String, List<SinkRecord>> byTable = new LinkedHashMap<>();
    for (SinkRecord r : records) {
      if (r.value() == null) {
        continue; // a tombstone: rows are never deleted from here
      }
      if (!(r.value() instanceof Struct)) {
        refuse(
            r,
            new DataException(
                "the value is a " + r.value().getClass().getSimpleName() + ", not a record"));
        continue;
      }
      byTable
          .computeIfAbsent(settings.tableOfTopic().get(r.topic()), t -> new ArrayList<>())
          .add(r);
    }
    try {
      Connection c = connection();
      try {
        for (Map.Entry<String, List<SinkRecord>> e : byTable.entrySet()) {
          tables.get(e.getKey()).write(c, e.getValue());
        }
        c.commit();
      } catch (SQLException | DataException e) {
        c.rollback();
        if (e instanceof SQLException sql && lostConnection(sql)) {
          throw sql;
        }
        log.warn(
            "a batch of {} records was refused ({}): writing them one by one",
            records.size(),
            e.getMessage());
        oneByOne(c, byTable);
      }
    } catch (SQLException e) {
      close();
      failIfMisconfigured(e);
      throw new RetriableException("Postgres did not take the batch: " + e.getMessage(), e);
    }
  }

  private void oneByOne(Connection c, Map<String, List<SinkRecord>> byTable) throws SQLException {
    for (Map.Entry<String, List<SinkRecord>> e : byTable.entrySet()) {
      TableSync table = tables.get(e.getKey());
      for (SinkRecord r : e.getValue()) {
        try {
          table.write(c, List.of(r));
          c.commit();
        } catch (SQLException | DataException refused) {
          c.rollback();
          if (refused instanceof SQLException sql && lostConnection(sql)) {
            throw sql;
          }
          refuse(r, refused);
        }
      }
    }
  }

  private void refuse(SinkRecord r, Exception cause) {
    if (reporter == null) {
      throw new ConnectException(
          "record "
              + r.topic()
              + "/"
              + r.kafkaPartition()
              + "/"
              + r.kafkaOffset()
              + " cannot be written",
          cause);
    }
    try {
      reporter.report(r, cause).get();
    } catch (Exception e) {
      throw new ConnectException(
          "the dead letter queue did not take " + r.topic() + "/" + r.kafkaOffset(), e);
    }
  }

  /**
   * SQLSTATE classes 28 (authorization: a wrong user or password), 3D (no such database) and 42 (no
   * such table or column): retrying cannot help, the task fails and says why.
   */
  static boolean misconfigured(SQLException e) {
    String state = e.getSQLState();
    return state != null
        && (state.startsWith("28") || state.startsWith("3D") || state.startsWith("42"));
  }

  private static void failIfMisconfigured(SQLException e) {
    if (misconfigured(e)) {
      throw new ConnectException("cannot sync to Postgres as configured: " + e.getMessage(), e);
    }
  }

  /** SQLSTATE class 08 (connection exception), or a closed connection: worth another try later. */
  static boolean lostConnection(SQLException e) {
    String state = e.getSQLState();
    return state != null && (state.startsWith("08") || state.equals("57P01"));
  }

  @Override
  public void stop() {
    close();
  }

  private void close() {
    if (connection != null) {
      try {
        connection.close();
      } catch (SQLException e) {
        log.debug("closing the connection", e);
      }
      connection = null;
    }
  }
}
