package io.brokerstream.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.avro.Position;
import io.brokerstream.avro.ReasonCode;
import io.brokerstream.avro.Side;
import io.brokerstream.avro.TimeInForce;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.Random;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.Test;

/** The hand-written coders write byte for byte what Avro writes, and read it back the same. */
class FastCodersTest {
  private final Random rng = new Random(7);
  private final InMemorySchemaRegistry registry = new InMemorySchemaRegistry();

  private BigDecimal money() {
    long[] edges = {
      0, 1, -1, 127, 128, -128, -129, 255, 256, 999_999_999_999_999_999L, -999_999_999_999_999_999L
    };
    long v;
    switch (rng.nextInt(6)) {
      case 0 -> v = edges[rng.nextInt(edges.length)];
      case 1 -> {
        // either side of where the two's-complement bytes grow by one, from one byte to eight
        long top = (1L << (8 * (1 + rng.nextInt(7)) - 1)) - 1;
        v = new long[] {top, top + 1, -top - 1, -top - 2}[rng.nextInt(4)];
      }
      default -> v = rng.nextLong() % 1_000_000_000_000_000L;
    }
    return BigDecimal.valueOf(v, 6);
  }

  private String text() {
    return rng.nextInt(5) == 0 ? "Ünïcødé-" + rng.nextInt() : "id-" + rng.nextInt(1000);
  }

  private Instant ts() {
    return Instant.ofEpochMilli(rng.nextLong() % 4_000_000_000_000L);
  }

  private <T extends SpecificRecord> void sameBytes(Class<T> type, T record) {
    byte[] fast = AvroCodec.specific(type, registry, true).encode("t-value", record);
    byte[] generic = AvroCodec.specificWithoutFastCoders(type, registry).encode("t-value", record);
    assertThat(fast).isEqualTo(generic);
    assertThat(AvroCodec.specific(type, registry, true).decode(fast)).isEqualTo(record);
    assertThat(AvroCodec.specificWithoutFastCoders(type, registry).decode(fast)).isEqualTo(record);
  }

  @Test
  void orderResults() {
    for (int i = 0; i < 2000; i++) {
      boolean accepted = rng.nextBoolean();
      sameBytes(
          OrderResult.class,
          OrderResult.newBuilder()
              .setOrderId(text())
              .setMemberId(text())
              .setAccountId(text())
              .setInstrumentId(text())
              .setSide(Side.values()[rng.nextInt(2)])
              .setQuantity(rng.nextLong())
              .setStatus(accepted ? OrderStatus.ACCEPTED : OrderStatus.REJECTED)
              .setReason(
                  accepted ? null : ReasonCode.values()[rng.nextInt(ReasonCode.values().length)])
              .setReasonDetail(accepted ? null : text())
              .setFillPrice(accepted ? money() : null)
              .setRealizedPnl(accepted ? money() : null)
              .setClientTs(ts())
              .setIngestTs(ts())
              .setProcessedTs(ts())
              .setTraceId(rng.nextBoolean() ? null : text())
              .setLimitPrice(rng.nextBoolean() ? null : money())
              .setShortSale(rng.nextBoolean())
              .setClosedQuantity(accepted && rng.nextBoolean() ? rng.nextLong() : 0)
              .setClosedAvgCost(accepted && rng.nextBoolean() ? money() : null)
              .setPositionVersion(accepted ? Long.valueOf(rng.nextLong()) : null)
              .build());
    }
  }

  @Test
  void positions() {
    for (int i = 0; i < 2000; i++) {
      sameBytes(
          Position.class,
          Position.newBuilder()
              .setAccountId(text())
              .setMemberId(text())
              .setInstrumentId(text())
              .setUnderlyingId(text())
              .setMultiplier(rng.nextInt())
              .setQuantity(rng.nextLong())
              .setAvgCost(money())
              .setRealizedPnl(money())
              .setVersion(rng.nextLong())
              .setUpdatedTs(ts())
              .setCash(money())
              .setCostBasis(money())
              .build());
    }
  }

  @Test
  void orders() {
    for (int i = 0; i < 2000; i++) {
      sameBytes(
          Order.class,
          Order.newBuilder()
              .setOrderId(text())
              .setAccountId(text())
              .setInstrumentId(text())
              .setSide(Side.values()[rng.nextInt(2)])
              .setQuantity(rng.nextLong())
              .setLimitPrice(rng.nextBoolean() ? null : money())
              .setShortSale(rng.nextBoolean())
              .setClientTs(ts())
              .setTraceId(rng.nextBoolean() ? null : text())
              .setTimeInForce(TimeInForce.values()[rng.nextInt(TimeInForce.values().length)])
              .setStopPrice(rng.nextBoolean() ? null : money())
              .build());
    }
  }

