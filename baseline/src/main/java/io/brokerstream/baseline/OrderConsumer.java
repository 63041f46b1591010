package io.brokerstream.baseline;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.kafka.MemberPartition;
import io.brokerstream.rules.OrderDecider;
import io.brokerstream.rules.OrderInputs;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.serde.RegistryUnavailableException;
import io.brokerstream.trace.Stages;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of the monolith's order threads: its own consumer in the orders group, its own connection,
 * its own transactional producer. A poll's records are decided in one Postgres transaction; once
 * that commits, their results, dead letters and the input offsets go out in one Kafka transaction.
 *
 * <p>A crash between the two commits replays the batch: the orders table remembers which record
 * decided each order, so the same record gets its stored result emitted again and books nothing,
 * while another record of an order id already decided (a client's retry) emits nothing. Each order
 * ends as one result or one dead letter, as in the streams app.
 */
final class OrderConsumer implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(OrderConsumer.class);

  private final int index;
  private final BaselineSettings settings;
  private final KafkaSetup kafka;
  private final Database db;
  private final ReferenceLookups lookups;
  private final OrderDecider decider;
  private final AvroCodec<Order> orders;
  private final AvroCodec<OrderResult> results;
  private final DeadLetterRecords deadLetters;
  private final Counters counters;
  private final CountDownLatch assigned;
  private final AtomicBoolean signalled = new AtomicBoolean();
  private volatile boolean running = true;
  private volatile KafkaConsumer<byte[], byte[]> consumer;
  private int resultPartitions; // 0 until asked

  OrderConsumer(
      int index,
      BaselineSettings settings,
      KafkaSetup kafka,
      Database db,
      ReferenceLookups lookups,
      OrderDecider decider,
      AvroCodec<Order> orders,
      AvroCodec<OrderResult> results,
      DeadLetterRecords deadLetters,
      Counters counters,
      CountDownLatch assigned) {
    this.index = index;
    this.settings = settings;
    this.kafka = kafka;
    this.db = db;
    this.lookups = lookups;
    this.decider = decider;
    this.orders = orders;
    this.results = results;
    this.deadLetters = deadLetters;
    this.counters = counters;
    this.assigned = assigned;
  }

  @Override
  public void run() {
    while (running) {
      String group = settings.get("groups.orders");
      try (KafkaConsumer<byte[], byte[]> c =
              new KafkaConsumer<>(kafka.consumer(group, settings.getInt("orders.batch-size", 1)));
          KafkaProducer<byte[], byte[]> producer =
              new KafkaProducer<>(kafka.transactionalProducer(group + "-" + index));
          Connection tx = db.connection();
          OrderDesk desk = new OrderDesk(tx, db.schema(), lookups, decider)) {
        consumer = c;
        tx.setAutoCommit(false);
        producer.initTransactions();
        c.subscribe(
            List.of(settings.get("topics.orders")),
            new ConsumerRebalanceListener() {
              @Override
              public void onPartitionsRevoked(Collection<TopicPartition> partitions) {}

              @Override
              public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                Starts.record(c, partitions);
                if (signalled.compareAndSet(false, true)) {
                  assigned.countDown();
                }
              }
            });
        while (running) {
          ConsumerRecords<byte[], byte[]> batch = c.poll(Duration.ofMillis(200));
          for (int attempt = 1; !batch.isEmpty(); attempt++) {
            try {
              handle(batch, c, producer, tx, desk);
              break;
            } catch (SQLException e) {
              // A deadlock or serialization failure rolled the batch back: run it again as it is.
              if (!Transient.is(e) || attempt == Transient.ATTEMPTS) {
                throw e;
              }
              counters.retries.incrementAndGet();
            }
          }
        }
      } catch (WakeupException e) {
        if (running) {
          counters.restarts.incrementAndGet();
        }
      } catch (Exception e) {
        if (!running) {
          break;
        }
        counters.restarts.incrementAndGet();
        LOG.warn(
            "order thread {} restarts from the last committed offsets after: {}",
            index,
            e.toString(),
            e);
        sleep(1000);
      }
    }
  }

  private void handle(
      ConsumerRecords<byte[], byte[]> batch,
      KafkaConsumer<byte[], byte[]> c,
      KafkaProducer<byte[], byte[]> producer,
      Connection tx,
      OrderDesk desk)
      throws SQLException {
    List<ProducerRecord<byte[], byte[]>> out = new ArrayList<>(batch.count());
    Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
    long accepted = 0;
    long rejected = 0;
    long duplicates = 0;
    long dead = 0;
    String resultsTopic = settings.get("topics.results");
    try {
      for (ConsumerRecord<byte[], byte[]> in : batch) {
        next.put(
            new TopicPartition(in.topic(), in.partition()), new OffsetAndMetadata(in.offset() + 1));
        Order order;
        try {
          order = in.value() == null ? null : orders.decode(in.value());
          if (order == null) {
            throw new IllegalArgumentException(
                "an order record without a value (tombstone) cannot be decided");
          }
        } catch (RegistryUnavailableException e) {
          throw e; // not the record's fault: retry the batch, as the streams app does
        } catch (RuntimeException e) {
          out.add(deadLetters.of(in, e));
          dead++;
          continue;
        }
        RecordHeaders headers = new RecordHeaders(in.headers().toArray());
        boolean traced = Stages.sampled(headers);
        if (traced) {
          Stages.stamp(headers, Stages.DECIDE_START, Stages.nowMicros());
        }
        String member = in.key() == null ? null : new String(in.key(), StandardCharsets.UTF_8);
        String undecidable = OrderInputs.problem(member, order);
        if (undecidable != null) {
          out.add(deadLetters.of(in, new IllegalArgumentException(undecidable)));
          dead++;
          continue;
        }
        OrderDesk.Outcome outcome;
        try {
          outcome =
              desk.handle(
                  order, member, Instant.ofEpochMilli(in.timestamp()), in.partition(), in.offset());
        } catch (ArithmeticException | IllegalArgumentException | IllegalStateException e) {
          // The rules threw before booking anything (the decider has no side effects).
          out.add(deadLetters.of(in, e));
          dead++;
          continue;
        }
        if (outcome instanceof OrderDesk.Decided decided) {
          OrderResult r = decided.result();
          if (traced) {
            Stages.stamp(headers, Stages.DECIDE_END, Stages.nowMicros());
          }
          byte[] key = (member + "|" + order.getOrderId()).getBytes(StandardCharsets.UTF_8);
          // In the member's partition, as the streams app writes results: its member task reads
          // them back when it takes over.
          out.add(
              new ProducerRecord<>(
                  resultsTopic,
                  MemberPartition.of(member, resultPartitions(producer, resultsTopic)),
                  key,
                  results.encode(resultsTopic + "-value", r),
                  headers));
          if (r.getStatus() == OrderStatus.ACCEPTED) {
            accepted++;
          } else {
            rejected++;
          }
        } else {
          duplicates++;
        }
      }
      desk.flush();
      tx.commit();
    } catch (SQLException | RuntimeException e) {
      desk.discard();
      tx.rollback();
      throw e;
    }
    producer.beginTransaction();
    out.forEach(producer::send);
    producer.sendOffsetsToTransaction(next, c.groupMetadata());
    producer.commitTransaction();
    counters.accepted.addAndGet(accepted);
    counters.rejected.addAndGet(rejected);
    counters.duplicates.addAndGet(duplicates);
    counters.deadLettered.addAndGet(dead);
    counters.orderBatches.incrementAndGet();
  }

  private int resultPartitions(KafkaProducer<byte[], byte[]> producer, String topic) {
    if (resultPartitions == 0) {
      resultPartitions = producer.partitionsFor(topic).size();
    }
    return resultPartitions;
  }

  void stop() {
    running = false;
    KafkaConsumer<byte[], byte[]> c = consumer;
    if (c != null) {
      c.wakeup();
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
