package io.brokerstream.streams.state;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.RestingOrder;
import io.brokerstream.rules.AccountEntry;
import io.brokerstream.rules.PriceBand;
import io.brokerstream.rules.RiskState;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Compact fixed layouts for the app's own state: every order reads and writes these, so they skip
 * the registry and Avro. A leading version byte leaves room to change a layout. (Positions are the
 * exception: their changelog is the positions topic, so the store keeps the Avro record readers
 * read.)
 */
public final class StateSerdes {
  private static final byte V1 = 1;
  private static final byte OPEN_ORDER_LAYOUT_2 = 2;
  private static final byte OPEN_ORDER_LAYOUT = 3;

  private StateSerdes() {}

  public static Serde<RiskState> risk() {
    return Serdes.serdeFrom(
        (Serializer<RiskState>)
            (topic, r) ->
                r == null
                    ? null
                    : ByteBuffer.allocate(17)
                        .put(V1)
                        .putLong(r.committed())
                        .putLong(r.realized())
                        .array(),
        (Deserializer<RiskState>)
            (topic, bytes) -> {
              if (bytes == null) {
                return null;
              }
              ByteBuffer b = versioned(bytes, 17);
              return new RiskState(b.getLong(), b.getLong());
            });
  }

  public static Serde<Long> micros() {
    return Serdes.Long();
  }

  public static Serde<AccountEntry> accounts() {
    return Serdes.serdeFrom(
        (Serializer<AccountEntry>)
            (topic, a) -> {
              if (a == null) {
                return null;
              }
              byte[] id = a.accountId().getBytes(StandardCharsets.UTF_8);
              byte[] member = a.memberId().getBytes(StandardCharsets.UTF_8);
              byte[] status = a.status().getBytes(StandardCharsets.UTF_8);
              return ByteBuffer.allocate(1 + 12 + id.length + member.length + status.length + 9)
                  .put(V1)
                  .putInt(id.length)
                  .put(id)
                  .putInt(member.length)
                  .put(member)
                  .putInt(status.length)
                  .put(status)
                  .putLong(a.cashMicros())
                  .put((byte) (a.shortAllowed() ? 1 : 0))
                  .array();
            },
        (Deserializer<AccountEntry>)
            (topic, bytes) -> {
              if (bytes == null) {
                return null;
              }
              ByteBuffer b = versioned(bytes, -1);
              return new AccountEntry(string(b), string(b), string(b), b.getLong(), b.get() == 1);
            });
  }

  /**
   * A working order: when it arrived, what it reserves, its equity, and the order itself (Avro).
   */
  public static Serde<OpenOrder> openOrders() {
    return Serdes.serdeFrom(
        (Serializer<OpenOrder>)
            (topic, o) -> {
              if (o == null) {
                return null;
              }
              byte[] underlying = o.underlyingId().getBytes(StandardCharsets.UTF_8);
              byte[] order = avro(o.order()::toByteBuffer, "a working order");
              return ByteBuffer.allocate(1 + 40 + 8 + underlying.length + order.length)
                  .put(OPEN_ORDER_LAYOUT)
                  .putLong(o.receivedMs())
                  .putLong(o.placedMs())
                  .putLong(o.reserved())
                  .putLong(o.expiresMs())
                  .putLong(o.entry())
                  .putInt(underlying.length)
                  .put(underlying)
                  .putInt(order.length)
                  .put(order)
                  .array();
            },
        (Deserializer<OpenOrder>)
            (topic, bytes) -> {
              if (bytes == null) {
                return null;
              }
              // Working orders came with the order lifecycle, whose first layout (1) no release
              // carried.
              if (bytes.length == 0
                  || (bytes[0] != OPEN_ORDER_LAYOUT && bytes[0] != OPEN_ORDER_LAYOUT_2)) {
                throw new IllegalStateException(
                    "unknown working-order layout (" + bytes.length + " bytes)");
              }
              ByteBuffer b = ByteBuffer.wrap(bytes, 1, bytes.length - 1);
              long received = b.getLong();
              long placed = b.getLong();
              long reserved = b.getLong();
              long expires = b.getLong();
              // layout 2 kept no entry number: 0, and its triggers are told apart by placement
              long entry = bytes[0] == OPEN_ORDER_LAYOUT ? b.getLong() : 0;
              String underlying = string(b);
              byte[] order = new byte[b.getInt()];
              b.get(order);
              try {
                return new OpenOrder(
                    Order.fromByteBuffer(ByteBuffer.wrap(order)),
                    received,
                    placed,
                    reserved,
                    underlying,
                    expires,
                    entry);
              } catch (java.io.IOException e) {
                throw new IllegalStateException("a working order that Avro cannot decode", e);
              }
            });
  }

