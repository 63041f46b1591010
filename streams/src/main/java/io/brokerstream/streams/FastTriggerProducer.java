package io.brokerstream.streams;

import io.brokerstream.avro.OrderTrigger;
import io.brokerstream.streams.topology.FastTriggers;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the book's triggers to order-triggers.fast as the book emits them, with a producer of its
 * own (not transactional), shared by the stream threads. A send that fails is only logged: the
 * trigger's copy in the book's transaction still reaches the member task.
 */
public final class FastTriggerProducer implements FastTriggers {
  private static final Logger log = LoggerFactory.getLogger(FastTriggerProducer.class);
  private final KafkaProducer<String, OrderTrigger> producer;
  private final AtomicLong failures = new AtomicLong();

  public FastTriggerProducer(String bootstrap, Properties login, Serializer<OrderTrigger> values) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.putAll(login);
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    // A crossing tick's triggers go together; waiting for more would only add to the fill's
    // latency.
    p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "book-fast-triggers");
    // The stream thread sends: it must never wait long on a copy it can do without.
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 1000);
    producer = new KafkaProducer<>(p, new StringSerializer(), values);
  }

  @Override
  public void send(String member, OrderTrigger trigger, long timestamp) {
    try {
      producer.send(
          new ProducerRecord<>(Topics.ORDER_TRIGGERS_FAST, null, timestamp, member, trigger),
          (meta, err) -> {
            if (err != null) {
              failed(err);
            }
          });
    } catch (RuntimeException e) {
      failed(e);
    }
  }

  private void failed(Exception e) {
    if (failures.getAndIncrement() % 1000 == 0) {
      log.warn(
          "a fast trigger was not written ({} so far); its transactional copy will decide the order",
          failures.get(),
          e);
    }
  }

  @Override
  public void close() {
    producer.close();
  }
}
