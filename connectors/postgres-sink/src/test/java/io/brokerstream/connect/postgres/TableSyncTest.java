package io.brokerstream.connect.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.sink.SinkRecord;
import org.junit.jupiter.api.Test;

/** What the sync sends Postgres for a batch: the staged rows and the statement that moves them. */
class TableSyncTest {
  static final Schema POSITION =
      SchemaBuilder.struct()
          .name("Position")
          .field("account_id", Schema.STRING_SCHEMA)
          .field("instrument_id", Schema.STRING_SCHEMA)
          .field("quantity", Schema.INT64_SCHEMA)
          .field("avg_cost", Decimal.schema(6))
          .field("not_a_column", Schema.OPTIONAL_STRING_SCHEMA)
          .build();

  static SinkRecord position(String account, long qty, long offset) {
    Struct v =
        new Struct(POSITION)
            .put("account_id", account)
            .put("instrument_id", "EQ1")
            .put("quantity", qty)
            .put("avg_cost", new BigDecimal("10.500000"));
    return new SinkRecord(
        "positions", 3, Schema.STRING_SCHEMA, account + "|EQ1", POSITION, v, offset);
  }

  static LinkedHashSet<String> columns(String... names) {
    return new LinkedHashSet<>(List.of(names));
  }

  /** A positions upsert (keyed, updated) and an events one (rows never change), stamped or not. */
  private static String positions(boolean stamped) {
    return TableSync.upsert(
        "positions",
        "s",
        List.of("account_id", "instrument_id", "quantity"),
        List.of("account_id", "instrument_id"),
        true,
        stamped);
  }

  private static String events(boolean stamped) {
    return TableSync.upsert(
        "order_events",
        "s",
        List.of("event", "__connect_offset"),
        List.of("__connect_offset"),
        false,
        stamped);
  }

  @Test
  void aKeyedTableUpsertsTheLastRecordOfEachKeyAndSetsEveryOtherColumn() {
    assertThat(positions(false))
        .isEqualTo(
            "INSERT INTO \"positions\" (\"account_id\", \"instrument_id\", \"quantity\") SELECT \"account_id\", "
                + "\"instrument_id\", \"quantity\" FROM \"s\" ON CONFLICT "
                + "(\"account_id\", \"instrument_id\") DO UPDATE SET \"quantity\" = EXCLUDED.\"quantity\"");
    assertThat(events(false)).endsWith("ON CONFLICT (\"__connect_offset\") DO NOTHING");
  }

  @Test
  void aStampedTableGetsTheTimeEachRowIsWrittenOnInsertAndOnUpdate() {
    assertThat(positions(true))
        .isEqualTo(
            "INSERT INTO \"positions\" (\"account_id\", \"instrument_id\", \"quantity\", \"synced_at\") "
                + "SELECT \"account_id\", \"instrument_id\", \"quantity\", clock_timestamp() FROM \"s\" "
                + "ON CONFLICT (\"account_id\", \"instrument_id\") DO UPDATE SET \"quantity\" = "
                + "EXCLUDED.\"quantity\", \"synced_at\" = EXCLUDED.\"synced_at\"");
    assertThat(events(true))
        .isEqualTo(
            "INSERT INTO \"order_events\" (\"event\", \"__connect_offset\", \"synced_at\") SELECT "
                + "\"event\", \"__connect_offset\", clock_timestamp() FROM \"s\" ON CONFLICT "
                + "(\"__connect_offset\") DO NOTHING");
  }

  @Test
  void aRecordFieldNamedSyncedAtIsNotTakenForTheTablesStamp() {
    Schema withStamp =
        SchemaBuilder.struct()
            .name("Stamped")
            .field("account_id", Schema.STRING_SCHEMA)
            .field("instrument_id", Schema.STRING_SCHEMA)
            .field("synced_at", Schema.STRING_SCHEMA)
            .build();
    TableSync sync =
        new TableSync(
            "positions",
            List.of("account_id", "instrument_id"),
            true,
            null,
            columns("account_id", "instrument_id", "synced_at"));
    assertThat(sync.columnsFor(withStamp)).containsExactly("account_id", "instrument_id");
  }

