package io.brokerstream.baseline;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Where a new group starts, committed as soon as it is assigned: "latest" then means the end at
 * assignment (not wherever the first record lands), and a partition that never gets a record still
 * shows the group caught up, which is how the benches tell that a drain is over.
 */
final class Starts {
  private Starts() {}

  static void record(
      KafkaConsumer<byte[], byte[]> consumer, Collection<TopicPartition> partitions) {
    if (partitions.isEmpty()) {
      return;
    }
    Map<TopicPartition, OffsetAndMetadata> committed =
        consumer.committed(new HashSet<>(partitions));
    Map<TopicPartition, OffsetAndMetadata> starts = new HashMap<>();
    for (TopicPartition tp : partitions) {
      long position = consumer.position(tp);
      if (committed.get(tp) == null) {
        starts.put(tp, new OffsetAndMetadata(position));
      }
    }
    if (!starts.isEmpty()) {
      consumer.commitSync(starts);
    }
  }
}
