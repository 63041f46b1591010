package io.brokerstream.connect.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTaskContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The sink task against a real Postgres with the project's DDL: which errors dead-letter a record
 * and which make the batch wait, that a batch lands whole, that Postgres's offsets decide what is
 * written again, that an older version never overwrites a newer, and that a second task on the same
 * partitions writes nothing twice.
 */
class SinkFaultsTest {
  static TempPostgres pg;

  static final Schema MONEY = Decimal.schema(6);
  static final Schema POSITION =
      SchemaBuilder.struct()
          .name("io.brokerstream.avro.Position")
          .field("account_id", Schema.STRING_SCHEMA)
          .field("member_id", Schema.STRING_SCHEMA)
          .field("instrument_id", Schema.STRING_SCHEMA)
          .field("underlying_id", Schema.STRING_SCHEMA)
          .field("multiplier", Schema.INT32_SCHEMA)
          .field("quantity", Schema.INT64_SCHEMA)
          .field("avg_cost", MONEY)
          .field("realized_pnl", MONEY)
          .field("version", Schema.INT64_SCHEMA)
          .field("updated_ts", Timestamp.SCHEMA)
          .build();
  static final Schema RESULT =
      SchemaBuilder.struct()
          .name("io.brokerstream.avro.OrderResult")
          .field("order_id", Schema.STRING_SCHEMA)
          .field("member_id", Schema.STRING_SCHEMA)
          .field("account_id", Schema.STRING_SCHEMA)
          .field("instrument_id", Schema.STRING_SCHEMA)
          .field("side", Schema.STRING_SCHEMA)
          .field("quantity", Schema.INT64_SCHEMA)
          .field("status", Schema.STRING_SCHEMA)
          .field("realized_pnl", Decimal.builder(6).optional().build())
          .field("client_ts", Timestamp.SCHEMA)
          .field("ingest_ts", Timestamp.SCHEMA)
          .field("processed_ts", Timestamp.SCHEMA)
          .field("short_sale", Schema.BOOLEAN_SCHEMA)
          .field("closed_quantity", Schema.INT64_SCHEMA)
          .build();

  static final String POSITIONS_TOPIC = "brokerstream-orders-positions-changelog";
  static final String RESULTS_TOPIC = "order-results";

  @BeforeAll
  static void startPostgres() throws Exception {
    assumeTrue(TempPostgres.available(), "no Postgres binaries at " + TempPostgres.BIN);
    pg = new TempPostgres();
    pg.applyDdl();
  }

  @AfterAll
  static void stopPostgres() throws Exception {
    if (pg != null) {
      pg.close();
    }
  }

  @BeforeEach
  void empty() throws SQLException {
    pg.sql("ALTER DATABASE postgres RESET default_transaction_read_only");
    pg.sql("TRUNCATE positions, order_results, sink_offsets");
  }

  static final class Worker implements SinkTaskContext {
    final Map<TopicPartition, Long> seeks = new HashMap<>();
    final Set<TopicPartition> paused = new HashSet<>();
    final List<SinkRecord> letters = new ArrayList<>();
    final List<Throwable> causes = new ArrayList<>();
    long timeout;

    @Override
    public Map<String, String> configs() {
      return Map.of();
    }

    @Override
    public void offset(Map<TopicPartition, Long> offsets) {
      seeks.putAll(offsets);
    }

    @Override
    public void offset(TopicPartition tp, long offset) {
      seeks.put(tp, offset);
    }

    @Override
    public void timeout(long timeoutMs) {
      timeout = timeoutMs;
    }

    @Override
    public Set<TopicPartition> assignment() {
      return Set.of();
    }

    @Override
    public void pause(TopicPartition... partitions) {
      paused.addAll(List.of(partitions));
    }

    @Override
    public void resume(TopicPartition... partitions) {
      paused.removeAll(List.of(partitions));
    }

    @Override
    public void requestCommit() {}

    @Override
    public org.apache.kafka.common.metrics.PluginMetrics pluginMetrics() {
      return null;
    }

    boolean kafkaAnswers = true; // false: the dead letter queue's producer never acknowledges

    @Override
    public ErrantRecordReporter errantRecordReporter() {
      return new ErrantRecordReporter() {
        @Override
        public Future<Void> report(SinkRecord record, Throwable error) {
          if (!kafkaAnswers) {
            return new CompletableFuture<>();
          }
          letters.add(record);
          causes.add(error);
          return CompletableFuture.completedFuture(null);
        }
      };
    }
  }

