package io.brokerstream.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.stream.IntStream;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MemberPartitionTest {
  /** What the producer does with a record keyed by the member id: where its orders go. */
  private static int producerPartition(String member, int partitions) {
    return BuiltInPartitioner.partitionForKey(member.getBytes(StandardCharsets.UTF_8), partitions);
  }

  @ParameterizedTest
  @CsvSource({
    "M1, 4",
    "M2, 4",
    "member-000017, 4",
    "member-000018, 12",
    "a, 1",
    "Z.9:x_y-1, 7",
  })
  void aMembersResultsGoWhereItsOrdersGo(String member, int partitions) {
    int orders = producerPartition(member, partitions);
    assertThat(MemberPartition.of(member, partitions)).isEqualTo(orders);
    assertThat(MemberPartition.ofKey(member + "|order-1", partitions)).isEqualTo(orders);
    assertThat(MemberPartition.ofKey(member + "|" + "x".repeat(64), partitions)).isEqualTo(orders);
    assertThat(MemberPartition.ofKey(member, partitions)).isEqualTo(orders);
  }

  @ParameterizedTest
  @CsvSource({"M1|o-1, 16", "M2|o-1, 16", "member-000003|o-9, 16"})
  void theOrderIdDoesNotMoveAResult(String key, int partitions) {
    String member = key.substring(0, key.indexOf('|'));
    for (int i = 0; i < 50; i++) {
      assertThat(MemberPartition.ofKey(member + "|o-" + i, partitions))
          .isEqualTo(MemberPartition.ofKey(key, partitions));
    }
    // while the whole key, hashed, spreads a member's results over the partitions
    long spread =
        IntStream.range(0, 50)
            .map(i -> producerPartition(member + "|o-" + i, partitions))
            .distinct()
            .count();
    assertThat(spread).isGreaterThan(1);
  }
}
