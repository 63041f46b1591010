package io.brokerstream.streams;

import io.brokerstream.avro.OrderResult;
import io.brokerstream.streams.topology.ResultsTail;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a partition's committed tail of order-results with a consumer of its own (read_committed,
 * no group), from the offset the app's group committed (stable offsets, as Kafka Streams asks for
 * them when it restores) to the last stable offset. Called by a task as it starts, on its stream
 * thread: the results of the last commits before the stop, a few thousand at most.
 */
public final class KafkaResultsTail implements ResultsTail, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(KafkaResultsTail.class);
  private static final Duration WAIT = Duration.ofSeconds(30);

  private final String group;
  private final Admin admin;
  private final KafkaConsumer<String, OrderResult> consumer;

  public KafkaResultsTail(
      String bootstrap, Properties login, String applicationId, Deserializer<OrderResult> results) {
    this.group = applicationId;
    Properties a = new Properties();
    a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    a.putAll(login);
    a.put(AdminClientConfig.CLIENT_ID_CONFIG, "results-tail-admin");
    admin = Admin.create(a);
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    c.putAll(login);
    c.put(ConsumerConfig.CLIENT_ID_CONFIG, "results-tail");
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    consumer = new KafkaConsumer<>(c, new StringDeserializer(), results);
  }

  @Override
  public synchronized void read(int partition, BiConsumer<String, OrderResult> each) {
    TopicPartition tp = new TopicPartition(Topics.ORDER_RESULTS, partition);
    long from = committed(tp);
    consumer.assign(List.of(tp));
    long end = consumer.endOffsets(List.of(tp), WAIT).getOrDefault(tp, 0L);
    if (from >= end) {
      return;
    }
    consumer.seek(tp, from);
    long read = 0;
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (consumer.position(tp, WAIT) < end) {
      if (System.nanoTime() > deadline) {
        // A task must not start on a guess: failing it makes Kafka Streams try again.
        throw new IllegalStateException(
            "could not read " + tp + " from " + from + " to " + end + " in " + WAIT);
      }
      for (ConsumerRecord<String, OrderResult> r : consumer.poll(Duration.ofMillis(200))) {
        if (r.key() != null && r.value() != null && r.offset() < end) {
          each.accept(r.key(), r.value());
          read++;
        }
      }
    }
    log.info("{}: {} results committed past the group's offset {}", tp, read, from);
  }

  /** The group's stable committed offset, or 0 when none (the store restored nothing either). */
  private long committed(TopicPartition tp) {
    try {
      Map<TopicPartition, OffsetAndMetadata> offsets =
          admin
              .listConsumerGroupOffsets(
                  Map.of(group, new ListConsumerGroupOffsetsSpec().topicPartitions(List.of(tp))),
                  new ListConsumerGroupOffsetsOptions().requireStable(true))
              .partitionsToOffsetAndMetadata(group)
              .get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      OffsetAndMetadata o = offsets.get(tp);
      return o == null ? 0 : o.offset();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptException(e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("could not read the committed offset of " + tp, e);
    }
  }

  @Override
  public void close() {
    consumer.close(Duration.ofSeconds(5));
    admin.close(Duration.ofSeconds(5));
  }
}