  static Map<String, String> settings(String connector, String... more) {
    Map<String, String> s = new HashMap<>();
    s.put("name", connector);
    s.put("connection.url", pg.url());
    s.put("connection.username", "postgres");
    s.put("topics", RESULTS_TOPIC + "," + POSITIONS_TOPIC);
    s.put("table." + RESULTS_TOPIC, "order_results");
    s.put("key.order_results", "member_id,order_id,ingest_ts");
    s.put("table." + POSITIONS_TOPIC, "positions");
    s.put("key.positions", "account_id,instrument_id");
    s.put("version.positions", "version");
    s.put("retry.backoff.ms", "10");
    for (int i = 0; i < more.length; i += 2) {
      s.put(more[i], more[i + 1]);
    }
    return s;
  }

  static PostgresSinkTask task(Worker w, Map<String, String> settings) {
    PostgresSinkTask t = new PostgresSinkTask();
    t.initialize(w);
    t.start(settings);
    t.open(List.of(new TopicPartition(POSITIONS_TOPIC, 0), new TopicPartition(RESULTS_TOPIC, 0)));
    return t;
  }

  static SinkRecord position(String account, long quantity, long version, long offset) {
    Struct v =
        new Struct(POSITION)
            .put("account_id", account)
            .put("member_id", "M1")
            .put("instrument_id", "EQ1")
            .put("underlying_id", "EQ1")
            .put("multiplier", 1)
            .put("quantity", quantity)
            .put("avg_cost", new BigDecimal("10.000000"))
            .put("realized_pnl", new BigDecimal("0.000000"))
            .put("version", version)
            .put("updated_ts", new Date(1_700_000_000_000L + version));
    return new SinkRecord(POSITIONS_TOPIC, 0, Schema.STRING_SCHEMA, account, POSITION, v, offset);
  }

  static SinkRecord result(String order, String realized, long offset) {
    Struct v =
        new Struct(RESULT)
            .put("order_id", order)
            .put("member_id", "M1")
            .put("account_id", "A1")
            .put("instrument_id", "EQ1")
            .put("side", "BUY")
            .put("quantity", 1L)
            .put("status", "ACCEPTED")
            .put("realized_pnl", new BigDecimal(realized))
            .put("client_ts", new Date(1_700_000_000_000L))
            .put("ingest_ts", new Date(1_700_000_000_000L))
            .put("processed_ts", new Date(1_700_000_000_000L))
            .put("short_sale", false)
            .put("closed_quantity", 0L);
    return new SinkRecord(RESULTS_TOPIC, 0, Schema.STRING_SCHEMA, "M1|" + order, RESULT, v, offset);
  }

