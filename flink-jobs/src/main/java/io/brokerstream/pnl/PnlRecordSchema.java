package io.brokerstream.pnl;

import io.brokerstream.avro.PnlScope;
import io.brokerstream.avro.UnrealizedPnl;
import io.brokerstream.money.Micros;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.serde.RestSchemaRegistry;
import io.brokerstream.serde.SchemaRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import org.apache.flink.api.common.serialization.SerializationSchema;

/** Roll-ups to their topics: key as UTF-8, value as UnrealizedPnl in the Confluent wire format. */
public final class PnlRecordSchema {
  /**
   * Where records of the POSITION scope went in an earlier layout (the job writes marks instead).
   */
  public static final String POSITIONS = "pnl.positions";

  public static final String ACCOUNTS = "pnl.accounts";
  public static final String MEMBERS = "pnl.members";

  private PnlRecordSchema() {}

  public static String topic(PnlRecord r) {
    return switch (r.scope) {
      case POSITION -> POSITIONS;
      case ACCOUNT -> ACCOUNTS;
      case MEMBER -> MEMBERS;
    };
  }

  public static final class Keys implements SerializationSchema<PnlRecord> {
    private static final long serialVersionUID = 1L;

    @Override
    public byte[] serialize(PnlRecord r) {
      return r.keyBytes != null ? r.keyBytes : r.key().getBytes(StandardCharsets.UTF_8);
    }
  }

  public static final class Values implements SerializationSchema<PnlRecord> {
    private static final long serialVersionUID = 1L;
    private final String registryUrl;
    private final String topic;
    private transient AvroCodec<UnrealizedPnl> codec;
    private transient PnlRecordEncoder encoder;
    private transient int[] schemaIds; // by scope: each topic's subject has its own id

    /** Values for each record's own topic ({@link #topic(PnlRecord)}). */
    public Values(String registryUrl) {
      this(registryUrl, null);
    }

    /** Values for {@code topic}'s subject, or each record's own topic's when null. */
    public Values(String registryUrl, String topic) {
      this.registryUrl = registryUrl;
      this.topic = topic;
    }

    void useRegistry(SchemaRegistry registry) {
      codec = AvroCodec.specific(UnrealizedPnl.class, registry, false);
    }

    @Override
    public void open(InitializationContext context) {
      if (codec == null) {
        // not auto-registering: the schemas are registered (and checked) by the launcher
        codec = AvroCodec.specific(UnrealizedPnl.class, new RestSchemaRegistry(registryUrl), false);
      }
    }

    @Override
    public byte[] serialize(PnlRecord r) {
      if (codec == null) {
        open(null);
      }
      if (encoder == null) {
        encoder = new PnlRecordEncoder();
        schemaIds = new int[PnlRecord.Scope.values().length];
        Arrays.fill(schemaIds, -1);
      }
      int scope = r.scope.ordinal();
      if (schemaIds[scope] < 0) {
        schemaIds[scope] = codec.schemaId((topic != null ? topic : topic(r)) + "-value");
      }
      return encoder.encode(r, schemaIds[scope]);
    }
  }

  public static UnrealizedPnl toAvro(PnlRecord r) {
    boolean position = r.scope == PnlRecord.Scope.POSITION;
    return UnrealizedPnl.newBuilder()
        .setScope(PnlScope.valueOf(r.scope.name()))
        .setMemberId(r.memberId)
        .setAccountId(r.accountId)
        .setInstrumentId(position ? r.instrumentId : null)
        .setUnderlyingId(position ? r.underlyingId : null)
        .setQuantity(position ? r.quantity : null)
        .setUnderlyingPrice(
            position && r.underlyingPriceMicros >= 0
                ? Micros.toDecimal(r.underlyingPriceMicros)
                : null)
        .setMarkPrice(
            position && r.markPriceMicros >= 0 ? Micros.toDecimal(r.markPriceMicros) : null)
        .setMarketValue(Micros.toDecimal(r.marketValueMicros))
        .setCostBasis(Micros.toDecimal(r.costBasisMicros))
        .setUnrealizedPnl(Micros.toDecimal(r.unrealizedMicros))
        .setUnrealizedLoss(Micros.toDecimal(r.unrealizedLossMicros))
        .setPositions(r.positions)
        .setWindowEnd(Instant.ofEpochMilli(r.windowEnd))
        .setComputedTs(Instant.ofEpochMilli(r.computedTs))
        .setFirstTickTs(r.firstTickTs > 0 ? Instant.ofEpochMilli(r.firstTickTs) : null)
        .build();
  }
}
