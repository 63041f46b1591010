package io.brokerstream.pnl;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.UnrealizedPnl;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.serde.InMemorySchemaRegistry;
import io.brokerstream.serde.RegistrySchemas;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The hand-written encoder writes exactly the bytes Avro's own writer does. */
class PnlRecordEncoderTest {
  static final long[] EDGES = {
    0,
    1,
    -1,
    127,
    128,
    -128,
    -129,
    255,
    256,
    32767,
    32768,
    -32769,
    999_999_999_999_999_999L,
    -999_999_999_999_999_999L,
    1_000_000,
    -1_000_000
  };

  @Test
  void bytesEqualAvrosForRandomAndEdgeRecords() {
    InMemorySchemaRegistry registry = new InMemorySchemaRegistry();
    String subject = "pnl.positions-value";
    int id =
        registry.register(
            subject, RegistrySchemas.withoutJavaProperties(UnrealizedPnl.getClassSchema()));
    AvroCodec<UnrealizedPnl> avro = AvroCodec.specific(UnrealizedPnl.class, registry, false);
    PnlRecordEncoder encoder = new PnlRecordEncoder();
    Random rnd = new Random(7);
    for (int i = 0; i < 20_000; i++) {
      PnlRecord r = new PnlRecord();
      r.scope = PnlRecord.Scope.values()[rnd.nextInt(3)];
      r.memberId = "M" + rnd.nextInt(1000) + (rnd.nextInt(50) == 0 ? "é" : "");
      r.accountId = r.scope == PnlRecord.Scope.MEMBER ? null : "A" + rnd.nextInt(100_000);
      r.instrumentId = "OC" + rnd.nextInt(9999);
      r.underlyingId = "EQ" + rnd.nextInt(99);
      r.quantity = rnd.nextInt(3) == 0 ? 0 : rnd.nextLong() % 1_000_000;
      r.underlyingPriceMicros = rnd.nextInt(4) == 0 ? -1 : money(rnd);
      r.markPriceMicros = rnd.nextInt(4) == 0 ? -1 : Math.abs(money(rnd));
      r.marketValueMicros = money(rnd);
      r.costBasisMicros = money(rnd);
      r.unrealizedMicros = money(rnd);
      r.unrealizedLossMicros = -Math.abs(money(rnd) % 999_999_999_999_999_999L);
      r.positions = rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(100_000);
      r.windowEnd = 1_700_000_000_000L + rnd.nextInt(1 << 30);
      r.computedTs = r.windowEnd + rnd.nextInt(5000);
      r.firstTickTs = rnd.nextInt(3) == 0 ? 0 : r.windowEnd - rnd.nextInt(5000);
      assertThat(encoder.encode(r, id))
          .as(r.toString())
          .isEqualTo(avro.encode(subject, PnlRecordSchema.toAvro(r)));
    }
  }

  static long money(Random rnd) {
    return switch (rnd.nextInt(3)) {
      case 0 -> EDGES[rnd.nextInt(EDGES.length)];
      case 1 -> rnd.nextLong() % 1_000_000_000_000L;
      default -> rnd.nextLong() % 999_999_999_999_999_999L;
    };
  }
}
