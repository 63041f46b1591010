package io.brokerstream.connect.postgres;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
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
 * TableSync}), and the partitions' next offsets ({@link SinkOffsets}). So Postgres holds a batch
 * whole or not at all, and knows which records it holds: a task starts where Postgres stands, and a
 * replayed record is skipped, never written twice.
 *
 * <p>Whose fault an error is decides what happens ({@link SqlFaults}). A record Postgres refuses
 * for its own content goes to the dead letter queue with its cause; the rest of the batch is
 * written in the same transaction, record by record behind savepoints. Any other error is the
 * world's: the batch is rolled back whole and tried again, with backoff, on a new connection, while
 * the task's JMX status says what it waits on; past retry.timeout.ms the task fails, loudly, rather
 * than skip a row.
 */
public final class PostgresSinkTask extends SinkTask {
  private static final Logger log = LoggerFactory.getLogger(PostgresSinkTask.class);
  private static final Pattern TASK_THREAD = Pattern.compile("-(\\d+)$");

  private SinkSettings settings;
  private Connection connection;
  private final Map<String, TableSync> tables = new LinkedHashMap<>();
  private ErrantRecordReporter reporter;
  private SinkOffsets offsets;
  private SinkStatus status;

  /** The next offset to write of each partition, as Postgres holds it; absent: never written. */
  private final Map<TopicPartition, Long> next = new HashMap<>();

  /** Assigned partitions whose place in Postgres is not read yet: paused until it is. */
  private final Set<TopicPartition> unread = new HashSet<>();

  /**
   * Partitions sought back to where Postgres stands (it lost commits): their records are refused
   * until the replay from there arrives. Connect keeps its own copy of a batch and hands it over
   * again after a retriable error, so dropping the records once is not enough.
   */
  private final Map<TopicPartition, Replay> replaying = new HashMap<>();

  private static final class Replay {
    final long from;
    boolean sought; // a put returned since the seek: Connect has applied it to the consumer

    Replay(long from) {
      this.from = from;
    }
  }

  private long faultSinceNanos; // 0: the batch in hand has met no fault
  private long backoffMs;

  @Override
  public String version() {
    return PostgresSinkConnector.VERSION;
  }

