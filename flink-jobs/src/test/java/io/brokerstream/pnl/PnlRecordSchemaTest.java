package io.brokerstream.pnl;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.EquityMarks;
import io.brokerstream.avro.EquityStart;
import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.PnlScope;
import io.brokerstream.avro.Position;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.avro.UnrealizedPnl;
import io.brokerstream.money.Micros;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.serde.InMemorySchemaRegistry;
import io.brokerstream.serde.RegistrySchemas;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;

/** The job's edges: Avro in the Confluent wire format in, EquityMarks and UnrealizedPnl out. */
class PnlRecordSchemaTest {
  final InMemorySchemaRegistry registry = new InMemorySchemaRegistry();

  <T extends org.apache.avro.specific.SpecificRecord> List<PnlInput> read(
      InputSchemas.RegistryDeserializer<T> d, String subject, Class<T> type, T record) {
    d.useRegistry(registry);
    List<PnlInput> out = new ArrayList<>();
    Collector<PnlInput> collector =
        new Collector<>() {
          @Override
          public void collect(PnlInput r) {
            out.add(r);
          }

          @Override
          public void close() {}
        };
    d.deserialize(AvroCodec.specific(type, registry, true).encode(subject, record), collector);
    d.deserialize(null, collector); // a tombstone
    return out;
  }

  @Test
  void inputsDecodeFromTheWireFormat() {
    PnlInput tick =
        read(
                new InputSchemas.Ticks("unused"),
                "price-ticks-value",
                PriceTick.class,
                new PriceTick("EQ1", new BigDecimal("101.250000"), Instant.ofEpochMilli(1234), 7L))
            .get(0);
    assertThat(tick.priceMicros).isEqualTo(101_250_000L);
    assertThat(tick.eventTs).isEqualTo(1234);
    PnlInput position =
        read(
                new InputSchemas.Positions("unused"),
                "brokerstream-orders-positions-changelog-value",
                Position.class,
                new Position(
                    "A1",
                    "M1",
                    "OC1",
                    "EQ1",
                    100,
                    -3L,
                    new BigDecimal("2.500000"),
                    BigDecimal.ZERO.setScale(6),
                    4L,
                    Instant.ofEpochMilli(1),
                    new BigDecimal("750.000000"),
                    new BigDecimal("7.500000")))
            .get(0);
    assertThat(position.underlyingId).isEqualTo("EQ1");
    assertThat(position.quantity).isEqualTo(-3);
    assertThat(position.costMicros).as("the exact cost of the 3 open units").isEqualTo(7_500_000L);
    Instrument option =
        new Instrument(
            "OC1",
            "X C100",
            "USD",
            "XNAS",
            "X call",
            "OPTION",
            "ACTIVE",
            "EQ1",
            "X",
            LocalDate.of(2027, 1, 15),
            "CALL",
            new BigDecimal("100.000000"),
            100,
            "AMERICAN");
    PnlInput terms =
        read(
                new InputSchemas.Instruments("unused"),
                "ref.instruments-value",
                Instrument.class,
                option)
            .get(0);
    assertThat(terms.call).isTrue();
    assertThat(terms.american).isTrue();
    assertThat(terms.maturityEpochDay).isEqualTo((int) LocalDate.of(2027, 1, 15).toEpochDay());
    Instrument equity =
        new Instrument(
            "EQ1", "X", "USD", "XNAS", "X", "EQUITY", "ACTIVE", null, null, null, null, null, 1,
            null);
    assertThat(
            read(
                new InputSchemas.Instruments("unused"),
                "ref.instruments-value",
                Instrument.class,
                equity))
        .isEmpty();
    assertThat(
            read(
                    new InputSchemas.Volatilities("unused"),
                    "ref.equity-starts-value",
                    EquityStart.class,
                    new EquityStart("EQ1", new BigDecimal("100.000000"), 0.3))
                .get(0)
                .volatility)
        .isEqualTo(0.3);
  }

