package io.brokerstream.streams;

import io.brokerstream.avro.DeadLetter;
import io.brokerstream.streams.metrics.DeadLetterCount;
import io.brokerstream.streams.topology.ReferenceLetters;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes refused reference records' dead letters to dlq.streams (key: source
 * topic/partition/offset, as the flow's own letters), idempotent, outside any transaction. A send
 * that fails is logged with the letter's cause, so the refusal is never silent.
 */
public final class ReferenceLetterProducer implements ReferenceLetters {
  private static final Logger log = LoggerFactory.getLogger(ReferenceLetterProducer.class);
  private final KafkaProducer<String, DeadLetter> producer;

  public ReferenceLetterProducer(
      String bootstrap, Properties login, Serializer<DeadLetter> values) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.putAll(login);
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "reference-letters");
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 5000);
    producer = new KafkaProducer<>(p, new StringSerializer(), values);
  }

  @Override
  public void send(DeadLetter letter) {
    DeadLetterCount.letter(letter.getSourceTopic(), letter.getErrorClass());
    String key =
        letter.getSourceTopic()
            + "/"
            + letter.getSourcePartition()
            + "/"
            + letter.getSourceOffset();
    producer.send(
        new ProducerRecord<>(Topics.DEAD_LETTERS, key, letter),
        (meta, err) -> {
          if (err != null) {
            log.error("a refused reference record's dead letter was not written: {}", letter, err);
          }
        });
  }

  @Override
  public void close() {
    producer.close();
  }
}