  @Override
  public void start(Map<String, String> props) {
    settings = SinkSettings.of(props);
    offsets = new SinkOffsets(settings.offsetsTable(), settings.connector());
    status = new SinkStatus(settings.connector(), taskNumber());
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
      if (SqlFaults.misconfigured(e)) {
        throw new ConnectException(
            "cannot sync to Postgres as configured: " + SqlFaults.describe(e), e);
      }
      log.warn(
          "Postgres is not reachable yet ({}): the first batch will try again",
          SqlFaults.describe(e));
    }
  }

  /** The task's number, from the name Connect gives its thread (task-thread-NAME-N). */
  private static String taskNumber() {
    Matcher m = TASK_THREAD.matcher(Thread.currentThread().getName());
    return m.find() ? m.group(1) : "0";
  }

  private Connection connection() throws SQLException {
    if (connection == null || connection.isClosed()) {
      Properties props = new Properties();
      props.setProperty("user", settings.user());
      props.setProperty("password", settings.password());
      // pg_stat_activity names the sink's sessions (an operator, or a fault test, can find them)
      props.setProperty("ApplicationName", "brokerstream-sink " + settings.connector());
      // the sink's own limit, set for its sessions only (not the database's, which others share)
      props.setProperty("options", "-c statement_timeout=" + settings.statementTimeoutMs());
      connection = DriverManager.getConnection(settings.url(), props);
      connection.setAutoCommit(false);
      if (tables.isEmpty()) {
        // The columns are read once, when the task begins: a column dropped while it runs is a
        // fault to wait out (the write fails until it is back), not a column to stop writing.
        // Built apart and kept only whole: a fault halfway must not leave a table out for good.
        Map<String, TableSync> read = new LinkedHashMap<>();
        for (Map.Entry<String, List<String>> e : settings.keyOfTable().entrySet()) {
          String table = e.getKey();
          read.put(
              table,
              new TableSync(
                  table,
                  e.getValue(),
                  settings.updateOfTable().get(table),
                  settings.versionOfTable().get(table),
                  TableSync.columnsOf(connection, table)));
        }
        tables.putAll(read);
      } else {
        tables.replaceAll((name, t) -> t.again());
      }
      for (TableSync t : tables.values()) {
        t.stage(connection);
      }
      offsets.check(connection); // the offsets table is there, or this is a fault
      connection.commit();
    }
    return connection;
  }

  @Override
  public void open(Collection<TopicPartition> partitions) {
    unread.addAll(partitions);
    try {
      readOffsets(connection());
    } catch (SQLException e) {
      close();
      // Not known where Postgres stands: nothing of these partitions may be written until it is.
      context.pause(unread.toArray(TopicPartition[]::new));
      log.warn(
          "cannot read the sink's offsets from Postgres ({}): {} paused until it answers",
          SqlFaults.describe(e),
          unread);
    }
  }

  /** Reads where Postgres stands on the unread partitions, and moves the consumer there. */
  private void readOffsets(Connection c) throws SQLException {
    if (unread.isEmpty()) {
      return;
    }
    Map<TopicPartition, Long> stored = offsets.read(c, unread);
    c.commit();
    for (TopicPartition tp : unread) {
      Long at = stored.get(tp);
      if (at != null) {
        next.put(tp, at);
        context.offset(tp, at); // forwards past what Postgres holds, or back to what it lacks
      } else {
        next.remove(tp); // never written by this connector: from the consumer's own offset
      }
    }
    context.resume(unread.toArray(TopicPartition[]::new));
    log.info("starting from Postgres's offsets {} (others from the consumer's)", stored);
    unread.clear();
  }

  @Override
  public void close(Collection<TopicPartition> partitions) {
    for (TopicPartition tp : partitions) {
      next.remove(tp);
      unread.remove(tp);
      replaying.remove(tp); // whoever opens it next starts from Postgres's offsets
    }
  }

  @Override
  public Map<TopicPartition, OffsetAndMetadata> preCommit(
      Map<TopicPartition, OffsetAndMetadata> currentOffsets) {
    // Kafka's offsets follow Postgres's: never ahead of a row, so lag metrics say what is
    // unwritten.
    Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
    for (TopicPartition tp : currentOffsets.keySet()) {
      Long at = next.get(tp);
      if (at != null) {
        out.put(tp, new OffsetAndMetadata(at));
      }
    }
    return out;
  }

  @Override
  public void put(Collection<SinkRecord> records) {
    if (records.isEmpty() && unread.isEmpty()) {
      return; // an idle poll: nothing to write, no need to reach Postgres
    }
    try {
      Connection c = connection();
      readOffsets(c);
      records = awaitingReplay(records);
      for (int fenced = 0; ; fenced++) {
        if (write(c, records)) {
          break;
        }
        // The offsets are not where this task left them. Ahead: another task wrote (a zombie of a
        // rebalance, or this one's successor), so write only what is beyond. Behind: Postgres
        // lost its last commits (a standby promoted before it had them), so the records from
        // where it stands come again, in order, before anything in hand is written.
        c.rollback();
        Map<TopicPartition, Long> had = new HashMap<>(next);
        unread.addAll(next.keySet());
        for (SinkRecord r : records) {
          unread.add(new TopicPartition(r.topic(), r.kafkaPartition()));
        }
        readOffsets(c);
        fellBehind(had);
        records = awaitingReplay(records);
        if (fenced > 3) {
          throw new SQLException("the sink's offsets keep moving under it", "40001");
        }
      }
      faultSinceNanos = 0;
      backoffMs = 0;
      status.writing();
      replaying.values().forEach(r -> r.sought = true);
    } catch (SQLException e) {
      waitOn(e);
    }
  }

  /**
   * The batch without the records of partitions still waiting for their replay. A partition's
   * replay has arrived when its first record in the batch is at or before where Postgres stands.
   * One that starts beyond it after the seek took effect means Kafka no longer holds the records
   * Postgres lost (retention removed them): they exist nowhere, and the task fails rather than
   * write over the gap.
   */
  private Collection<SinkRecord> awaitingReplay(Collection<SinkRecord> records) {
    if (replaying.isEmpty()) {
      return records;
    }
    Map<TopicPartition, Long> first = new HashMap<>();
    for (SinkRecord r : records) {
      first.putIfAbsent(new TopicPartition(r.topic(), r.kafkaPartition()), r.kafkaOffset());
    }
    Set<TopicPartition> waiting = new HashSet<>();
    for (Map.Entry<TopicPartition, Long> e : first.entrySet()) {
      TopicPartition tp = e.getKey();
      Replay replay = replaying.get(tp);
      if (replay == null) {
        continue;
      }
      if (e.getValue() <= replay.from) {
        replaying.remove(tp); // the replay is here: written from where Postgres stands
      } else if (replay.sought) {
        throw new ConnectException(
            "Postgres holds "
                + tp
                + " up to offset "
                + replay.from
                + " but Kafka now starts it at "
                + e.getValue()
                + ": the records between exist nowhere; the sync stops rather than skip them");
      } else {
        context.offset(tp, replay.from); // again: the batch came back after a retriable error
        waiting.add(tp);
      }
    }
    return waiting.isEmpty() ? records : without(records, waiting);
  }

  /**
   * The partitions whose offsets Postgres now holds below what this task wrote (or holds no longer)
   * are sought back to where Postgres stands (the start, when its row is gone) and await their
   * replay, so nothing between there and the batch in hand is skipped.
   */
  private void fellBehind(Map<TopicPartition, Long> had) {
    for (Map.Entry<TopicPartition, Long> e : had.entrySet()) {
      TopicPartition tp = e.getKey();
      Long now = next.get(tp);
      if (now == null || now < e.getValue()) {
        long from = now == null ? 0L : now; // absent stays absent: its first write inserts the row
        context.offset(tp, from);
        replaying.put(tp, new Replay(from));
        log.warn(
            "Postgres holds {} up to offset {}, below the {} this task wrote (a failover lost"
                + " commits?): replaying from there",
            tp,
            from,
            e.getValue());
      }
    }
  }

  /** The records of partitions other than `dropped`, in their order. */
  private static List<SinkRecord> without(
      Collection<SinkRecord> records, Set<TopicPartition> dropped) {
    List<SinkRecord> kept = new ArrayList<>();
    for (SinkRecord r : records) {
      if (!dropped.contains(new TopicPartition(r.topic(), r.kafkaPartition()))) {
        kept.add(r);
      }
    }
    return kept;
  }

  /**
   * Writes the records beyond Postgres's offsets and moves the offsets, in one transaction; false
   * (rolled back by the caller) when another task moved them first.
   */
  private boolean write(Connection c, Collection<SinkRecord> records) throws SQLException {
    Map<TopicPartition, Long> reach = new HashMap<>();
    Map<String, List<SinkRecord>> byTable = new LinkedHashMap<>();
    List<Refusal> refused = new ArrayList<>();
    int fresh = 0;
    for (SinkRecord r : records) {
      TopicPartition tp = new TopicPartition(r.topic(), r.kafkaPartition());
      Long at = next.get(tp);
      if (at != null && r.kafkaOffset() < at) {
        continue; // Postgres holds it already
      }
      reach.merge(tp, r.kafkaOffset() + 1, Math::max);
      fresh++;
      if (r.value() == null) {
        continue; // a tombstone: rows are never deleted from here
      }
      if (!(r.value() instanceof Struct)) {
        refused.add(
            new Refusal(
                r,
                new DataException(
                    "the value is a " + r.value().getClass().getSimpleName() + ", not a record")));
        continue;
      }
      byTable
          .computeIfAbsent(settings.tableOfTopic().get(r.topic()), t -> new ArrayList<>())
          .add(r);
    }
    if (fresh == 0) {
      return true;
    }
    try {
      for (Map.Entry<String, List<SinkRecord>> e : byTable.entrySet()) {
        tables.get(e.getKey()).write(c, e.getValue());
      }
    } catch (SQLException | DataException e) {
      c.rollback();
      if (e instanceof SQLException sql && !SqlFaults.recordsOwn(sql)) {
        throw sql; // the world's fault: the batch waits whole
      }
      log.warn(
          "a batch of {} records holds one Postgres refuses ({}): finding it record by record",
          records.size(),
          e instanceof SQLException sql ? SqlFaults.describe(sql) : e.getMessage());
      oneByOne(c, byTable, refused);
    }
    Map<TopicPartition, Long> expected = new HashMap<>();
    for (TopicPartition tp : reach.keySet()) {
      Long at = next.get(tp);
      if (at != null) {
        expected.put(tp, at);
      }
    }
    if (!offsets.move(c, reach, expected)) {
      return false;
    }
    // Dead letters go before the commit: a crash between the two letters a record twice, never
    // commits it unlettered.
    for (Refusal r : refused) {
      refuse(r.record(), r.cause());
    }
    c.commit();
    next.putAll(reach);
    return true;
  }

  private record Refusal(SinkRecord record, Exception cause) {}

  /**
   * The batch again in one transaction, each record behind a savepoint: those Postgres refuses for
   * their content are set aside for the dead letter queue, the rest stay; a fault ends it all.
   */
  private void oneByOne(Connection c, Map<String, List<SinkRecord>> byTable, List<Refusal> refused)
      throws SQLException {
    for (Map.Entry<String, List<SinkRecord>> e : byTable.entrySet()) {
      TableSync table = tables.get(e.getKey());
      for (SinkRecord r : e.getValue()) {
        Savepoint before = c.setSavepoint();
        try {
          table.emptyStage(c);
          table.write(c, List.of(r));
          c.releaseSavepoint(before);
        } catch (SQLException | DataException refusal) {
          if (refusal instanceof SQLException sql && !SqlFaults.recordsOwn(sql)) {
            c.rollback();
            throw sql;
          }
          c.rollback(before);
          refused.add(new Refusal(r, refusal));
        }
      }
      table.emptyStage(c);
    }
  }

  /**
   * A fault of the world: the batch is rolled back, Connect hands it over again after the backoff
   * (its partitions paused meanwhile); past retry.timeout.ms of faults the task fails.
   */
  private void waitOn(SQLException e) {
    close();
    long now = System.nanoTime();
    if (faultSinceNanos == 0) {
      faultSinceNanos = now;
    }
    long waitedMs = (now - faultSinceNanos) / 1_000_000;
    if (waitedMs > settings.retryTimeoutMs()) {
      throw new ConnectException(
          "Postgres has refused the batch for "
              + waitedMs / 1000
              + " s (retry.timeout.ms "
              + settings.retryTimeoutMs()
              + "); the last fault: "
              + SqlFaults.describe(e),
          e);
    }
    backoffMs =
        backoffMs == 0
            ? settings.retryBackoffMs()
            : Math.min(backoffMs * 2, settings.retryBackoffMaxMs());
    status.waiting(SqlFaults.state(e), faultSinceNanos);
    log.warn(
        "waiting on Postgres for {} s ({}): trying the batch again in {} ms",
        waitedMs / 1000,
        SqlFaults.describe(e),
        backoffMs);
    context.timeout(backoffMs);
    throw new RetriableException("Postgres did not take the batch: " + SqlFaults.describe(e), e);
  }

  private void refuse(SinkRecord r, Exception cause) throws SQLException {
    String why =
        cause instanceof SQLException sql ? SqlFaults.state(sql) : cause.getClass().getSimpleName();
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
      // bounded like a statement: a Kafka that does not acknowledge the letter is a fault of the
      // world, so the batch is rolled back and waited out whole (the letter may come twice, never
      // not at all), not a task hung on a future or failed at once
      Future<Void> sent = reporter.report(r, cause);
      if (settings.statementTimeoutMs() > 0) {
        sent.get(settings.statementTimeoutMs(), TimeUnit.MILLISECONDS);
      } else {
        sent.get(); // statement.timeout.ms 0: no limit, for statements and letters alike
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ConnectException("interrupted while dead-lettering " + r.topic(), e);
    } catch (ExecutionException | TimeoutException e) {
      throw new SQLException(
          "the dead letter queue did not take "
              + r.topic()
              + "/"
              + r.kafkaPartition()
              + "/"
              + r.kafkaOffset()
              + " within "
              + settings.statementTimeoutMs()
              + " ms: "
              + e,
          (String) null,
          e);
    }
    status.deadLettered(r.topic(), why);
  }

  @Override
  public void stop() {
    close();
    if (status != null) {
      status.close();
    }
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
