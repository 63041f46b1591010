package io.brokerstream.baseline;

import io.brokerstream.avro.DeadLetter;
import io.brokerstream.rules.BoundedLetters;
import io.brokerstream.serde.AvroCodec;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * A record the baseline could not handle, as the streams app writes one: its bytes (bounded), the
 * cause.
 */
final class DeadLetterRecords {
  private final AvroCodec<DeadLetter> codec;
  private final String topic;

  DeadLetterRecords(AvroCodec<DeadLetter> codec, String topic) {
    this.codec = codec;
    this.topic = topic;
  }

  ProducerRecord<byte[], byte[]> of(ConsumerRecord<byte[], byte[]> in, Throwable cause) {
    DeadLetter letter =
        BoundedLetters.letter(
            in.topic(),
            in.partition(),
            in.offset(),
            in.key(),
            in.value(),
            cause.getClass().getName(),
            BoundedLetters.describe(cause),
            "baseline",
            Instant.now());
    byte[] key =
        BoundedLetters.letterKey(in.topic(), in.partition(), in.offset())
            .getBytes(StandardCharsets.UTF_8);
    return new ProducerRecord<>(topic, key, codec.encode(topic + "-value", letter));
  }
}
