package io.brokerstream.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brokerstream.avro.Order;
import java.util.Map;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serializer;
import org.junit.jupiter.api.Test;

class AvroSerdeTest {
  private final InMemorySchemaRegistry registry = new InMemorySchemaRegistry();
  private final AvroSerde<Order> serde =
      new AvroSerde<>(AvroCodec.specific(Order.class, registry, true));

  @Test
  void subjectsFollowTopicNameStrategy() {
    serde.serializer().serialize("orders", AvroCodecTest.order());
    Serializer<Order> keys = serde.serializer();
    keys.configure(Map.of(), true);
    keys.serialize("orders", AvroCodecTest.order());
    assertThat(registry.subjects()).containsExactlyInAnyOrder("orders-value", "orders-key");
  }

  @Test
  void decodingFailuresBecomeKafkaSerializationExceptionsNamingTheTopic() {
    assertThatThrownBy(() -> serde.deserializer().deserialize("orders", "not avro".getBytes()))
        .isInstanceOf(SerializationException.class)
        .hasMessageContaining("topic orders");
  }

  @Test
  void roundTrips() {
    byte[] bytes = serde.serializer().serialize("orders", AvroCodecTest.order());
    assertThat(serde.deserializer().deserialize("orders", bytes)).isEqualTo(AvroCodecTest.order());
  }
}
