package io.brokerstream.pnl;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/**
 * The book's own serializer: what a checkpoint writes is what a restore reads, and copies are deep.
 */
class PositionBookSerializerTest {
  static final PositionBookSerializer S = PositionBookSerializer.INSTANCE;

  static PositionBook randomBook(Random rnd, int positions, int options) {
    PositionBook b = new PositionBook();
    for (int i = 0; i < options; i++) {
      PnlInput o =
          PnlInput.optionTerms(
              "EQ7-" + i + (rnd.nextBoolean() ? "C" : "P"),
              "EQ7",
              rnd.nextBoolean(),
              rnd.nextBoolean(),
              rnd.nextLong(),
              rnd.nextInt(30_000),
              100);
      b.options.put(o.instrumentId, o);
    }
    for (int i = 0; i < positions; i++) {
      String instrument =
          options > 0 && rnd.nextBoolean() ? "EQ7-" + rnd.nextInt(options) + "C" : "EQ7";
      // non-ASCII ids must survive too: ids are whatever the reference data says
      String account = "A" + i + (i % 17 == 0 ? "é€" : "");
      PnlInput p =
          PnlInput.positionAtCost(
              account,
              i % 5 == 0 ? null : "M" + (i % 7),
              instrument,
              "EQ7",
              instrument.equals("EQ7") ? 1 : 100,
              rnd.nextLong(),
              rnd.nextLong(),
              rnd.nextLong());
      p.reportedMarketValueMicros = rnd.nextLong();
      p.reportedCostBasisMicros = rnd.nextLong();
      p.reportedPositions = rnd.nextInt(2);
      b.put(p.positionKey(), p);
      if (rnd.nextInt(3) == 0) {
        b.changed.add(p.positionKey());
      }
    }
    return b;
  }

  static byte[] bytes(PositionBook b) throws Exception {
    DataOutputSerializer out = new DataOutputSerializer(64);
    S.serialize(b, out);
    return out.getCopyOfBuffer();
  }

  @Test
  void aBookReadsBackAsWritten() throws Exception {
    Random rnd = new Random(7);
    for (int[] size : new int[][] {{0, 0}, {1, 0}, {0, 3}, {250, 40}, {3000, 400}}) {
      PositionBook b = randomBook(rnd, size[0], size[1]);
      PositionBook back = S.deserialize(new DataInputDeserializer(bytes(b)));
      assertThat(back).isEqualTo(b);
      assertThat(back.size()).isEqualTo(size[0]);
      assertThat(back.options).hasSize(size[1]);
      assertThat(back.changed).isEqualTo(b.changed);
    }
  }

  @Test
  void equalityNoticesWhatTheBookKeeps() throws Exception {
    PositionBook b = randomBook(new Random(3), 20, 4);
    b.changed.add(b.positions.keySet().iterator().next());
    assertThat(b.copy()).isEqualTo(b);
    PositionBook reported = b.copy();
    reported.positions.values().iterator().next().reportedPositions ^= 1;
    assertThat(reported).isNotEqualTo(b);
    PositionBook unchanged = b.copy();
    unchanged.changed.clear();
    assertThat(unchanged).isNotEqualTo(b);
    PositionBook terms = b.copy();
    PnlInput o = terms.options.values().iterator().next().copy();
    o.strikeMicros += 1;
    terms.options.put(o.instrumentId, o);
    assertThat(terms).isNotEqualTo(b);
  }

