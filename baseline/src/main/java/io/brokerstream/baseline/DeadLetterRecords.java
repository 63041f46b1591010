package io.brokerstream.baseline;

import io.brokerstream.avro.DeadLetter;
import io.brokerstream.serde.AvroCodec;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;

/** A record the baseline could not handle, as the streams app writes one: the bytes untouched, the cause. */
final class DeadLetterRecords {
  private final AvroCodec<DeadLetter> codec;
  private final String topic;

  DeadLetterRecords(AvroCodec<DeadLetter> codec, String topic) {
    this.codec = codec;
    this.topic = topic;
  }

  ProducerRecord<byte[], byte[]> of(ConsumerRecord<byte[], byte[]> in, Throwable cause) {
    DeadLetter letter = DeadLetter.newBuilder()
        .setSourceTopic(in.topic()).setSourcePartition(in.partition()).setSourceOffset(in.offset())
        .setRecordKey(in.key() == null ? null : ByteBuffer.wrap(in.key()))
        .setRecordValue(in.value() == null ? null : ByteBuffer.wrap(in.value()))
        .setErrorClass(cause.getClass().getName()).setMessage(describe(cause))
        .setApplication("baseline").setTs(Instant.now()).build();
    byte[] key = (in.topic() + "/" + in.partition() + "/" + in.offset()).getBytes(StandardCharsets.UTF_8);
    return new ProducerRecord<>(topic, key, codec.encode(topic + "-value", letter));
  }

  static String describe(Throwable cause) {
    StringBuilder text = new StringBuilder();
    for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (text.length() > 0) {
        text.append(" <- caused by ");
      }
      text.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage());
    }
    return text.toString();
  }
}
