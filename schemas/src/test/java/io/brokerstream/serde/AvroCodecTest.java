package io.brokerstream.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.Side;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.Instant;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

class AvroCodecTest {
  private final InMemorySchemaRegistry registry = new InMemorySchemaRegistry();
  private final AvroCodec<Order> codec = AvroCodec.specific(Order.class, registry, true);

  static Order order() {
    return Order.newBuilder()
        .setOrderId("o-1")
        .setAccountId("A0000001")
        .setInstrumentId("EQ000001")
        .setSide(Side.BUY)
        .setQuantity(100)
        .setLimitPrice(new BigDecimal("101.250000"))
        .setShortSale(false)
        .setClientTs(Instant.ofEpochMilli(1_795_000_000_123L))
        .setTraceId(null)
        .build();
  }

  @Test
  void roundTripsThroughTheWireFormat() {
    byte[] bytes = codec.encode("orders-value", order());
    assertThat(bytes[0]).isEqualTo(AvroCodec.MAGIC);
    assertThat(AvroCodec.schemaId(bytes))
        .isEqualTo(
            registry.lookup(
                "orders-value", RegistrySchemas.withoutJavaProperties(Order.getClassSchema())));
    assertThat(ByteBuffer.wrap(bytes, 1, 4).getInt()).isEqualTo(1);
    assertThat(codec.decode(bytes)).isEqualTo(order());
  }

  @Test
  void registersOncePerSubjectAndKeepsTheSameIdAcrossSubjects() {
    codec.encode("orders-value", order());
    codec.encode("orders-value", order());
    codec.encode("other-value", order());
    assertThat(registry.subjects()).containsExactlyInAnyOrder("orders-value", "other-value");
    assertThat(
            registry.lookup(
                "other-value", RegistrySchemas.withoutJavaProperties(Order.getClassSchema())))
        .isEqualTo(1);
  }

  @Test
  void readsDataWrittenWithAnOlderCompatibleSchema() {
    // The first version of Order had no trace_id; the current reader fills in its default.
    Schema v1 =
        SchemaBuilder.record("Order")
            .namespace("io.brokerstream.avro")
            .fields()
            .requiredString("order_id")
            .requiredString("account_id")
            .requiredString("instrument_id")
            .name("side")
            .type(Order.getClassSchema().getField("side").schema())
            .noDefault()
            .requiredLong("quantity")
            .name("limit_price")
            .type(Order.getClassSchema().getField("limit_price").schema())
            .withDefault(null)
            .requiredBoolean("short_sale")
            .name("client_ts")
            .type(Order.getClassSchema().getField("client_ts").schema())
            .noDefault()
            .endRecord();
    GenericRecord old = new GenericData.Record(v1);
    old.put("order_id", "o-old");
    old.put("account_id", "A1");
    old.put("instrument_id", "EQ1");
    old.put("side", new GenericData.EnumSymbol(v1.getField("side").schema(), "SELL"));
    old.put("quantity", 5L);
    old.put("limit_price", null);
    old.put("short_sale", true);
    old.put("client_ts", 42L);
    byte[] bytes = AvroCodec.generic(registry).encode("orders-value", old);

    Order read = codec.decode(bytes);
    assertThat(read.getOrderId()).isEqualTo("o-old");
    assertThat(read.getSide()).isEqualTo(Side.SELL);
    assertThat(read.getTraceId()).isNull();
    assertThat(read.getClientTs()).isEqualTo(Instant.ofEpochMilli(42));
  }

  @Test
  void rejectsWhatIsNotTheWireFormat() {
    assertThatThrownBy(() -> codec.decode(new byte[] {1, 0, 0, 0, 1, 2}))
        .isInstanceOf(SerdeException.class)
        .hasMessageContaining("magic byte 1");
    assertThatThrownBy(() -> codec.decode(new byte[] {0, 0}))
        .isInstanceOf(SerdeException.class)
        .hasMessageContaining("2 bytes");
    assertThatThrownBy(() -> codec.decode(new byte[] {0, 0, 0, 0, 9, 2}))
        .isInstanceOf(SerdeException.class)
        .hasMessageContaining("unknown schema id 9");
  }

  @Test
  void rejectsTruncatedAndTrailingBytes() {
    byte[] bytes = codec.encode("orders-value", order());
    byte[] truncated = java.util.Arrays.copyOf(bytes, bytes.length - 3);
    assertThatThrownBy(() -> codec.decode(truncated)).isInstanceOf(SerdeException.class);
    byte[] trailing = java.util.Arrays.copyOf(bytes, bytes.length + 1);
    assertThatThrownBy(() -> codec.decode(trailing))
        .isInstanceOf(SerdeException.class)
        .hasMessageContaining("trailing");
  }

  @Test
  void aDecimalWithTooManyPlacesCannotBeWritten() {
    Order bad = order();
    bad.setLimitPrice(new BigDecimal("1.0000001"));
    assertThatThrownBy(() -> codec.encode("orders-value", bad)).isInstanceOf(SerdeException.class);
  }

  @Test
  void withoutAutoRegistrationAnUnknownSchemaFails() {
    AvroCodec<Order> strict = AvroCodec.specific(Order.class, registry, false);
    assertThatThrownBy(() -> strict.encode("orders-value", order()))
        .isInstanceOf(SerdeException.class)
        .hasMessageContaining("not registered");
  }

  @Test
  void nullIsATombstone() {
    assertThat(codec.encode("orders-value", null)).isNull();
    assertThat(codec.decode(null)).isNull();
  }
}