  @Test
  void theRecordsFieldsTheTableHasAreItsColumnsInSchemaOrder() {
    TableSync sync =
        new TableSync(
            "positions",
            List.of("account_id", "instrument_id"),
            true,
            null,
            columns("account_id", "instrument_id", "quantity", "avg_cost", "synced_at"));
    List<String> cols = sync.columnsFor(POSITION);
    assertThat(cols).containsExactly("account_id", "instrument_id", "quantity", "avg_cost");
    assertThat(TableSync.copyText(List.of(position("A1", 5, 10), position("A2", 7, 11)), cols))
        .isEqualTo("A1\tEQ1\t5\t10.500000\nA2\tEQ1\t7\t10.500000\n");
  }

  @Test
  void aBatchKeepsTheLastRecordOfEachKeyInTheOrderOfThoseLastRecords() {
    List<SinkRecord> batch =
        List.of(
            position("A1", 5, 10),
            position("A2", 1, 11),
            position("A1", 7, 12),
            position("A3", 2, 13));
    assertThat(TableSync.lastOfEachKey(batch, List.of("account_id", "instrument_id")))
        .extracting(SinkRecord::kafkaOffset)
        .containsExactly(11L, 12L, 13L);
    // rows named by their place in Kafka are all distinct: kept as they are
    assertThat(TableSync.lastOfEachKey(batch, TableSync.KAFKA_KEY)).isSameAs(batch);
  }

  @Test
  void aKafkaKeyedTableNamesEachRowByItsPlaceInKafka() {
    TableSync sync =
        new TableSync(
            "order_events",
            TableSync.KAFKA_KEY,
            false,
            null,
            columns(
                "account_id",
                "quantity",
                "__connect_topic",
                "__connect_partition",
                "__connect_offset"));
    List<String> cols = sync.columnsFor(POSITION);
    assertThat(cols)
        .containsExactly(
            "account_id", "quantity", "__connect_topic", "__connect_partition", "__connect_offset");
    assertThat(TableSync.copyText(List.of(position("A9", 1, 77)), cols))
        .isEqualTo("A9\t1\tpositions\t3\t77\n");
  }

  @Test
  void aRecordWithoutTheKeyAndATableWithoutItAreRefused() {
    Schema partial = SchemaBuilder.struct().field("quantity", Schema.INT64_SCHEMA).build();
    TableSync sync =
        new TableSync(
            "positions", List.of("account_id"), true, null, columns("account_id", "quantity"));
    assertThatThrownBy(() -> sync.columnsFor(partial))
        .isInstanceOf(DataException.class)
        .hasMessageContaining("account_id");
    assertThatThrownBy(
            () -> new TableSync("positions", List.of("missing"), true, null, columns("account_id")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no key column missing");
  }

  @Test
  void aVersionedTableIsOnlyEverUpdatedByAHigherVersion() {
    String sql =
        TableSync.upsert(
            "positions",
            "s",
            List.of("account_id", "instrument_id", "quantity", "version"),
            List.of("account_id", "instrument_id"),
            true,
            false,
            "version");
    assertThat(sql)
        .endsWith(
            "DO UPDATE SET \"quantity\" = EXCLUDED.\"quantity\", \"version\" = EXCLUDED.\"version\""
                + " WHERE \"positions\".\"version\" < EXCLUDED.\"version\"");
    assertThatThrownBy(
            () ->
                new TableSync(
                    "positions", List.of("account_id"), true, "version", columns("account_id")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no version column version");
  }

  @Test
  void settingsNameATableKeyAndConflictRuleForEveryTopic() {
    SinkSettings s =
        SinkSettings.of(
            Map.of(
                "connection.url",
                "jdbc:postgresql://h/db",
                "topics",
                "order-results,order-events",
                "key.order_results",
                "member_id, order_id,ingest_ts",
                "key.order_events",
                "kafka",
                "conflict.order_events",
                "nothing"));
    assertThat(s.tableOfTopic())
        .containsExactly(
            Map.entry("order-results", "order_results"), Map.entry("order-events", "order_events"));
    assertThat(s.keyOfTable().get("order_results"))
        .containsExactly("member_id", "order_id", "ingest_ts");
    assertThat(s.keyOfTable().get("order_events")).isEqualTo(TableSync.KAFKA_KEY);
    assertThat(s.updateOfTable())
        .containsExactly(Map.entry("order_results", true), Map.entry("order_events", false));
    assertThatThrownBy(() -> SinkSettings.of(Map.of("connection.url", "x", "topics", "positions")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("key.positions");
    assertThatThrownBy(
            () ->
                SinkSettings.of(
                    Map.of(
                        "connection.url",
                        "x",
                        "topics",
                        "positions",
                        "key.positions",
                        "a",
                        "conflict.positions",
                        "maybe")))
        .isInstanceOf(ConfigException.class);
  }
}