  @Test
  void rollUpsEncodeAsUnrealizedPnlUnderTheirTopicsSubject() {
    PnlRecord r = new PnlRecord();
    r.scope = PnlRecord.Scope.ACCOUNT;
    r.memberId = "M1";
    r.accountId = "A1";
    r.marketValueMicros = Micros.parse("824.6912");
    r.costBasisMicros = Micros.parse("700");
    r.unrealizedMicros = Micros.parse("124.6912");
    r.positions = 2;
    r.windowEnd = 5000;
    r.computedTs = 5010;
    r.firstTickTs = 4100;
    var values = new PnlRecordSchema.Values("unused");
    registry.register(
        "pnl.accounts-value",
        RegistrySchemas.withoutJavaProperties(UnrealizedPnl.getClassSchema()));
    values.useRegistry(registry);
    byte[] bytes = values.serialize(r);
    assertThat(AvroCodec.schemaId(bytes))
        .isEqualTo(
            registry.lookup(
                "pnl.accounts-value",
                RegistrySchemas.withoutJavaProperties(UnrealizedPnl.getClassSchema())));
    UnrealizedPnl back = AvroCodec.specific(UnrealizedPnl.class, registry, false).decode(bytes);
    assertThat(back.getScope()).isEqualTo(PnlScope.ACCOUNT);
    assertThat(back.getAccountId()).isEqualTo("A1");
    assertThat(back.getInstrumentId()).isNull();
    assertThat(back.getMarketValue()).isEqualByComparingTo("824.6912");
    assertThat(back.getCostBasis()).isEqualByComparingTo("700");
    assertThat(back.getUnrealizedPnl()).isEqualByComparingTo("124.6912");
    assertThat(back.getPositions()).isEqualTo(2);
    assertThat(back.getFirstTickTs()).isEqualTo(Instant.ofEpochMilli(4100));
    assertThat(new PnlRecordSchema.Keys().serialize(r)).isEqualTo("A1".getBytes());
    assertThat(PnlRecordSchema.topic(r)).isEqualTo("pnl.accounts");
  }

  @Test
  void anEquitysMarksEncodeAsOneRecordKeyedByTheEquity() {
    EquityMarksRecord m =
        new EquityMarksRecord(
            "EQ1",
            Micros.parse("101"),
            5000,
            5010,
            4990,
            new String[] {"EQ1", "OC1", "OP2"},
            new long[] {Micros.parse("101"), Micros.parse("4.123456"), Micros.parse("0.000001")});
    var values = (AvroValues<EquityMarksRecord, EquityMarks>) EquityMarksSchema.values("unused");
    registry.register(
        "pnl.equity-marks-value",
        RegistrySchemas.withoutJavaProperties(EquityMarks.getClassSchema()));
    values.useRegistry(registry);
    EquityMarks back =
        AvroCodec.specific(EquityMarks.class, registry, false).decode(values.serialize(m));
    assertThat(back.getUnderlyingId()).isEqualTo("EQ1");
    assertThat(back.getUnderlyingPrice()).isEqualByComparingTo("101");
    assertThat(back.getWindowEnd()).isEqualTo(Instant.ofEpochMilli(5000));
    assertThat(back.getComputedTs()).isEqualTo(Instant.ofEpochMilli(5010));
    assertThat(back.getFirstTickTs()).isEqualTo(Instant.ofEpochMilli(4990));
    assertThat(back.getMarks())
        .extracting(h -> h.getInstrumentId(), h -> h.getMarkPrice().toPlainString())
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("EQ1", "101.000000"),
            org.assertj.core.groups.Tuple.tuple("OC1", "4.123456"),
            org.assertj.core.groups.Tuple.tuple("OP2", "0.000001"));
    assertThat(new EquityMarksSchema.Keys().serialize(m)).isEqualTo("EQ1".getBytes());
  }
}
