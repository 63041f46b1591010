package io.brokerstream.pnl;

import io.brokerstream.avro.InstrumentMark;
import io.brokerstream.money.Micros;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.apache.flink.api.common.serialization.SerializationSchema;

/**
 * Mark snapshots to their topic: key the instrument id as UTF-8, value an InstrumentMark in the
 * Confluent wire format.
 */
public final class MarkRecordSchema {
  /** Each mark at most once per snapshot interval: what the Postgres sync reads. */
  public static final String MARK_SNAPSHOTS = "pnl.mark-snapshots";

  private MarkRecordSchema() {}

  public static final class Keys implements SerializationSchema<MarkRecord> {
    private static final long serialVersionUID = 1L;

    @Override
    public byte[] serialize(MarkRecord r) {
      return r.instrumentId.getBytes(StandardCharsets.UTF_8);
    }
  }

  /** Values under `topic`'s subject. */
  public static SerializationSchema<MarkRecord> values(String registryUrl, String topic) {
    return new AvroValues<>(registryUrl, topic, InstrumentMark.class, MarkRecordSchema::toAvro);
  }

  public static InstrumentMark toAvro(MarkRecord r) {
    return InstrumentMark.newBuilder()
        .setInstrumentId(r.instrumentId)
        .setUnderlyingId(r.underlyingId)
        .setUnderlyingPrice(Micros.toDecimal(r.underlyingPriceMicros))
        .setMarkPrice(Micros.toDecimal(r.markMicros))
        .setWindowEnd(Instant.ofEpochMilli(r.windowEnd))
        .setComputedTs(Instant.ofEpochMilli(r.computedTs))
        .setFirstTickTs(r.firstTickTs > 0 ? Instant.ofEpochMilli(r.firstTickTs) : null)
        .build();
  }
}
