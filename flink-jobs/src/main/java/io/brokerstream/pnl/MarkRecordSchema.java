package io.brokerstream.pnl;

import io.brokerstream.avro.InstrumentMark;
import io.brokerstream.money.Micros;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.serde.RestSchemaRegistry;
import io.brokerstream.serde.SchemaRegistry;
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

  public static final class Values implements SerializationSchema<MarkRecord> {
    private static final long serialVersionUID = 1L;
    private final String registryUrl;
    private final String subject;
    private transient AvroCodec<InstrumentMark> codec;

    public Values(String registryUrl, String topic) {
      this.registryUrl = registryUrl;
      this.subject = topic + "-value";
    }

    void useRegistry(SchemaRegistry registry) {
      codec = AvroCodec.specific(InstrumentMark.class, registry, false);
    }

    @Override
    public void open(InitializationContext context) {
      if (codec == null) {
        // not auto-registering: the schemas are registered (and checked) by the launcher
        codec =
            AvroCodec.specific(InstrumentMark.class, new RestSchemaRegistry(registryUrl), false);
      }
    }

    @Override
    public byte[] serialize(MarkRecord r) {
      if (codec == null) {
        open(null);
      }
      return codec.encode(subject, toAvro(r));
    }
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
