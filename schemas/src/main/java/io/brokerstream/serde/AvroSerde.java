package io.brokerstream.serde;

import java.util.Map;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Kafka serde over an {@link AvroCodec}: subjects follow TopicNameStrategy ({@code <topic>-value},
 * or {@code <topic>-key} for keys). Failures surface as Kafka's SerializationException, which the
 * streams app's exception handlers route to the dead-letter topic.
 */
public final class AvroSerde<T> implements Serde<T> {
  private final AvroCodec<T> codec;
  private boolean isKey;

  public AvroSerde(AvroCodec<T> codec) {
    this.codec = codec;
  }

  public static <T> AvroSerde<T> forValues(AvroCodec<T> codec) {
    return new AvroSerde<>(codec);
  }

  @Override
  public void configure(Map<String, ?> configs, boolean isKey) {
    this.isKey = isKey;
  }

  public AvroCodec<T> codec() {
    return codec;
  }

  @Override
  public Serializer<T> serializer() {
    return new Serializer<>() {
      @Override
      public void configure(Map<String, ?> configs, boolean key) {
        isKey = key;
      }

      @Override
      public byte[] serialize(String topic, T data) {
        try {
          return codec.encode(topic + (isKey ? "-key" : "-value"), data);
        } catch (SerdeException e) {
          throw new SerializationException(e.getMessage(), e);
        }
      }
    };
  }

  @Override
  public Deserializer<T> deserializer() {
    return new Deserializer<>() {
      @Override
      public T deserialize(String topic, byte[] data) {
        try {
          return codec.decode(data);
        } catch (SerdeException e) {
          throw new SerializationException("topic " + topic + ": " + e.getMessage(), e);
        }
      }
    };
  }
}
