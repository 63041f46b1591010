package io.brokerstream.loadgen;

import io.brokerstream.avro.EquityMarks;
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

/**
 * Tick -> P&L visible, as a read_committed reader of pnl.equity-marks sees it (a mark is what a
 * position's P&L moves with; a record carries an equity's): for a sample of the records (every
 * {@code stride}-th partition, one record in {@code oneIn}), the time from the earliest tick of its
 * window to now, split into the P&L window (tick to window end), the revaluation (window end to
 * computed) and the commit (computed to visible: the write, and with an exactly-once P&L job its
 * checkpoint).
 */
final class PnlWatcher implements Runnable, AutoCloseable {
  static final String[] NAMES = {
    "tick_to_pnl_committed", "pnl_window", "revaluation", "pnl_commit"
  };

  private final KafkaConsumer<byte[], byte[]> consumer;
  private final AvroCodec<EquityMarks> codec;
  private final int oneIn;
  private volatile Latencies current = new Latencies(NAMES);
  private volatile boolean running = true;
  private long n;

  PnlWatcher(
      String bootstrap,
      Map<String, String> kafka,
      int fetchWaitMs,
      AvroCodec<EquityMarks> codec,
      int stride,
      int oneIn) {
    Properties p = new Properties();
    p.putAll(kafka);
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, fetchWaitMs);
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, "loadgen-pnl");
    this.consumer =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    this.codec = codec;
    this.oneIn = oneIn;
    List<TopicPartition> parts =
        consumer.partitionsFor("pnl.equity-marks").stream()
            .filter(info -> info.partition() % stride == 0)
            .map(info -> new TopicPartition(info.topic(), info.partition()))
            .toList();
    consumer.assign(parts);
    consumer.seekToEnd(parts);
    parts.forEach(consumer::position);
  }

  /** Starts a fresh set of histograms (a new step) and returns the one that ended. */
  Latencies swap() {
    Latencies ended = current;
    current = new Latencies(NAMES);
    return ended;
  }

  @Override
  public void run() {
    try {
      while (running) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          if (r.value() == null || ++n % oneIn != 0) {
            continue;
          }
          long now = Stages.nowMicros();
          EquityMarks v = codec.decode(r.value());
          if (v.getFirstTickTs() == null) {
            continue; // a change of terms or volatility, not a tick
          }
          long tick = v.getFirstTickTs().toEpochMilli() * 1000;
          long windowEnd = v.getWindowEnd().toEpochMilli() * 1000;
          long computed = v.getComputedTs().toEpochMilli() * 1000;
          Latencies l = current;
          l.record("tick_to_pnl_committed", now - tick);
          l.record("pnl_window", windowEnd - tick);
          l.record("revaluation", computed - windowEnd);
          l.record("pnl_commit", now - computed);
        }
      }
    } catch (WakeupException e) {
      // closing
    } finally {
      consumer.close(Duration.ofSeconds(5));
    }
  }

  @Override
  public void close() {
    running = false;
    consumer.wakeup();
  }
}
