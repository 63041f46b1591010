package io.brokerstream.streams.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class KeyLocationsTest {
  private static final HostInfo A = new HostInfo("127.0.0.1", 1);
  private static final HostInfo B = new HostInfo("127.0.0.1", 2);

  /** Kafka Streams as a table: partitions, owners by partition, and the questions it was asked. */
  private static final class Table implements KeyLocations.Source {
    int partitions = 4;
    int reportedPartitions = 4;
    HostInfo[] owners = {A, B, A, B};
    boolean available = true;
    final List<String> asked = new ArrayList<>();

    @Override
    public KeyQueryMetadata query(String store, String key) {
      asked.add(key);
      if (!available) {
        return KeyQueryMetadata.NOT_AVAILABLE;
      }
      int p = KeyLocations.partitionOf(key, partitions);
      return new KeyQueryMetadata(owners[p % owners.length], Set.of(), p);
    }

    @Override
    public int partitions(String store) {
      return reportedPartitions;
    }
  }

  /** Keys that fall in the given partition of `partitions`. */
  private static List<String> keysIn(int partition, int partitions, int count) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; keys.size() < count; i++) {
      String key = "M" + i + "|o-" + i;
      if (KeyLocations.partitionOf(key, partitions) == partition) {
        keys.add(key);
      }
    }
    return keys;
  }

  @ParameterizedTest
  @CsvSource({"M1|o-1, 4", "M42|2026-11-27-000001, 4", "member-x, 1", "M7, 12", "é|ü, 7"})
  void a_keys_partition_is_the_one_the_producer_gives_it(String key, int partitions) {
    byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
    assertEquals(
        BuiltInPartitioner.partitionForKey(bytes, partitions),
        KeyLocations.partitionOf(key, partitions));
  }

  @Test
  void a_partition_asked_once_is_answered_from_memory_for_every_key_in_it() {
    Table streams = new Table();
    KeyLocations locations = new KeyLocations(streams);
    List<String> keys = keysIn(2, 4, 5);
    KeyQueryMetadata first = locations.locate("store", keys.get(0));
    for (String key : keys) {
      assertSame(first, locations.locate("store", key));
    }
    assertEquals(List.of(keys.get(0)), streams.asked);
    assertEquals(1, locations.misses());
    assertEquals(A, first.activeHost());
    assertEquals(2, first.partition());
  }

  @Test
  void each_partition_has_its_own_owner() {
    Table streams = new Table();
    KeyLocations locations = new KeyLocations(streams);
    for (int p = 0; p < 4; p++) {
      for (String key : keysIn(p, 4, 3)) {
        KeyQueryMetadata meta = locations.locate("store", key);
        assertEquals(p, meta.partition());
        assertEquals(streams.owners[p], meta.activeHost());
      }
    }
    assertEquals(4, locations.misses());
  }

  @Test
  void after_a_state_change_the_owners_are_asked_again_and_a_moved_task_is_found() {
    Table streams = new Table();
    KeyLocations locations = new KeyLocations(streams);
    String key = keysIn(1, 4, 1).get(0);
    assertEquals(B, locations.locate("store", key).activeHost());
    streams.owners[1] = A; // the task moved in a rebalance
    assertEquals(B, locations.locate("store", key).activeHost()); // no state change seen yet
    locations.forget();
    assertEquals(A, locations.locate("store", key).activeHost());
    assertEquals(2, locations.misses());
  }

  @Test
  void an_answer_in_another_partition_than_computed_is_never_kept() {
    Table streams = new Table();
    streams.partitions = 8; // the topic grew, the count read says 4
    KeyLocations locations = new KeyLocations(streams);
    List<String> keys = new ArrayList<>();
    for (int i = 0; keys.size() < 6; i++) {
      String key = "K" + i;
      if (KeyLocations.partitionOf(key, 8) != KeyLocations.partitionOf(key, 4)) {
        keys.add(key);
      }
    }
    for (String key : keys) {
      for (int again = 0; again < 2; again++) {
        assertEquals(KeyLocations.partitionOf(key, 8), locations.locate("store", key).partition());
      }
    }
    assertEquals(12, locations.misses());
  }

  @Test
  void nothing_is_kept_while_the_app_is_not_running_or_the_answer_is_not_available() {
    Table streams = new Table();
    streams.reportedPartitions = 0;
    KeyLocations locations = new KeyLocations(streams);
    String key = keysIn(0, 4, 1).get(0);
    locations.locate("store", key);
    locations.locate("store", key);
    assertEquals(2, locations.misses());

    Table rebalancing = new Table();
    rebalancing.available = false;
    KeyLocations later = new KeyLocations(rebalancing);
    assertSame(KeyQueryMetadata.NOT_AVAILABLE, later.locate("store", key));
    rebalancing.available = true;
    assertEquals(streams.owners[0], later.locate("store", key).activeHost());
    assertEquals(2, later.misses());
  }

  @Test
  void a_stores_source_topics_are_those_of_its_sub_topology() {
    StreamsBuilder builder = new StreamsBuilder();
    builder.table(
        "results",
        Materialized
            .<String, String,
                org.apache.kafka.streams.state.KeyValueStore<
                    org.apache.kafka.common.utils.Bytes, byte[]>>
                as("results-store")
            .withKeySerde(Serdes.String())
            .withValueSerde(Serdes.String()));
    builder.stream(
            "orders",
            org.apache.kafka.streams.kstream.Consumed.with(Serdes.String(), Serdes.String()))
        .merge(builder.stream("commands"))
        .groupByKey()
        .count(Materialized.as("counts"));
    Map<String, Set<String>> topics = KeyLocations.sourceTopicsOfStores(builder.build().describe());
    assertEquals(Set.of("results"), topics.get("results-store"));
    assertEquals(Set.of("orders", "commands"), topics.get("counts"));
  }
}
