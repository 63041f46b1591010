package io.brokerstream.pnl;

import io.brokerstream.serde.SchemaRegistry;
import java.io.Serializable;
import java.util.function.Function;
import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.api.common.serialization.SerializationSchema;

/** A job record's value as Avro in the Confluent wire format, under its topic's value subject. */
final class AvroValues<T, A extends SpecificRecord> implements SerializationSchema<T> {
  private static final long serialVersionUID = 1L;

  /** The record's Avro form; serializable, as the sink that holds it is. */
  interface ToAvro<T, A> extends Function<T, A>, Serializable {}

  private final TaskCodec<A> codec;
  private final String subject;
  private final ToAvro<T, A> toAvro;

  AvroValues(String registryUrl, String topic, Class<A> type, ToAvro<T, A> toAvro) {
    this.codec = new TaskCodec<>(registryUrl, type);
    this.subject = topic + "-value";
    this.toAvro = toAvro;
  }

  /** Schemas from `registry` instead of the registry's URL (tests). */
  void useRegistry(SchemaRegistry registry) {
    codec.useRegistry(registry);
  }

  @Override
  public void open(InitializationContext context) {
    codec.get();
  }

  @Override
  public byte[] serialize(T record) {
    return codec.get().encode(subject, toAvro.apply(record));
  }
}