  @Test
  void heldInstrumentsFollowPositionsThroughPutsRemovalsCopiesAndRestores() throws Exception {
    PositionBook b = new PositionBook();
    PnlInput a1 = PnlInput.position("A1", "M1", "EQ7-1C", "EQ7", 100, 1, 5, 1);
    PnlInput a2 = PnlInput.position("A2", "M1", "EQ7-1C", "EQ7", 100, 2, 5, 1);
    PnlInput a3 = PnlInput.position("A3", "M1", "EQ7", "EQ7", 1, 10, 7, 1);
    b.put(a1.positionKey(), a1);
    b.put(a2.positionKey(), a2);
    b.put(a3.positionKey(), a3);
    assertThat(b.heldInstruments()).containsExactlyInAnyOrder("EQ7-1C", "EQ7");
    b.put(a1.positionKey(), PnlInput.position("A1", "M1", "EQ7-1C", "EQ7", 100, 3, 5, 2));
    b.remove(a2.positionKey());
    assertThat(b.heldInstruments()).containsExactlyInAnyOrder("EQ7-1C", "EQ7"); // A1 still holds it
    b.remove(a1.positionKey());
    b.remove("A9|EQ7"); // not there: nothing changes
    assertThat(b.heldInstruments()).containsExactly("EQ7");
    assertThat(S.copy(b).heldInstruments()).containsExactly("EQ7");
    assertThat(S.deserialize(new DataInputDeserializer(bytes(b))).heldInstruments())
        .containsExactly("EQ7");
    PositionBook big = randomBook(new Random(5), 200, 8);
    Set<String> walked = new HashSet<>();
    big.positions.values().forEach(p -> walked.add(p.instrumentId));
    assertThat(S.deserialize(new DataInputDeserializer(bytes(big))).heldInstruments())
        .isEqualTo(walked);
  }

  @Test
  void aCopyIsDeepForPositionsSoTheCheckpointedBookNeverMoves() throws Exception {
    PositionBook b = randomBook(new Random(11), 100, 10);
    byte[] before = bytes(b);
    PositionBook copy = S.copy(b);
    for (PnlInput p : copy.positions.values()) {
      p.reportedMarketValueMicros += 1;
      p.quantity = 0;
    }
    copy.remove(copy.positions.keySet().iterator().next());
    copy.options.clear();
    copy.changed.add("new|key");
    assertThat(bytes(b)).isEqualTo(before);
    assertThat(S.deserialize(new DataInputDeserializer(before))).isEqualTo(b);
  }

  @Test
  void copyingSerializedFormPassesTheBlockThrough() throws Exception {
    PositionBook b = randomBook(new Random(5), 500, 50);
    byte[] written = bytes(b);
    DataOutputSerializer out = new DataOutputSerializer(16);
    out.writeInt(42); // a neighbour in the same stream must stay intact
    S.copy(new DataInputDeserializer(written), out);
    out.writeInt(43);
    DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
    assertThat(in.readInt()).isEqualTo(42);
    assertThat(S.deserialize(in)).isEqualTo(b);
    assertThat(in.readInt()).isEqualTo(43);
  }

  @Test
  void theSerializerSnapshotRestoresACompatibleSerializer() throws Exception {
    TypeSerializerSnapshot<PositionBook> snapshot = S.snapshotConfiguration();
    DataOutputSerializer out = new DataOutputSerializer(16);
    snapshot.writeSnapshot(out);
    TypeSerializerSnapshot<PositionBook> restored = new PositionBookSerializer.Snapshot();
    restored.readSnapshot(
        snapshot.getCurrentVersion(),
        new DataInputDeserializer(out.getCopyOfBuffer()),
        getClass().getClassLoader());
    assertThat(restored.restoreSerializer()).isSameAs(S);
    TypeSerializerSchemaCompatibility<PositionBook> compat =
        S.snapshotConfiguration().resolveSchemaCompatibility(restored);
    assertThat(compat.isCompatibleAsIs()).isTrue();
  }

  @Test
  void anIdTooLongForTheBookFailsTheCheckpointLoudly() {
    PositionBook b = new PositionBook();
    PnlInput p = PnlInput.position("A".repeat(40_000), "M1", "EQ7", "EQ7", 1, 1, 1, 1);
    b.put(p.positionKey(), p);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> bytes(b))
        .isInstanceOf(java.io.IOException.class)
        .hasMessageContaining("40000 bytes");
  }
}
