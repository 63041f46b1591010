package io.brokerstream.kafka;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.utils.Utils;

/**
 * The partition of a member's records. Orders are keyed by member id and placed by Kafka's default
 * partitioner; an order's result is keyed {@code member|order id} but placed in its member's
 * partition, so the task that decides a member's orders also reads back their results (it dedups
 * against them, and the gateway finds them where the member's other stores are).
 */
public final class MemberPartition {
  private MemberPartition() {}

  /** Where Kafka's default partitioner puts a record keyed by {@code member}. */
  public static int of(String member, int partitions) {
    return Utils.toPositive(Utils.murmur2(member.getBytes(StandardCharsets.UTF_8))) % partitions;
  }

  /**
   * The partition of a key that starts with a member id: {@code member|...}, or the member id alone
   * (ids never contain a bar).
   */
  public static int ofKey(String key, int partitions) {
    int bar = key.indexOf('|');
    return of(bar < 0 ? key : key.substring(0, bar), partitions);
  }
}
