package io.brokerstream.trace;

import java.nio.ByteBuffer;
import java.time.Instant;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Stage timestamps carried in Kafka record headers by sampled orders, so a benchmark can split an
 * order's end-to-end latency into hops. Measurement only: nothing decides on them.
 *
 * <p>A sampled record carries {@link #SAMPLED}; every stage that sees it adds its own header, the
 * wall-clock time in microseconds since the epoch as an 8-byte big-endian long. Kafka Streams
 * copies an input record's headers to what it emits for it, so an order's stages reach its result.
 * Unsampled records carry no header at all and each stage pays one empty-list lookup.
 */
public final class Stages {
  /** Present on sampled records. */
  public static final String SAMPLED = "bs.trace";

  /** When the client meant to send the order (open-loop schedule). */
  public static final String INTENDED = "bs.t.intended";

  /** When the client sent it. */
  public static final String CLIENT_SENT = "bs.t.client-sent";

  /** The gateway's handler started on the request. */
  public static final String GATEWAY_RECEIVED = "bs.t.gateway-received";

  /** The gateway handed the record to its Kafka producer. */
  public static final String GATEWAY_SENT = "bs.t.gateway-sent";

  /** The order flow started and finished its decision. */
  public static final String DECIDE_START = "bs.t.decide-start";

  public static final String DECIDE_END = "bs.t.decide-end";

  private Stages() {}

  public static boolean sampled(Headers headers) {
    return headers.lastHeader(SAMPLED) != null;
  }

  public static void mark(Headers headers) {
    headers.add(SAMPLED, new byte[0]);
  }

  public static void stamp(Headers headers, String stage, long micros) {
    headers.add(stage, ByteBuffer.allocate(8).putLong(micros).array());
  }

  /** The stage's time in microseconds, or -1 when the record does not carry it. */
  public static long read(Headers headers, String stage) {
    Header h = headers.lastHeader(stage);
    return h == null || h.value() == null || h.value().length != 8
        ? -1
        : ByteBuffer.wrap(h.value()).getLong();
  }

  /** Wall-clock microseconds since the epoch (the clock every process on the machine shares). */
  public static long nowMicros() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  }
}
