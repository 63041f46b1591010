package io.brokerstream.serde.cli;

import io.brokerstream.kafka.ClientLogin;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.serde.RestSchemaRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Topics as JSON lines, through the Confluent wire format and the registry:
 *
 * <pre>
 *   produce BOOTSTRAP REGISTRY TOPIC TYPE  &lt; lines     (each line: {"key": ..., "value": {...}})
 *   consume BOOTSTRAP REGISTRY TOPIC TYPE COUNT [TIMEOUT_S]   (prints the same form)
 * </pre>
 *
 * TYPE is a record of io.brokerstream.avro (PriceTick, Order, ...). The interop tests use it to
 * show that what this serde writes, Python and Flink read, and the reverse.
 */
public final class AvroTool {
  /** The secure profile's login file (ClientLogin), when set. */
  static final String LOGIN_ENV = "BS_KAFKA_LOGIN";

  private AvroTool() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 5) {
      System.err.println(
          "usage: produce|consume BOOTSTRAP REGISTRY_URL TOPIC TYPE [COUNT [TIMEOUT_S]]");
      System.exit(2);
    }
    Class<? extends SpecificRecord> type =
        Class.forName("io.brokerstream.avro." + args[4]).asSubclass(SpecificRecord.class);
    RestSchemaRegistry registry = new RestSchemaRegistry(args[2]);
    switch (args[0]) {
      case "produce" -> produce(args[1], registry, args[3], type);
      case "consume" ->
          consume(
              args[1],
              registry,
              args[3],
              type,
              Integer.parseInt(args[5]),
              args.length > 6 ? Integer.parseInt(args[6]) : 30,
              System.out);
      default -> {
        System.err.println("unknown command " + args[0]);
        System.exit(2);
      }
    }
  }

  private static <T extends SpecificRecord> void produce(
      String bootstrap, RestSchemaRegistry registry, String topic, Class<T> type) throws Exception {
    AvroCodec<T> codec = AvroCodec.specific(type, registry, true);
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.putAll(ClientLogin.load(System.getenv(LOGIN_ENV)));
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    int sent = 0;
    try (KafkaProducer<String, byte[]> producer =
            new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer());
        BufferedReader in =
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        var node = JsonRecords.JSON.readTree(line);
        String key = node.hasNonNull("key") ? node.get("key").asText() : null;
        T value = JsonRecords.fromJson(node.get("value").toString(), type);
        producer
            .send(new ProducerRecord<>(topic, key, codec.encode(topic + "-value", value)))
            .get();
        sent++;
      }
    }
    System.err.println("produced " + sent + " records to " + topic);
  }

  private static <T extends SpecificRecord> void consume(
      String bootstrap,
      RestSchemaRegistry registry,
      String topic,
      Class<T> type,
      int count,
      int timeoutSeconds,
      PrintStream out)
      throws Exception {
    AvroCodec<T> codec = AvroCodec.specific(type, registry, false);
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.putAll(ClientLogin.load(System.getenv(LOGIN_ENV)));
    props.put(ConsumerConfig.GROUP_ID_CONFIG, "avro-tool-" + System.nanoTime());
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    List<String> lines = new ArrayList<>();
    long deadline = System.nanoTime() + Duration.ofSeconds(timeoutSeconds).toNanos();
    try (KafkaConsumer<String, byte[]> consumer =
        new KafkaConsumer<>(props, new StringDeserializer(), new ByteArrayDeserializer())) {
      consumer.subscribe(List.of(topic));
      while (lines.size() < count && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          String key = JsonRecords.JSON.writeValueAsString(r.key());
          // A tombstone (a deleted key on a compacted topic) has no value: it prints as null.
          String value = r.value() == null ? "null" : JsonRecords.toJson(codec.decode(r.value()));
          lines.add("{\"key\": " + key + ", \"value\": " + value + "}");
        }
      }
    }
    lines.forEach(out::println);
    if (lines.size() < count) {
      System.err.println(
          "only " + lines.size() + " of " + count + " records within " + timeoutSeconds + " s");
      System.exit(1);
    }
  }
}
