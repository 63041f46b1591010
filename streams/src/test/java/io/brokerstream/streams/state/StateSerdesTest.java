package io.brokerstream.streams.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.RestingOrder;
import io.brokerstream.avro.Side;
import io.brokerstream.rules.PriceBand;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.Instant;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.message.BinaryMessageEncoder;
import org.junit.jupiter.api.Test;

/** The app's own state layouts read what earlier releases wrote, and what they write now. */
class StateSerdesTest {
  private static RestingOrder entry() {
    return RestingOrder.newBuilder()
        .setMemberId("M1")
        .setOrderId("o-1")
        .setInstrumentId("EQ1")
        .setUnderlyingId("EQ1")
        .setSide(Side.BUY)
        .setLimitPrice(new BigDecimal("95.000000"))
        .setPlacedTs(Instant.ofEpochMilli(1_700_000_000_000L))
        .setStop(false)
        .setEntry(3)
        .build();
  }

  @Test
  void aBookEntryRoundTripsWithItsNumber() {
    var serde = StateSerdes.resting();
    assertThat(serde.deserializer().deserialize("t", serde.serializer().serialize("t", entry())))
        .isEqualTo(entry());
  }

  @Test
  void aBookEntryWrittenBeforeEntriesWereNumberedIsReadWithNumberZero() throws Exception {
    // what the book's changelog holds from before: the single-object encoding of the older schema
    Schema older = StateSerdes.without(RestingOrder.getClassSchema(), "entry");
    GenericData model = new GenericData();
    model.addLogicalTypeConversion(new org.apache.avro.Conversions.DecimalConversion());
    model.addLogicalTypeConversion(
        new org.apache.avro.data.TimeConversions.TimestampMillisConversion());
    GenericData.Record old = new GenericData.Record(older);
    RestingOrder now = entry();
    for (Schema.Field f : older.getFields()) {
      old.put(f.name(), now.get(f.name()));
    }
    old.put("side", new GenericData.EnumSymbol(older.getField("side").schema(), "BUY"));
    ByteBuffer bytes = new BinaryMessageEncoder<GenericData.Record>(model, older).encode(old);
    byte[] raw = new byte[bytes.remaining()];
    bytes.get(raw);

    RestingOrder read = StateSerdes.resting().deserializer().deserialize("t", raw);

    assertThat(read.getEntry()).isZero();
    assertThat(read.getLimitPrice()).isEqualByComparingTo("95");
    assertThat(read.getOrderId()).isEqualTo("o-1");
  }

  @Test
  void aHaltRoundTrips() {
    PriceBand.Halt halt =
        new PriceBand.Halt("OPERATOR", 5, "ops-1", "news pending", 1_310_000, 7, 9, 2);
    var serde = StateSerdes.halts();
    assertThat(serde.deserializer().deserialize("t", serde.serializer().serialize("t", halt)))
        .isEqualTo(halt);
  }
}
