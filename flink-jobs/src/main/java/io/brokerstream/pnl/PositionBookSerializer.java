package io.brokerstream.pnl;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A {@link PositionBook} as one length-prefixed block: encoded into a heap buffer, then handed to
 * the checkpoint stream in a single write. The generic path (map serializer over POJO and string
 * serializers) wrote every string character by character into the checkpoint stream, which made the
 * asynchronous checkpoint thread the job's biggest CPU user.
 *
 * <p>Block layout: positions (count, then per position its strings and numbers), option terms
 * (count, then per option), changed position keys (count, then each). Position keys are not
 * written: they are {@code account|instrument} and rebuilt on read. A change of layout needs a new
 * snapshot version.
 */
public final class PositionBookSerializer extends TypeSerializerSingleton<PositionBook> {
  private static final long serialVersionUID = 1L;
  public static final PositionBookSerializer INSTANCE = new PositionBookSerializer();
  // per position: 3 to 4 short ids and 8 numbers
  private static final int BYTES_PER_POSITION = 96;
  private static final int BYTES_PER_OPTION = 64;

  @Override
  public boolean isImmutableType() {
    return false;
  }

  @Override
  public PositionBook createInstance() {
    return new PositionBook();
  }

  /**
   * The heap backend copies a book on first access after a checkpoint started; the copy must be
   * deep.
   */
  @Override
  public PositionBook copy(PositionBook from) {
    return from.copy();
  }

  @Override
  public PositionBook copy(PositionBook from, PositionBook reuse) {
    return from.copy();
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(PositionBook book, DataOutputView target) throws IOException {
    // a fresh buffer per call: the checkpoint thread and the task thread may both serialize
    DataOutputSerializer out =
        new DataOutputSerializer(
            16
                + book.positions.size() * BYTES_PER_POSITION
                + book.options.size() * BYTES_PER_OPTION
                + book.changed.size() * 24);
    out.writeInt(book.positions.size());
    for (PnlInput p : book.positions.values()) {
      writeString(out, p.underlyingId);
      writeString(out, p.instrumentId);
      writeString(out, p.accountId);
      writeString(out, p.memberId);
      out.writeInt(p.multiplier);
      out.writeLong(p.quantity);
      out.writeLong(p.costMicros);
      out.writeLong(p.version);
      out.writeLong(p.reportedMarketValueMicros);
      out.writeLong(p.reportedCostBasisMicros);
      out.writeInt(p.reportedPositions);
    }
    out.writeInt(book.options.size());
    for (PnlInput o : book.options.values()) {
      writeString(out, o.underlyingId);
      writeString(out, o.instrumentId);
      out.writeBoolean(o.call);
      out.writeBoolean(o.american);
      out.writeLong(o.strikeMicros);
      out.writeInt(o.maturityEpochDay);
      out.writeInt(o.multiplier);
    }
    out.writeInt(book.changed.size());
    for (String key : book.changed) {
      writeString(out, key);
    }
    target.writeInt(out.length());
    target.write(out.getSharedBuffer(), 0, out.length());
  }

  @Override
  public PositionBook deserialize(DataInputView source) throws IOException {
    byte[] block = new byte[source.readInt()];
    source.readFully(block);
    DataInputDeserializer in = new DataInputDeserializer(block);
    int positionCount = in.readInt();
    Map<String, PnlInput> positions = new HashMap<>(PositionBook.capacityFor(positionCount));
    for (int i = 0; i < positionCount; i++) {
      PnlInput p = new PnlInput();
      p.kind = PnlInput.Kind.POSITION;
      p.underlyingId = readString(in);
      p.instrumentId = readString(in);
      p.accountId = readString(in);
      p.memberId = readString(in);
      p.canonicalIds();
      p.multiplier = in.readInt();
      p.quantity = in.readLong();
      p.costMicros = in.readLong();
      p.version = in.readLong();
      p.reportedMarketValueMicros = in.readLong();
      p.reportedCostBasisMicros = in.readLong();
      p.reportedPositions = in.readInt();
      positions.put(p.positionKey(), p);
    }
    int optionCount = in.readInt();
    Map<String, PnlInput> options = new HashMap<>(PositionBook.capacityFor(optionCount));
    for (int i = 0; i < optionCount; i++) {
      PnlInput o = new PnlInput();
      o.kind = PnlInput.Kind.OPTION_TERMS;
      o.underlyingId = readString(in);
      o.instrumentId = readString(in);
      o.call = in.readBoolean();
      o.american = in.readBoolean();
      o.strikeMicros = in.readLong();
      o.maturityEpochDay = in.readInt();
      o.multiplier = in.readInt();
      options.put(o.instrumentId, o);
    }
    int changedCount = in.readInt();
    Set<String> changed = new HashSet<>(PositionBook.capacityFor(changedCount));
    for (int i = 0; i < changedCount; i++) {
      changed.add(readString(in));
    }
    return new PositionBook(positions, options, changed);
  }

  @Override
  public PositionBook deserialize(PositionBook reuse, DataInputView source) throws IOException {
    return deserialize(source);
  }

  @Override
  public void copy(DataInputView source, DataOutputView target) throws IOException {
    byte[] block = new byte[source.readInt()];
    source.readFully(block);
    target.writeInt(block.length);
    target.write(
        block); // not write(source, n): some targets (DataOutputSerializer) do not grow for it
  }

  /**
   * Length (-1: null) and UTF-8 bytes: getBytes copies an ASCII id in bulk, writeUTF went char by
   * char.
   */
  private static void writeString(DataOutputSerializer out, String s) throws IOException {
    if (s == null) {
      out.writeShort(-1);
      return;
    }
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    if (bytes.length > Short.MAX_VALUE) {
      throw new IOException(
          "an id of " + bytes.length + " bytes is longer than a position book keeps");
    }
    out.writeShort(bytes.length);
    out.write(bytes);
  }

  private static String readString(DataInputDeserializer in) throws IOException {
    int length = in.readShort();
    if (length < 0) {
      return null;
    }
    byte[] bytes = new byte[length];
    in.readFully(bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }

  @Override
  public TypeSerializerSnapshot<PositionBook> snapshotConfiguration() {
    return new Snapshot();
  }

  /** Restores the serializer from a checkpoint; public with a no-argument constructor for Flink. */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<PositionBook> {
    public Snapshot() {
      super(() -> INSTANCE);
    }
  }
}
