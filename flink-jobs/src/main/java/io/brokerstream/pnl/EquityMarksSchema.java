package io.brokerstream.pnl;

import io.brokerstream.avro.EquityMarks;
import io.brokerstream.avro.HeldMark;
import io.brokerstream.money.Micros;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.serialization.SerializationSchema;

/**
 * An equity's marks to pnl.equity-marks: key the equity id as UTF-8, value an EquityMarks in the
 * Confluent wire format.
 */
public final class EquityMarksSchema {
  /** Every held instrument's mark, per equity, when any moved: what fresh position P&L is from. */
  public static final String TOPIC = "pnl.equity-marks";

  private EquityMarksSchema() {}

  public static final class Keys implements SerializationSchema<EquityMarksRecord> {
    private static final long serialVersionUID = 1L;

    @Override
    public byte[] serialize(EquityMarksRecord r) {
      return r.underlyingId.getBytes(StandardCharsets.UTF_8);
    }
  }

  /** Values under the topic's subject. */
  public static SerializationSchema<EquityMarksRecord> values(String registryUrl) {
    return new AvroValues<>(registryUrl, TOPIC, EquityMarks.class, EquityMarksSchema::toAvro);
  }

  public static EquityMarks toAvro(EquityMarksRecord r) {
    List<HeldMark> marks = new ArrayList<>(r.instrumentIds.length);
    for (int i = 0; i < r.instrumentIds.length; i++) {
      marks.add(new HeldMark(r.instrumentIds[i], Micros.toDecimal(r.markMicros[i])));
    }
    return EquityMarks.newBuilder()
        .setUnderlyingId(r.underlyingId)
        .setUnderlyingPrice(Micros.toDecimal(r.underlyingPriceMicros))
        .setWindowEnd(Instant.ofEpochMilli(r.windowEnd))
        .setComputedTs(Instant.ofEpochMilli(r.computedTs))
        .setFirstTickTs(r.firstTickTs > 0 ? Instant.ofEpochMilli(r.firstTickTs) : null)
        .setMarks(marks)
        .build();
  }
}
