package io.brokerstream.loadgen;

import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.trace.Stages;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Follows order-results as a read_committed reader (what any downstream consumer sees) and matches
 * each result of the current step to its order by id ({@code <tag>-<seq>}): when it became visible,
 * its outcome, and for sampled orders the stage times their headers carry. One thread.
 */
final class ResultWatcher implements Runnable, AutoCloseable {
  private final KafkaConsumer<String, byte[]> consumer;
  private final AvroCodec<OrderResult> codec;
  private volatile StepState step;
  private volatile boolean running = true;

  ResultWatcher(
      String bootstrap, Map<String, String> kafka, int fetchWaitMs, AvroCodec<OrderResult> codec) {
    Properties p = new Properties();
    p.putAll(kafka);
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    // a short wait times visibility closely (Plan#resultsFetchWaitMs)
    p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, fetchWaitMs);
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, "loadgen-results");
    this.consumer = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
    this.codec = codec;
    List<TopicPartition> parts =
        consumer.partitionsFor("order-results").stream()
            .map(info -> new TopicPartition(info.topic(), info.partition()))
            .toList();
    consumer.assign(parts);
    consumer.seekToEnd(parts);
    parts.forEach(consumer::position); // resolve the end now, before any order of a step is sent
  }

  void watch(StepState next) {
    this.step = next;
  }

  @Override
  public void run() {
    try {
      while (running) {
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          handle(r, Stages.nowMicros());
        }
      }
    } catch (WakeupException e) {
      // closing
    } finally {
      consumer.close(Duration.ofSeconds(5));
    }
  }

  private void handle(ConsumerRecord<String, byte[]> r, long now) {
    StepState s = step;
    String key = r.key();
    if (s == null || key == null || r.value() == null) {
      return;
    }
    // the result key is the order id, possibly behind the member ("M000001|<order id>")
    int bar = key.lastIndexOf('|');
    if (!key.startsWith(s.prefix, bar + 1)) {
      return;
    }
    int seq;
    try {
      seq = Integer.parseInt(key, bar + 1 + s.prefix.length(), key.length(), 10);
    } catch (NumberFormatException e) {
      return;
    }
    if (seq < 0 || seq >= s.count) {
      return;
    }
    if (!s.firstResult(seq)) {
      s.duplicates.incrementAndGet();
      return;
    }
    long due = s.schedule.dueMicros(seq);
    s.committed.record("committed", now - due);
    OrderStatus status = codec.decode(r.value()).getStatus();
    (status == OrderStatus.ACCEPTED ? s.accepted : s.rejected).incrementAndGet();
    if (Stages.sampled(r.headers())) {
      hops(s, r, seq, due, now);
      s.sample(seq, due, now);
    }
  }

  private static void hops(
      StepState s, ConsumerRecord<String, byte[]> r, int seq, long due, long now) {
    var h = r.headers();
    long sent = s.clientSent.get(seq);
    long received = Stages.read(h, Stages.GATEWAY_RECEIVED);
    long handedOver = Stages.read(h, Stages.GATEWAY_SENT);
    long appended = r.timestamp() * 1000; // the order's append time, which the result keeps
    long start = Stages.read(h, Stages.DECIDE_START);
    long end = Stages.read(h, Stages.DECIDE_END);
    if (sent > 0) {
      s.hops.record("client_queue", sent - due);
    }
    if (received > 0 && sent > 0) {
      s.hops.record("to_gateway", received - sent);
    }
    if (handedOver > 0 && received > 0) {
      s.hops.record("gateway", handedOver - received);
    }
    long beforeKafka = handedOver > 0 ? handedOver : sent;
    if (beforeKafka > 0) {
      s.hops.record("kafka_append", appended - beforeKafka);
    }
    if (start > 0) {
      s.hops.record("queue", start - appended);
    }
    if (start > 0 && end > 0) {
      s.hops.record("decide", end - start);
    }
    if (end > 0) {
      s.hops.record("commit", now - end);
    }
  }

  @Override
  public void close() {
    running = false;
    consumer.wakeup();
  }
}
