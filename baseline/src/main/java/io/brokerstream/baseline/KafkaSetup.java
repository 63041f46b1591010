package io.brokerstream.baseline;

import io.brokerstream.kafka.ClientLogin;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** The baseline's Kafka clients: bytes in and out (Avro is ours), logins of the secure profile. */
final class KafkaSetup {
  private final BaselineSettings settings;

  KafkaSetup(BaselineSettings settings) {
    this.settings = settings;
  }

  private Properties common() {
    Properties p = new Properties();
    p.putAll(ClientLogin.load(settings.get("kafka.login")));
    p.put("bootstrap.servers", settings.get("kafka.bootstrap"));
    return p;
  }

  Properties consumer(String group, int maxPoll) {
    Properties p = common();
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, settings.get("groups.start"));
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, String.valueOf(maxPoll));
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    return p;
  }

  /** Transactional: a batch's results and its input offsets commit together or not at all. */
  Properties transactionalProducer(String transactionalId) {
    Properties p = common();
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    return p;
  }

  Properties producer() {
    Properties p = common();
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    return p;
  }
}