  static long count(String sql) throws SQLException {
    try (Connection c = pg.connect();
        ResultSet rs = c.createStatement().executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  static long nextOffset(String connector, String topic) throws SQLException {
    return count(
        "SELECT coalesce(max(next_offset), -1) FROM sink_offsets WHERE connector = '"
            + connector
            + "' AND topic = '"
            + topic
            + "'");
  }

  @Test
  void aRecordRefusedForItsContentIsDeadLetteredAndTheRestOfTheBatchLandsInOneTransaction()
      throws Exception {
    Worker w = new Worker();
    PostgresSinkTask t = task(w, settings("s1"));
    // numeric(18, 6) holds 12 digits before the point: 10^13 is a value error (SQLSTATE 22003)
    t.put(
        List.of(
            result("o1", "1.000000", 0),
            result("o2", "10000000000000.000000", 1),
            result("o3", "3.000000", 2),
            position("A1", 5, 1, 0)));
    assertThat(w.letters).extracting(SinkRecord::kafkaOffset).containsExactly(1L);
    assertThat(((SQLException) w.causes.get(0)).getSQLState()).isEqualTo("22003");
    assertThat(count("SELECT count(*) FROM order_results")).isEqualTo(2);
    assertThat(count("SELECT count(*) FROM positions")).isEqualTo(1);
    assertThat(nextOffset("s1", RESULTS_TOPIC)).isEqualTo(3);
    assertThat(nextOffset("s1", POSITIONS_TOPIC)).isEqualTo(1);
    t.stop();
  }

  @Test
  void aDeadLetterQueueThatDoesNotAnswerMakesTheBatchWaitWholeInsteadOfHanging() throws Exception {
    Worker w = new Worker();
    w.kafkaAnswers = false;
    PostgresSinkTask t = task(w, settings("s9", "statement.timeout.ms", "200"));
    List<SinkRecord> batch =
        List.of(result("o1", "1.000000", 0), result("o2", "10000000000000.000000", 1));
    assertThatThrownBy(() -> t.put(batch))
        .isInstanceOf(RetriableException.class)
        .hasMessageContaining("dead letter queue did not take");
    assertThat(count("SELECT count(*) FROM order_results")).isZero(); // rolled back whole
    assertThat(nextOffset("s9", RESULTS_TOPIC)).isEqualTo(-1);
    w.kafkaAnswers = true;
    t.put(batch); // Connect hands the same batch over again
    assertThat(w.letters).extracting(SinkRecord::kafkaOffset).containsExactly(1L);
    assertThat(count("SELECT count(*) FROM order_results")).isEqualTo(1);
    assertThat(nextOffset("s9", RESULTS_TOPIC)).isEqualTo(2);
    t.stop();
  }

  @Test
  void aReadOnlyDatabaseMakesTheBatchWaitWholeAndNothingIsDeadLettered() throws Exception {
    Worker w = new Worker();
    PostgresSinkTask t = task(w, settings("s2"));
    t.put(List.of(result("o1", "1.000000", 0), position("A1", 5, 1, 0)));
    // a failover to a standby: the database turns read-only and the sink's connection ends
    pg.sql("ALTER DATABASE postgres SET default_transaction_read_only = on");
    pg.dropConnections();
    List<SinkRecord> batch = List.of(result("o2", "2.000000", 1), position("A1", 7, 2, 1));
    // the first try finds its connection ended (08006), the next ones a read-only database
    for (int i = 0; i < 3; i++) {
      assertThatThrownBy(() -> t.put(batch)).isInstanceOf(RetriableException.class);
    }
    assertThatThrownBy(() -> t.put(batch)).hasMessageContaining("25006");
    assertThat(w.timeout).isEqualTo(80); // 10, 20, 40, 80: the backoff doubles
    assertThat(w.letters).isEmpty();
    assertThat(nextOffset("s2", RESULTS_TOPIC)).isEqualTo(1);
    pg.sql("ALTER DATABASE postgres RESET default_transaction_read_only");
    t.put(batch); // Connect hands the same batch over again
    assertThat(count("SELECT count(*) FROM order_results")).isEqualTo(2);
    assertThat(count("SELECT quantity FROM positions WHERE account_id = 'A1'")).isEqualTo(7);
    assertThat(nextOffset("s2", RESULTS_TOPIC)).isEqualTo(2);
    t.stop();
  }

  @Test
  void aStatementStuckBehindALockIsCancelledByTheSinksTimeoutAndTriedAgain() throws Exception {
    Worker w = new Worker();
    PostgresSinkTask t = task(w, settings("s6", "statement.timeout.ms", "200"));
    List<SinkRecord> batch = List.of(result("o1", "1.000000", 0), position("A1", 5, 1, 0));
    try (Connection holder = pg.connect()) {
      holder.setAutoCommit(false);
      holder.createStatement().execute("LOCK TABLE positions IN ACCESS EXCLUSIVE MODE");
      assertThatThrownBy(() -> t.put(batch))
          .isInstanceOf(RetriableException.class)
          .hasMessageContaining("57014");
      holder.rollback();
    }
    assertThat(w.letters).isEmpty();
    assertThat(count("SELECT count(*) FROM order_results")).isZero(); // the batch is atomic
    t.put(batch);
    assertThat(count("SELECT count(*) FROM order_results")).isEqualTo(1);
    assertThat(count("SELECT quantity FROM positions WHERE account_id = 'A1'")).isEqualTo(5);
    t.stop();
  }

  @Test
  void pastItsBoundAFaultFailsTheTaskInsteadOfSkipping() throws Exception {
    Worker w = new Worker();
    PostgresSinkTask t = task(w, settings("s3", "retry.timeout.ms", "0"));
    pg.sql("ALTER TABLE positions RENAME TO positions_away"); // DDL in progress: 42P01
    try {
      List<SinkRecord> batch = List.of(position("A1", 5, 1, 0));
      assertThatThrownBy(() -> t.put(batch)).isInstanceOf(RetriableException.class);
      Thread.sleep(5);
      assertThatThrownBy(() -> t.put(batch))
          .isInstanceOf(ConnectException.class)
          .isNotInstanceOf(RetriableException.class)
          .hasMessageContaining("42P01");
      assertThat(w.letters).isEmpty();
    } finally {
      pg.sql("ALTER TABLE positions_away RENAME TO positions");
      t.stop();
    }
  }

  @Test
  void aRestartStartsFromPostgresOffsetsAndAReplayWritesNothingTwice() throws Exception {
    Worker w = new Worker();
    PostgresSinkTask t = task(w, settings("s4"));
    t.put(List.of(position("A1", 5, 1, 0), position("A1", 6, 2, 1), position("A2", 1, 1, 2)));
    t.stop();
    Worker again = new Worker();
    PostgresSinkTask t2 = task(again, settings("s4"));
    assertThat(again.seeks).containsEntry(new TopicPartition(POSITIONS_TOPIC, 0), 3L);
    // Connect hands over records Postgres has, then new ones
    t2.put(List.of(position("A1", 6, 2, 1), position("A2", 1, 1, 2), position("A2", 4, 2, 3)));
    assertThat(count("SELECT version FROM positions WHERE account_id = 'A2'")).isEqualTo(2);
    assertThat(nextOffset("s4", POSITIONS_TOPIC)).isEqualTo(4);
    t2.stop();
  }

  @Test
  void aPostgresThatLostTheLastCommitsIsReplayedFromWhereItStandsWithoutAGap() throws Exception {
    Worker w = new Worker();
    PostgresSinkTask t = task(w, settings("s8"));
    TopicPartition results = new TopicPartition(RESULTS_TOPIC, 0);
    t.put(List.of(result("o1", "1.000000", 0), result("o2", "2.000000", 1)));
    t.put(List.of(result("o3", "3.000000", 2)));
    // a standby promoted before it received the last commit: Postgres holds o1 and o2 only
    pg.sql("DELETE FROM order_results WHERE order_id = 'o3'");
    pg.sql("UPDATE sink_offsets SET next_offset = 2 WHERE connector = 's8'");
    // the batch in hand starts beyond what Postgres holds: it must not be written over the gap
    t.put(List.of(result("o4", "4.000000", 3)));
    assertThat(w.seeks).containsEntry(results, 2L);
    assertThat(count("SELECT count(*) FROM order_results")).isEqualTo(2);
    // Connect hands the records over again from the offset asked for
    t.put(List.of(result("o3", "3.000000", 2), result("o4", "4.000000", 3)));
    assertThat(count("SELECT count(*) FROM order_results")).isEqualTo(4);
    assertThat(nextOffset("s8", RESULTS_TOPIC)).isEqualTo(4);
    // and a Postgres that lost the offsets row altogether is replayed from the start
    pg.sql("TRUNCATE order_results, sink_offsets");
    t.put(List.of(result("o5", "5.000000", 4)));
    assertThat(w.seeks).containsEntry(results, 0L);
    assertThat(count("SELECT count(*) FROM order_results")).isZero();
    t.put(
        List.of(
            result("o1", "1.000000", 0),
            result("o2", "2.000000", 1),
            result("o3", "3.000000", 2),
            result("o4", "4.000000", 3),
            result("o5", "5.000000", 4)));
    assertThat(count("SELECT count(*) FROM order_results")).isEqualTo(5);
    assertThat(nextOffset("s8", RESULTS_TOPIC)).isEqualTo(5);
    t.stop();
  }

  @Test
  void aReplayAwaitedIsAwaitedStillWhenConnectHandsTheBatchOverAgainAfterAFault() throws Exception {
    Worker w = new Worker();
    PostgresSinkTask t = task(w, settings("s10", "statement.timeout.ms", "200"));
    TopicPartition results = new TopicPartition(RESULTS_TOPIC, 0);
    t.put(List.of(result("o1", "1.000000", 0), result("o2", "2.000000", 1)));
    t.put(List.of(result("o3", "3.000000", 2)));
    pg.sql("DELETE FROM order_results WHERE order_id = 'o3'");
    pg.sql("UPDATE sink_offsets SET next_offset = 2 WHERE connector = 's10'");
    // the batch that finds Postgres behind also holds, on another partition, a record Postgres
    // refuses, and Kafka does not acknowledge its dead letter: the put fails after the drop
    SinkRecord bad = result("bad", "10000000000000.000000", 0);
    List<SinkRecord> batch =
        List.of(
            result("o4", "4.000000", 3),
            new SinkRecord(
                RESULTS_TOPIC, 1, bad.keySchema(), bad.key(), bad.valueSchema(), bad.value(), 0));
    w.kafkaAnswers = false;
    assertThatThrownBy(() -> t.put(batch)).isInstanceOf(RetriableException.class);
    assertThat(w.seeks).containsEntry(results, 2L);
    // Connect hands the same batch over again: o4 must still wait for o3
    w.kafkaAnswers = true;
    t.put(batch);
    assertThat(count("SELECT count(*) FROM order_results WHERE order_id = 'o4'")).isZero();
    assertThat(w.letters).extracting(SinkRecord::kafkaPartition).containsExactly(1);
    t.put(List.of(result("o3", "3.000000", 2), result("o4", "4.000000", 3)));
    assertThat(count("SELECT count(*) FROM order_results")).isEqualTo(4);
    assertThat(nextOffset("s10", RESULTS_TOPIC)).isEqualTo(4);
    t.stop();
  }

  @Test
  void aReplayKafkaCanNoLongerGiveFailsTheTaskInsteadOfWritingOverTheGap() throws Exception {
    Worker w = new Worker();
    PostgresSinkTask t = task(w, settings("s11"));
    t.put(List.of(result("o1", "1.000000", 0), result("o2", "2.000000", 1)));
    pg.sql("UPDATE sink_offsets SET next_offset = 1 WHERE connector = 's11'");
    pg.sql("DELETE FROM order_results WHERE order_id = 'o2'");
    t.put(List.of(result("o3", "3.000000", 2))); // behind: sought back to 1, o3 dropped
    // retention removed offset 1 meanwhile: the replay starts at 2
    assertThatThrownBy(() -> t.put(List.of(result("o3", "3.000000", 2))))
        .isInstanceOf(ConnectException.class)
        .isNotInstanceOf(RetriableException.class)
        .hasMessageContaining("exist nowhere");
    assertThat(count("SELECT count(*) FROM order_results")).isEqualTo(1);
    t.stop();
  }

  @Test
  void anOlderVersionNeverOverwritesANewerOne() throws Exception {
    Worker w = new Worker();
    PostgresSinkTask t = task(w, settings("s5"));
    t.put(List.of(position("A1", 9, 5, 0)));
    // another connector name: no offsets of its own, it replays the topic from an older record
    PostgresSinkTask other = task(new Worker(), settings("s5-replay"));
    other.put(List.of(position("A1", 3, 4, 0)));
    assertThat(count("SELECT version FROM positions WHERE account_id = 'A1'")).isEqualTo(5);
    assertThat(count("SELECT quantity FROM positions WHERE account_id = 'A1'")).isEqualTo(9);
    t.stop();
    other.stop();
  }

  @Test
  void aSecondTaskOnTheSamePartitionsWritesNothingTheFirstWrote() throws Exception {
    Worker wa = new Worker();
    Worker wb = new Worker();
    PostgresSinkTask a = task(wa, settings("s6"));
    PostgresSinkTask b = task(wb, settings("s6")); // a zombie: opened before a wrote
    a.put(List.of(result("o1", "1.000000", 0), result("o2", "2.000000", 1)));
    // b was handed the same records plus one: it finds a's offsets and writes only the new one
    b.put(
        List.of(
            result("o1", "1.000000", 0), result("o2", "2.000000", 1), result("o3", "3.000000", 2)));
    assertThat(count("SELECT count(*) FROM order_results")).isEqualTo(3);
    assertThat(nextOffset("s6", RESULTS_TOPIC)).isEqualTo(3);
    // and a, behind b now, writes nothing below b's offsets
    a.put(List.of(result("o3", "3.000000", 2)));
    assertThat(nextOffset("s6", RESULTS_TOPIC)).isEqualTo(3);
    a.stop();
    b.stop();
  }

  @Test
  void unreachableAtOpenThePartitionsStayPausedUntilPostgresAnswers() throws Exception {
    Worker w = new Worker();
    Map<String, String> s = settings("s7");
    PostgresSinkTask t = new PostgresSinkTask();
    t.initialize(w);
    t.start(s);
    t.put(List.of(position("A1", 1, 1, 0)));
    t.stop();
    // the next task opens while Postgres refuses connections
    Map<String, String> unreachable = new HashMap<>(s);
    unreachable.put("connection.url", "jdbc:postgresql://127.0.0.1:1/postgres");
    PostgresSinkTask t2 = new PostgresSinkTask();
    Worker w2 = new Worker();
    t2.initialize(w2);
    t2.start(unreachable);
    TopicPartition tp = new TopicPartition(POSITIONS_TOPIC, 0);
    t2.open(List.of(tp));
    assertThat(w2.paused).contains(tp);
    assertThatThrownBy(() -> t2.put(List.of())).isInstanceOf(RetriableException.class);
    t2.stop();
  }
}