  @Test
  void moreThanEighteenDigitsAreRefusedLikeAvroRefusesThem() {
    Position p =
        Position.newBuilder()
            .setAccountId("a")
            .setMemberId("m")
            .setInstrumentId("i")
            .setUnderlyingId("i")
            .setMultiplier(1)
            .setQuantity(1)
            .setAvgCost(BigDecimal.valueOf(Long.MAX_VALUE, 6))
            .setRealizedPnl(BigDecimal.ZERO.setScale(6))
            .setVersion(1)
            .setUpdatedTs(Instant.EPOCH)
            .build();
    assertThatThrownBy(
            () -> AvroCodec.specific(Position.class, registry, true).encode("t-value", p))
        .isInstanceOf(SerdeException.class)
        .hasMessageContaining("precision 19");
    assertThatThrownBy(
            () ->
                AvroCodec.specificWithoutFastCoders(Position.class, registry).encode("t-value", p))
        .isInstanceOf(SerdeException.class)
        .hasMessageContaining("precision 19");
  }

  @Test
  void aDecimalOfAnotherScaleIsRefusedLikeAvroRefusesIt() {
    Position p =
        Position.newBuilder()
            .setAccountId("a")
            .setMemberId("m")
            .setInstrumentId("i")
            .setUnderlyingId("i")
            .setMultiplier(1)
            .setQuantity(1)
            .setAvgCost(new BigDecimal("1.5"))
            .setRealizedPnl(BigDecimal.ZERO.setScale(6))
            .setVersion(1)
            .setUpdatedTs(Instant.EPOCH)
            .build();
    assertThatThrownBy(
            () -> AvroCodec.specific(Position.class, registry, true).encode("t-value", p))
        .isInstanceOf(SerdeException.class)
        .hasMessageContaining("scale 1");
  }

  /**
   * A position as bytes, its average cost's decimal bytes as given (what a foreign writer sends).
   */
  private byte[] positionWithAvgCostBytes(byte[] avgCost) throws IOException {
    byte[] framed =
        AvroCodec.specific(Position.class, registry, true)
            .encode(
                "t-value",
                Position.newBuilder()
                    .setAccountId("A")
                    .setMemberId("M")
                    .setInstrumentId("I")
                    .setUnderlyingId("I")
                    .setMultiplier(1)
                    .setQuantity(1)
                    .setAvgCost(BigDecimal.ZERO.setScale(6))
                    .setRealizedPnl(BigDecimal.ZERO.setScale(6))
                    .setVersion(1)
                    .setUpdatedTs(Instant.EPOCH)
                    .setCash(BigDecimal.ZERO.setScale(6))
                    .build());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(framed, 0, 5); // the registry's framing: magic byte and schema id
    BinaryEncoder e = EncoderFactory.get().directBinaryEncoder(out, null);
    for (String id : new String[] {"A", "M", "I", "I"}) {
      e.writeString(id);
    }
    e.writeInt(1);
    e.writeLong(1);
    e.writeBytes(avgCost);
    e.writeBytes(new byte[] {0});
    e.writeLong(1);
    e.writeLong(0);
    e.writeBytes(new byte[] {0});
    e.writeBytes(new byte[] {0});
    e.flush();
    return out.toByteArray();
  }

  @Test
  void decimalsBeyondALongOrOfNoBytesAreReadAsAvroReadsThem() throws IOException {
    byte[] nineBytes = {0x01, 0, 0, 0, 0, 0, 0, 0, 0}; // 2^64 millionths: 20 digits
    byte[] bytes = positionWithAvgCostBytes(nineBytes);
    BigDecimal fast = AvroCodec.specific(Position.class, registry, true).decode(bytes).getAvgCost();
    assertThat(fast)
        .isEqualTo(
            AvroCodec.specificWithoutFastCoders(Position.class, registry)
                .decode(bytes)
                .getAvgCost())
        .isEqualTo(new BigDecimal("18446744073709.551616"));

    byte[] none = positionWithAvgCostBytes(new byte[0]);
    assertThatThrownBy(() -> AvroCodec.specific(Position.class, registry, true).decode(none))
        .hasRootCauseInstanceOf(NumberFormatException.class);
    assertThatThrownBy(
            () -> AvroCodec.specificWithoutFastCoders(Position.class, registry).decode(none))
        .hasRootCauseInstanceOf(NumberFormatException.class);
  }
}
