package io.brokerstream.loadgen;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.Side;
import io.brokerstream.kafka.ClientLogin;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.trace.Stages;
import java.time.Instant;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Orders straight into the orders topic, keyed by member, as the gateway writes them: for rates an
 * HTTP client on this machine cannot reach. Accept latency is due -> acknowledged by the broker;
 * visibility is the results watcher's. One record in {@code traceOneIn} is marked for stage
 * tracing.
 */
final class KafkaDriver implements Driver {
  private final KafkaProducer<String, byte[]> producer;
  private final AvroCodec<Order> codec;
  private final int traceOneIn;
  private final AtomicInteger open = new AtomicInteger();

  KafkaDriver(Plan plan, AvroCodec<Order> codec) {
    Properties p = new Properties();
    p.putAll(plan.kafka());
    p.putAll(ClientLogin.load(plan.orderKafkaLogin()));
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, plan.bootstrap());
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 131072);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "loadgen-orders");
    this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    this.codec = codec;
    this.traceOneIn = plan.traceOneIn();
  }

  @Override
  public void send(StepState step, int seq, OrderMix.Next o) {
    long due = step.schedule.dueMicros(seq);
    Order order =
        Order.newBuilder()
            .setOrderId(step.orderId(seq))
            .setAccountId(o.account())
            .setInstrumentId(o.instrument())
            .setSide(o.buy() ? Side.BUY : Side.SELL)
            .setQuantity(o.quantity())
            .setLimitPrice(null)
            .setShortSale(false)
            .setClientTs(Instant.ofEpochMilli(due / 1000))
            .setTraceId(null)
            .build();
    ProducerRecord<String, byte[]> record =
        new ProducerRecord<>("orders", o.client().member(), codec.encode("orders-value", order));
    if (traceOneIn > 0 && seq % traceOneIn == 0) {
      Stages.mark(record.headers());
    }
    open.incrementAndGet();
    step.clientSent.set(seq, step.schedule.nowMicros());
    producer.send(
        record,
        (meta, err) -> {
          if (err != null) {
            step.error("send " + err.getClass().getSimpleName());
          } else {
            step.client.record("accept", step.schedule.nowMicros() - due);
          }
          open.decrementAndGet();
        });
  }

  @Override
  public int inFlight() {
    return open.get();
  }

  @Override
  public void close() {
    producer.close();
  }
}
