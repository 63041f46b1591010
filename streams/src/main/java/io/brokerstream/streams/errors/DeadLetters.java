package io.brokerstream.streams.errors;

import io.brokerstream.avro.DeadLetter;
import io.brokerstream.rules.BoundedLetters;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.streams.Topics;
import io.brokerstream.streams.metrics.DeadLetterCount;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Builds the dead-letter record of an input the app could not handle: where it came from, the
 * cause, and its bytes (bounded by {@link BoundedLetters}, so a letter always fits dlq.streams).
 * The error handlers hand these to Kafka Streams, which writes them in the same transaction as the
 * task's other output, so a record is dead-lettered exactly once.
 */
public final class DeadLetters {
  /**
   * Config key under which the app passes its dead-letter codec to the handlers Kafka Streams
   * creates.
   */
  public static final String CODEC_CONFIG = "brokerstream.dead-letters.codec";

  public static final String APPLICATION_CONFIG = "brokerstream.dead-letters.application";

  private final AvroCodec<DeadLetter> codec;
  private final String application;

  public DeadLetters(AvroCodec<DeadLetter> codec, String application) {
    this.codec = codec;
    this.application = application;
  }

  @SuppressWarnings("unchecked")
  static DeadLetters fromConfigs(Map<String, ?> configs) {
    Object codec = configs.get(CODEC_CONFIG);
    if (!(codec instanceof AvroCodec<?>)) {
      throw new IllegalStateException(CODEC_CONFIG + " must hold the app's AvroCodec<DeadLetter>");
    }
    return new DeadLetters(
        (AvroCodec<DeadLetter>) codec, String.valueOf(configs.get(APPLICATION_CONFIG)));
  }

  public ProducerRecord<byte[], byte[]> of(
      String topic, int partition, long offset, byte[] key, byte[] value, Throwable cause) {
    DeadLetter letter =
        BoundedLetters.letter(
            topic,
            partition,
            offset,
            key,
            value,
            cause.getClass().getName(),
            BoundedLetters.describe(cause),
            application,
            Instant.now());
    DeadLetterCount.letter(topic, cause.getClass().getSimpleName());
    byte[] letterKey =
        BoundedLetters.letterKey(topic, partition, offset).getBytes(StandardCharsets.UTF_8);
    // One partition (the catalog says so): naming it spares the producer a metadata lookup.
    return new ProducerRecord<>(
        Topics.DEAD_LETTERS, 0, letterKey, codec.encode(Topics.DEAD_LETTERS + "-value", letter));
  }
}
