package io.brokerstream.streams.gateway;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderCommand;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.streams.Topics;
import io.brokerstream.trace.Stages;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Writes orders to the orders topic, and cancels and amends to order-commands, keyed by the
 * authenticated member, so the member's orders and commands meet its positions and risk in one
 * task. Idempotent and acknowledged by all replicas: 202 means the order is durably in Kafka.
 */
public final class OrderSubmitter implements AutoCloseable {
  private final KafkaProducer<String, byte[]> producer;
  private final AvroCodec<Order> codec;
  private final AvroCodec<OrderCommand> commands;

  /**
   * @param lingerMs how long a batch waits for more orders: every produce request costs the broker
   *     far more than the records in it, and at thousands of orders a second a millisecond or two
   *     gathers several per request
   * @param compression none for single orders of a few hundred bytes: lz4 saved little on them and
   *     cost a frame per batch here and its decompression in the broker's validation
   * @param maxBlockMs the longest a send may wait for buffer space or a topic's metadata: orders
   *     are sent from the HTTP event loop, which must not stall its other connections for long;
   *     past it the send fails and the member gets 503 (Kafka is then far behind)
   */
  public OrderSubmitter(
      String bootstrap,
      Properties login,
      AvroCodec<Order> codec,
      AvroCodec<OrderCommand> commands,
      int lingerMs,
      String compression,
      long maxBlockMs) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.putAll(login);
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "gateway");
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, maxBlockMs);
    // Keep the two topics' metadata however long no order comes: a send that finds none waits for
    // it on the event loop.
    p.put(ProducerConfig.METADATA_MAX_IDLE_CONFIG, Long.MAX_VALUE);
    this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    this.codec = codec;
    this.commands = commands;
  }

  /**
   * Fetches both topics' metadata and schema ids before the first request, so no request waits for
   * them; returns false when they could not be had within {@code deadlineMs} (the first sends then
   * fetch them, or fail with 503 past the block limit).
   */
  public boolean warm(long deadlineMs) {
    long until = System.currentTimeMillis() + deadlineMs;
    while (true) {
      try {
        codec.schemaId(Topics.ORDERS + "-value");
        commands.schemaId(Topics.ORDER_COMMANDS + "-value");
        producer.partitionsFor(Topics.ORDERS);
        producer.partitionsFor(Topics.ORDER_COMMANDS);
        return true;
      } catch (RuntimeException e) {
        if (System.currentTimeMillis() >= until) {
          return false;
        }
        try {
          Thread.sleep(200);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
    }
  }

  /**
   * Writes a cancel or amend to order-commands, keyed by the member like its orders (the same
   * task).
   */
  public CompletableFuture<RecordMetadata> command(String memberId, OrderCommand command) {
    return send(
        new ProducerRecord<>(
            Topics.ORDER_COMMANDS,
            memberId,
            commands.encode(Topics.ORDER_COMMANDS + "-value", command)));
  }

  /** Writes the order; a traced one (receivedMicros >= 0) carries its gateway stage times. */
  public CompletableFuture<RecordMetadata> submit(
      String memberId, Order order, long receivedMicros) {
    byte[] value = codec.encode(Topics.ORDERS + "-value", order);
    ProducerRecord<String, byte[]> record = new ProducerRecord<>(Topics.ORDERS, memberId, value);
    if (receivedMicros >= 0) {
      Stages.mark(record.headers());
      Stages.stamp(record.headers(), Stages.GATEWAY_RECEIVED, receivedMicros);
      Stages.stamp(record.headers(), Stages.GATEWAY_SENT, Stages.nowMicros());
    }
    return send(record);
  }

  private CompletableFuture<RecordMetadata> send(ProducerRecord<String, byte[]> record) {
    CompletableFuture<RecordMetadata> done = new CompletableFuture<>();
    producer.send(
        record,
        (meta, err) -> {
          if (err != null) {
            done.completeExceptionally(err);
          } else {
            done.complete(meta);
          }
        });
    return done;
  }

  @Override
  public void close() {
    producer.close();
  }
}
