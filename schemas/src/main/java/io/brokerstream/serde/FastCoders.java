package io.brokerstream.serde;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.Position;
import io.brokerstream.avro.Side;
import io.brokerstream.avro.TimeInForce;
import io.brokerstream.money.Micros;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import org.apache.avro.AvroTypeException;
import org.apache.avro.Schema;
import org.apache.avro.io.DatumReader;
import org.apache.avro.io.DatumWriter;
import org.apache.avro.io.Decoder;
import org.apache.avro.io.Encoder;

/**
 * Hand-written Avro coders for the records the order flow reads or writes once per order. The
 * generic writers walk the schema and convert logical types through lookups on every record; at
 * tens of thousands of orders a second that was a seventh of the stream threads' time. These write
 * the fields in schema order directly. Tests compare their bytes with Avro's own for random
 * records, so a schema change that is not mirrored here fails the build.
 */
final class FastCoders {
  private static final int MONEY_SCALE = 6;
  private static final int MONEY_PRECISION = 18;

  // A decimal's bytes are read into a buffer per thread: the flow decodes several per order (a
  // position holds three), and the general path's ByteBuffer, byte array and BigInteger for each
  // were a twentieth of what the streams process allocated in a drain.
  private static final ThreadLocal<ByteBuffer> MONEY_IN =
      ThreadLocal.withInitial(() -> ByteBuffer.allocate(Long.BYTES));

  private FastCoders() {}

  private static final Map<Class<?>, DatumWriter<?>> WRITERS =
      Map.of(
          OrderResult.class, (Writer<OrderResult>) FastCoders::writeResult,
          Position.class, (Writer<Position>) FastCoders::writePosition,
          Order.class, (Writer<Order>) FastCoders::writeOrder);

  private static final Map<Class<?>, DatumReader<?>> READERS =
      Map.of(
          Order.class, (Reader<Order>) FastCoders::readOrder,
          // the order flow reads its stored position once per order
          Position.class, (Reader<Position>) FastCoders::readPosition);

  @SuppressWarnings("unchecked")
  static <T> DatumWriter<T> writer(Class<T> type) {
    return (DatumWriter<T>) WRITERS.get(type);
  }

  /**
   * A reader for data written with exactly the class's own schema (else Avro's resolving reader).
   */
  @SuppressWarnings("unchecked")
  static <T> DatumReader<T> reader(Class<T> type) {
    return (DatumReader<T>) READERS.get(type);
  }

  @FunctionalInterface
  interface Writer<T> extends DatumWriter<T> {
    void encode(T datum, Encoder out) throws IOException;

    @Override
    default void setSchema(Schema schema) {}

    @Override
    default void write(T datum, Encoder out) throws IOException {
      encode(datum, out);
    }
  }

  @FunctionalInterface
  interface Reader<T> extends DatumReader<T> {
    T decode(Decoder in) throws IOException;

    @Override
    default void setSchema(Schema schema) {}

    @Override
    default T read(T reuse, Decoder in) throws IOException {
      return decode(in);
    }
  }

  // --- records, fields in schema order
  // -------------------------------------------------------------
  private static void writeResult(OrderResult r, Encoder out) throws IOException {
    out.writeString(r.getOrderId());
    out.writeString(r.getMemberId());
    out.writeString(r.getAccountId());
    out.writeString(r.getInstrumentId());
    out.writeEnum(r.getSide().ordinal());
    out.writeLong(r.getQuantity());
    out.writeEnum(r.getStatus().ordinal());
    if (r.getReason() == null) {
      out.writeIndex(0);
    } else {
      out.writeIndex(1);
      out.writeEnum(r.getReason().ordinal());
    }
    optionalString(out, r.getReasonDetail());
    optionalMoney(out, r.getFillPrice());
    optionalMoney(out, r.getRealizedPnl());
    out.writeLong(millis(r.getClientTs()));
    out.writeLong(millis(r.getIngestTs()));
    out.writeLong(millis(r.getProcessedTs()));
    optionalString(out, r.getTraceId());
    optionalMoney(out, r.getLimitPrice());
    out.writeBoolean(r.getShortSale());
    out.writeLong(r.getClosedQuantity());
    optionalMoney(out, r.getClosedAvgCost());
    if (r.getPositionVersion() == null) {
      out.writeIndex(0);
    } else {
      out.writeIndex(1);
      out.writeLong(r.getPositionVersion());
    }
  }

  private static void writePosition(Position p, Encoder out) throws IOException {
    out.writeString(p.getAccountId());
    out.writeString(p.getMemberId());
    out.writeString(p.getInstrumentId());
    out.writeString(p.getUnderlyingId());
    out.writeInt(p.getMultiplier());
    out.writeLong(p.getQuantity());
    money(out, p.getAvgCost());
    money(out, p.getRealizedPnl());
    out.writeLong(p.getVersion());
    out.writeLong(millis(p.getUpdatedTs()));
    money(out, p.getCash());
    money(out, p.getCostBasis());
  }

