package io.brokerstream.connect.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * Where each partition's sync stands, kept in Postgres beside the rows (table sink_offsets: one row
 * per connector, topic and partition, the next offset to write). The rows and the offsets they
 * reach commit in one transaction, so Postgres always knows exactly which records it holds: a
 * restart starts from here, a replayed record below it is skipped, and Kafka's consumer offsets
 * only follow (they feed the lag metrics).
 *
 * <p>Each move is conditional on the offset this task last read or wrote. A second task on the same
 * partitions (a zombie after a rebalance) moves none: its transaction is rolled back and it reads
 * where the partition stands before it writes anything.
 */
final class SinkOffsets {
  private final String table;
  private final String connector;

  SinkOffsets(String table, String connector) {
    this.table = TableSync.quote(table);
    this.connector = connector;
  }

  /** Fails (42P01) when the table is missing: the DDL in sql/postgres makes it. */
  void check(Connection c) throws SQLException {
    try (PreparedStatement s =
        c.prepareStatement(
            "SELECT connector, topic, partition, next_offset FROM " + table + " LIMIT 0")) {
      s.executeQuery().close();
    }
  }

  /** The next offset of each partition that has one here; partitions never written are absent. */
  Map<TopicPartition, Long> read(Connection c, Collection<TopicPartition> partitions)
      throws SQLException {
    Map<TopicPartition, Long> out = new HashMap<>();
    if (partitions.isEmpty()) {
      return out;
    }
    try (PreparedStatement s =
        c.prepareStatement(
            "SELECT topic, partition, next_offset FROM " + table + " WHERE connector = ?")) {
      s.setString(1, connector);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          TopicPartition tp = new TopicPartition(rs.getString(1), rs.getInt(2));
          if (partitions.contains(tp)) {
            out.put(tp, rs.getLong(3));
          }
        }
      }
    }
    return out;
  }

  /**
   * Moves each partition from `expected` (absent: never written) to `next`, in the caller's
   * transaction. False when any partition was not where this task thought: another task wrote it.
   */
  boolean move(Connection c, Map<TopicPartition, Long> next, Map<TopicPartition, Long> expected)
      throws SQLException {
    try (PreparedStatement insert =
            c.prepareStatement(
                "INSERT INTO "
                    + table
                    + " (connector, topic, partition, next_offset) VALUES (?, ?, ?, ?) "
                    + "ON CONFLICT (connector, topic, partition) DO NOTHING");
        PreparedStatement update =
            c.prepareStatement(
                "UPDATE "
                    + table
                    + " SET next_offset = ?, updated_at = clock_timestamp() "
                    + "WHERE connector = ? AND topic = ? AND partition = ? AND next_offset = ?")) {
      for (Map.Entry<TopicPartition, Long> e : next.entrySet()) {
        TopicPartition tp = e.getKey();
        Long was = expected.get(tp);
        int moved;
        if (was == null) {
          insert.setString(1, connector);
          insert.setString(2, tp.topic());
          insert.setInt(3, tp.partition());
          insert.setLong(4, e.getValue());
          moved = insert.executeUpdate();
        } else {
          update.setLong(1, e.getValue());
          update.setString(2, connector);
          update.setString(3, tp.topic());
          update.setInt(4, tp.partition());
          update.setLong(5, was);
          moved = update.executeUpdate();
        }
        if (moved != 1) {
          return false;
        }
      }
    }
    return true;
  }
}
