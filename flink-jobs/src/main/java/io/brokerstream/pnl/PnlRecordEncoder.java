package io.brokerstream.pnl;

import io.brokerstream.serde.AvroCodec;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Writes a {@link PnlRecord} as an UnrealizedPnl in Avro binary, straight from its longs: no
 * generated record, BigDecimal or Instant on the way. One record per position per window is the
 * job's output volume, and Avro's generic writer (builder, decimal and timestamp conversions) was
 * the larger part of its cost. Fields in schema order; PnlRecordEncoderTest compares the bytes with
 * Avro's own for random records, so a schema change that is not mirrored here fails the build.
 *
 * <p>Not thread-safe: one per serializer instance (a sink subtask).
 */
final class PnlRecordEncoder {
  private byte[] buf = new byte[256];
  private int pos;

  /** The Confluent wire format: magic byte, schema id, then the record. */
  byte[] encode(PnlRecord r, int schemaId) {
    pos = 0;
    ensure(AvroCodec.HEADER);
    buf[pos++] = AvroCodec.MAGIC;
    buf[pos++] = (byte) (schemaId >>> 24);
    buf[pos++] = (byte) (schemaId >>> 16);
    buf[pos++] = (byte) (schemaId >>> 8);
    buf[pos++] = (byte) schemaId;
    boolean position = r.scope == PnlRecord.Scope.POSITION;
    writeLong(r.scope.ordinal()); // PnlScope has the same symbols in the same order
    writeString(r.memberId);
    optionalString(r.accountId);
    optionalString(position ? r.instrumentId : null);
    optionalString(position ? r.underlyingId : null);
    if (position) {
      writeLong(1);
      writeLong(r.quantity);
    } else {
      writeLong(0);
    }
    optionalMoney(position && r.underlyingPriceMicros >= 0, r.underlyingPriceMicros);
    optionalMoney(position && r.markPriceMicros >= 0, r.markPriceMicros);
    writeMoney(r.marketValueMicros);
    writeMoney(r.costBasisMicros);
    writeMoney(r.unrealizedMicros);
    writeLong(r.positions);
    writeLong(r.windowEnd);
    writeLong(r.computedTs);
    if (r.firstTickTs > 0) {
      writeLong(1);
      writeLong(r.firstTickTs);
    } else {
      writeLong(0);
    }
    writeMoney(r.unrealizedLossMicros);
    return Arrays.copyOf(buf, pos);
  }

  private void optionalString(String s) {
    if (s == null) {
      writeLong(0);
    } else {
      writeLong(1);
      writeString(s);
    }
  }

  private void optionalMoney(boolean present, long micros) {
    if (present) {
      writeLong(1);
      writeMoney(micros);
    } else {
      writeLong(0);
    }
  }

  /** decimal(18,6) in micros: the unscaled value's minimal big-endian two's-complement bytes. */
  private void writeMoney(long micros) {
    // bytes needed: enough for the magnitude plus a sign bit (BigInteger.toByteArray's length)
    int bits = 64 - Long.numberOfLeadingZeros(micros < 0 ? ~micros : micros) + 1;
    int n = (bits + 7) / 8;
    writeLong(n);
    ensure(n);
    for (int i = n - 1; i >= 0; i--) {
      buf[pos++] = (byte) (micros >>> (8 * i));
    }
  }

  private void writeString(String s) {
    if (isAscii(s)) {
      int n = s.length();
      writeLong(n);
      ensure(n);
      for (int i = 0; i < n; i++) {
        buf[pos++] = (byte) s.charAt(i);
      }
    } else {
      byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
      writeLong(utf8.length);
      ensure(utf8.length);
      System.arraycopy(utf8, 0, buf, pos, utf8.length);
      pos += utf8.length;
    }
  }

  private static boolean isAscii(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) >= 0x80) {
        return false;
      }
    }
    return true;
  }

  /** Avro's int and long: zig-zag, then 7 bits per byte, low first. */
  private void writeLong(long v) {
    ensure(10);
    long n = (v << 1) ^ (v >> 63);
    while ((n & ~0x7FL) != 0) {
      buf[pos++] = (byte) ((n & 0x7F) | 0x80);
      n >>>= 7;
    }
    buf[pos++] = (byte) n;
  }

  private void ensure(int more) {
    if (pos + more > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + more));
    }
  }
}