  private static void writeOrder(Order o, Encoder out) throws IOException {
    out.writeString(o.getOrderId());
    out.writeString(o.getAccountId());
    out.writeString(o.getInstrumentId());
    out.writeEnum(o.getSide().ordinal());
    out.writeLong(o.getQuantity());
    optionalMoney(out, o.getLimitPrice());
    out.writeBoolean(o.getShortSale());
    out.writeLong(millis(o.getClientTs()));
    optionalString(out, o.getTraceId());
    out.writeEnum(o.getTimeInForce().ordinal());
    optionalMoney(out, o.getStopPrice());
  }

  private static Order readOrder(Decoder in) throws IOException {
    Order o = new Order();
    o.setOrderId(in.readString());
    o.setAccountId(in.readString());
    o.setInstrumentId(in.readString());
    o.setSide(Side.values()[in.readEnum()]);
    o.setQuantity(in.readLong());
    o.setLimitPrice(in.readIndex() == 0 ? null : readMoney(in));
    o.setShortSale(in.readBoolean());
    o.setClientTs(Instant.ofEpochMilli(in.readLong()));
    o.setTraceId(in.readIndex() == 0 ? null : in.readString());
    o.setTimeInForce(TimeInForce.values()[in.readEnum()]);
    o.setStopPrice(in.readIndex() == 0 ? null : readMoney(in));
    return o;
  }

  private static Position readPosition(Decoder in) throws IOException {
    Position p = new Position();
    p.setAccountId(in.readString());
    p.setMemberId(in.readString());
    p.setInstrumentId(in.readString());
    p.setUnderlyingId(in.readString());
    p.setMultiplier(in.readInt());
    p.setQuantity(in.readLong());
    p.setAvgCost(readMoney(in));
    p.setRealizedPnl(readMoney(in));
    p.setVersion(in.readLong());
    p.setUpdatedTs(Instant.ofEpochMilli(in.readLong()));
    p.setCash(readMoney(in));
    p.setCostBasis(readMoney(in));
    return p;
  }

  // --- fields
  // --------------------------------------------------------------------------------------
  private static void optionalString(Encoder out, String value) throws IOException {
    if (value == null) {
      out.writeIndex(0);
    } else {
      out.writeIndex(1);
      out.writeString(value);
    }
  }

  private static void optionalMoney(Encoder out, BigDecimal value) throws IOException {
    if (value == null) {
      out.writeIndex(0);
    } else {
      out.writeIndex(1);
      money(out, value);
    }
  }

  /** decimal(18,6) as Avro writes it: the unscaled value's minimal two's-complement bytes. */
  private static void money(Encoder out, BigDecimal value) throws IOException {
    if (value.scale() != MONEY_SCALE) {
      throw new AvroTypeException(
          "Cannot encode decimal with scale " + value.scale() + " as scale " + MONEY_SCALE);
    }
    if (value.precision() > MONEY_PRECISION) {
      throw new AvroTypeException(
          "Cannot encode decimal with precision "
              + value.precision()
              + " as max precision "
              + MONEY_PRECISION);
    }
    // 18 digits fit a long: its minimal two's-complement bytes, big-endian, without the BigInteger
    // and its array that unscaledValue().toByteArray() makes
    long unscaled = Micros.of(value);
    int length = (72 - Long.numberOfLeadingZeros(unscaled ^ (unscaled >> 63))) / 8;
    byte[] bytes = new byte[length];
    for (int i = length - 1; i >= 0; i--, unscaled >>= 8) {
      bytes[i] = (byte) unscaled;
    }
    out.writeBytes(bytes, 0, length);
  }

  private static BigDecimal readMoney(Decoder in) throws IOException {
    ByteBuffer buffer = MONEY_IN.get();
    ByteBuffer read = in.readBytes(buffer); // into the buffer when it fits, else a new one
    byte[] b = read.array();
    int from = read.arrayOffset() + read.position();
    int length = read.remaining();
    if (read != buffer || length == 0) {
      // more than a long (never written by these coders) or nothing: as Avro's reader takes it
      return new BigDecimal(
          new BigInteger(Arrays.copyOfRange(b, from, from + length)), MONEY_SCALE);
    }
    long unscaled = b[from]; // the sign, extended
    for (int i = from + 1; i < from + length; i++) {
      unscaled = (unscaled << 8) | (b[i] & 0xFF);
    }
    return Micros.toDecimal(unscaled);
  }

  private static long millis(Instant at) {
    return at.toEpochMilli();
  }
}
