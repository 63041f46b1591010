package io.brokerstream.pnl;

import io.brokerstream.avro.EquityMarks;
import io.brokerstream.avro.HeldMark;
import io.brokerstream.money.Micros;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.serde.RestSchemaRegistry;
import io.brokerstream.serde.SchemaRegistry;
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

  public static final class Values implements SerializationSchema<EquityMarksRecord> {
    private static final long serialVersionUID = 1L;
    private final String registryUrl;
    private transient AvroCodec<EquityMarks> codec;

    public Values(String registryUrl) {
      this.registryUrl = registryUrl;
    }

    void useRegistry(SchemaRegistry registry) {
      codec = AvroCodec.specific(EquityMarks.class, registry, false);
    }

    @Override
    public void open(InitializationContext context) {
      if (codec == null) {
        // not auto-registering: the schemas are registered (and checked) by the launcher
        codec = AvroCodec.specific(EquityMarks.class, new RestSchemaRegistry(registryUrl), false);
      }
    }

    @Override
    public byte[] serialize(EquityMarksRecord r) {
      if (codec == null) {
        open(null);
      }
      return codec.encode(TOPIC + "-value", toAvro(r));
    }
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