  /** An instrument's halt: why, since when, by whom, and the last tick it held. */
  public static Serde<PriceBand.Halt> halts() {
    return Serdes.serdeFrom(
        (Serializer<PriceBand.Halt>)
            (topic, h) -> {
              if (h == null) {
                return null;
              }
              byte[] reason = h.reason().getBytes(StandardCharsets.UTF_8);
              byte[] by = h.by().getBytes(StandardCharsets.UTF_8);
              byte[] detail =
                  (h.detail() == null ? "" : h.detail()).getBytes(StandardCharsets.UTF_8);
              return ByteBuffer.allocate(1 + 12 + reason.length + by.length + detail.length + 36)
                  .put(V1)
                  .putInt(reason.length)
                  .put(reason)
                  .putInt(by.length)
                  .put(by)
                  .putInt(detail.length)
                  .put(detail)
                  .putLong(h.sinceMs())
                  .putLong(h.heldPrice())
                  .putLong(h.heldEventMs())
                  .putLong(h.heldSequence())
                  .putInt(h.confirmations())
                  .array();
            },
        (Deserializer<PriceBand.Halt>)
            (topic, bytes) -> {
              if (bytes == null) {
                return null;
              }
              ByteBuffer b = versioned(bytes, -1);
              String reason = string(b);
              String by = string(b);
              String detail = string(b);
              return new PriceBand.Halt(
                  reason,
                  b.getLong(),
                  by,
                  detail,
                  b.getLong(),
                  b.getLong(),
                  b.getLong(),
                  b.getInt());
            });
  }

  /** A book entry: the working order as the book knows it (Avro). */
  public static Serde<RestingOrder> resting() {
    return Serdes.serdeFrom(
        (Serializer<RestingOrder>)
            (topic, r) -> {
              return r == null ? null : avro(r::toByteBuffer, "a book entry");
            },
        (Deserializer<RestingOrder>)
            (topic, bytes) -> {
              if (bytes == null) {
                return null;
              }
              try {
                return BOOK_ENTRIES.decode(ByteBuffer.wrap(bytes));
              } catch (java.io.IOException e) {
                throw new IllegalStateException("a book entry that Avro cannot decode", e);
              }
            });
  }

  /**
   * Book entries as every release wrote them: the single-object encoding names its writer's schema
   * by fingerprint, so entries written before {@code entry} was added (restored from the book's
   * changelog) are read with that schema and take its default.
   */
  private static final org.apache.avro.message.BinaryMessageDecoder<RestingOrder> BOOK_ENTRIES =
      bookEntries();

  private static org.apache.avro.message.BinaryMessageDecoder<RestingOrder> bookEntries() {
    org.apache.avro.message.SchemaStore.Cache earlier =
        new org.apache.avro.message.SchemaStore.Cache();
    earlier.addSchema(without(RestingOrder.getClassSchema(), "entry"));
    return RestingOrder.createDecoder(earlier);
  }

  /** The record schema without one of its fields: an earlier version of it. */
  static org.apache.avro.Schema without(org.apache.avro.Schema schema, String field) {
    java.util.List<org.apache.avro.Schema.Field> fields = new java.util.ArrayList<>();
    for (org.apache.avro.Schema.Field f : schema.getFields()) {
      if (!f.name().equals(field)) {
        fields.add(new org.apache.avro.Schema.Field(f, f.schema()));
      }
    }
    return org.apache.avro.Schema.createRecord(
        schema.getName(), schema.getDoc(), schema.getNamespace(), false, fields);
  }

  /** An Avro record's single-object encoding (what the generated classes' toByteBuffer gives). */
  private interface AvroEncoding {
    ByteBuffer encode() throws java.io.IOException;
  }

  private static byte[] avro(AvroEncoding encoding, String what) {
    try {
      ByteBuffer encoded = encoding.encode();
      byte[] out = new byte[encoded.remaining()];
      encoded.get(out);
      return out;
    } catch (java.io.IOException e) {
      throw new IllegalStateException(what + " that Avro cannot encode", e);
    }
  }

  private static ByteBuffer versioned(byte[] bytes, int length) {
    if (bytes.length == 0 || bytes[0] != V1 || (length > 0 && bytes.length != length)) {
      throw new IllegalStateException("unknown state layout (" + bytes.length + " bytes)");
    }
    return ByteBuffer.wrap(bytes, 1, bytes.length - 1);
  }

  private static String string(ByteBuffer b) {
    byte[] raw = new byte[b.getInt()];
    b.get(raw);
    return new String(raw, StandardCharsets.UTF_8);
  }
}
