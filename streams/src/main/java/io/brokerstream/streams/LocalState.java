package io.brokerstream.streams;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local state (RocksDB folders, checkpoints) belongs to one topology: task ids number the
 * sub-topologies, so a new step in the topology moves stores between task folders, and Kafka
 * Streams then fails at start on folders of the old layout. When the topology differs from the one
 * that wrote the local state, the state is deleted before the start and rebuilt from the changelogs
 * and global topics (which are the truth; the local copy only saves time). An unchanged topology
 * keeps its state.
 */
final class LocalState {
  private static final Logger log = LoggerFactory.getLogger(LocalState.class);
  static final String MARKER = "topology.sha256";
  static final String CLOSED_CLEANLY = "closed-cleanly";

  private LocalState() {}

  static void rebuildIfTopologyChanged(KafkaStreams streams, Topology topology, Path stateDir)
      throws IOException {
    String now = fingerprint(topology);
    Path marker = stateDir.resolve(MARKER);
    String before =
        Files.exists(marker) ? Files.readString(marker, StandardCharsets.UTF_8).trim() : null;
    if (before != null && !before.equals(now)) {
      log.warn(
          "the topology changed since the local state was written: deleting it, to be rebuilt from the "
              + "changelogs ({} -> {})",
          abbreviate(before),
          abbreviate(now));
      streams.cleanUp();
    }
    Files.createDirectories(stateDir);
    Files.writeString(marker, now + "\n", StandardCharsets.UTF_8);
  }

  /**
   * Global stores are trusted only after a clean close. Under exactly-once, Kafka Streams 4.3
   * refuses to open a global store that was not closed (its RocksDB status says open) and, unlike a
   * task's store, does not wipe it: the global thread dies and the app cannot start again
   * (KAFKA-21034). So the close writes a marker, the start removes it, and a start that finds none
   * drops the global state, which is rebuilt from its topics (reference data and latest prices:
   * seconds).
   */
  static void dropGlobalStateUnlessClosedCleanly(Path stateDir, String applicationId)
      throws IOException {
    Path marker = stateDir.resolve(CLOSED_CLEANLY);
    Path global = stateDir.resolve(applicationId).resolve("global");
    if (!Files.exists(marker) && Files.exists(global)) {
      log.warn(
          "the last run did not close cleanly: deleting the global stores, to be rebuilt from their "
              + "topics ({})",
          global);
      deleteTree(global);
    }
    Files.deleteIfExists(marker);
  }

  /** After Kafka Streams closed within its timeout: the next start may keep the global state. */
  static void markClosedCleanly(Path stateDir) throws IOException {
    Files.createDirectories(stateDir);
    Files.writeString(stateDir.resolve(CLOSED_CLEANLY), "", StandardCharsets.UTF_8);
  }

  private static void deleteTree(Path root) throws IOException {
    try (var paths = Files.walk(root)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private static String abbreviate(String hash) {
    return hash.length() <= 12 ? hash : hash.substring(0, 12);
  }

  static String fingerprint(Topology topology) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256")
                  .digest(topology.describe().toString().getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
