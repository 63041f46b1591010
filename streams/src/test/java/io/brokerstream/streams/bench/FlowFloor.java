package io.brokerstream.streams.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.brokerstream.avro.DeadLetter;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.serde.RestSchemaRegistry;
import io.brokerstream.streams.AppSettings;
import io.brokerstream.streams.StreamsProperties;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * The least the order flow's Kafka work can cost, measured alone: orders written by a producer set
 * as the gateway's (idempotent, acks all, its linger and compression), read by a Kafka Streams app
 * with the order flow's own configuration ({@link StreamsProperties}: exactly-once, its commit
 * interval, fetch and producer batching, one stream thread), which writes two records per order (a
 * result and a position, of their sizes) and nothing else: no Avro, no stores, no decision, no
 * readers of what it writes. The topics are the bench's own ({@code bsfloor.*}, the flow topics'
 * partition count), deleted at the end.
 *
 * <pre>
 *   java -cp streams-tests.jar:streams.jar io.brokerstream.streams.bench.FlowFloor SETTINGS.properties
 *   stdin:  run RATE SECONDS      (open loop: order i is due at start + i / RATE)
 *           quit
 *   stdout: "ready", then one JSON object per run: sent, processed, seconds
 * </pre>
 *
 * SETTINGS holds the app's settings (broker-defaults.properties' keys: kafka.bootstrap,
 * registry.url, commit.interval.ms, gateway.linger-ms, ...), plus {@code floor.partitions}.
 */
public final class FlowFloor implements AutoCloseable {
  static final String ORDERS = "bsfloor.orders";
  static final String RESULTS = "bsfloor.results";
  static final String POSITIONS = "bsfloor.positions";
  private static final int MEMBERS = 100;
  private static final int ORDER_BYTES = 190;
  private static final int RESULT_BYTES = 260;
  private static final int POSITION_BYTES = 170;

  private final AppSettings settings;
  private final KafkaStreams streams;
  private final KafkaProducer<String, byte[]> gateway;
  private final AtomicLong processed = new AtomicLong();
  private final byte[] order = new byte[ORDER_BYTES];
  private final String[] members = new String[MEMBERS];
  private long sent;

  FlowFloor(AppSettings settings, Path stateDir) throws Exception {
    this.settings = settings;
    createTopics(settings.get("kafka.bootstrap"), settings.getInt("floor.partitions"));
    AvroCodec<DeadLetter> deadLetters =
        AvroCodec.specific(
            DeadLetter.class, new RestSchemaRegistry(settings.get("registry.url")), false);
    Properties props = StreamsProperties.of(settings, deadLetters);
    props.put("state.dir", stateDir.toString());
    // no interactive queries here
    props.remove("application.server");
    streams = new KafkaStreams(topology(processed), props);
    gateway = gatewayProducer(settings);
    for (int m = 0; m < MEMBERS; m++) {
      members[m] = String.format("M%06d", m + 1);
    }
  }

  /** One record in, a result and a position out, as the order flow's member task writes them. */
  static Topology topology(AtomicLong processed) {
    Topology t = new Topology();
    t.addSource(
        "orders", Serdes.String().deserializer(), Serdes.ByteArray().deserializer(), ORDERS);
    t.addProcessor("decide", () -> new PassThrough(processed), "orders");
    t.addSink(
        "results",
        RESULTS,
        Serdes.String().serializer(),
        Serdes.ByteArray().serializer(),
        "decide");
    t.addSink(
        "positions",
        POSITIONS,
        Serdes.String().serializer(),
        Serdes.ByteArray().serializer(),
        "decide");
    return t;
  }

  static final class PassThrough implements Processor<String, byte[], String, byte[]> {
    private final AtomicLong processed;
    private final byte[] result = new byte[RESULT_BYTES];
    private final byte[] position = new byte[POSITION_BYTES];
    private ProcessorContext<String, byte[]> context;

    PassThrough(AtomicLong processed) {
      this.processed = processed;
    }

    @Override
    public void init(ProcessorContext<String, byte[]> context) {
      this.context = context;
    }

    @Override
    public void process(Record<String, byte[]> r) {
      context.forward(r.withKey(r.key() + "|" + r.timestamp()).withValue(result), "results");
      context.forward(r.withKey(r.key() + "|A1|EQ1").withValue(position), "positions");
      processed.incrementAndGet();
    }
  }

  private static KafkaProducer<String, byte[]> gatewayProducer(AppSettings s) {
    // the gateway's producer of orders (OrderSubmitter), from the same settings
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, s.get("kafka.bootstrap"));
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, s.getInt("gateway.linger-ms"));
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, s.get("gateway.compression"));
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "floor-gateway");
    p.put(ProducerConfig.METADATA_MAX_IDLE_CONFIG, Long.MAX_VALUE);
    return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
  }

  private static void createTopics(String bootstrap, int partitions) throws Exception {
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      for (String name : List.of(ORDERS, RESULTS, POSITIONS)) {
        try {
          admin
              .createTopics(
                  List.of(
                      new NewTopic(
                          name, java.util.Optional.of(partitions), java.util.Optional.empty())))
              .all()
              .get(30, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
          if (!(e.getCause() instanceof TopicExistsException)) {
            throw e;
          }
        }
      }
    }
  }

  static void deleteTopics(String bootstrap) throws Exception {
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.deleteTopics(Set.of(ORDERS, RESULTS, POSITIONS)).all().get(30, TimeUnit.SECONDS);
    }
  }

  void start(long timeoutMs) throws InterruptedException {
    streams.start();
    long until = System.currentTimeMillis() + timeoutMs;
    while (streams.state() != KafkaStreams.State.RUNNING) {
      if (System.currentTimeMillis() > until) {
        throw new IllegalStateException(
            "the floor app is " + streams.state() + " after " + timeoutMs + " ms");
      }
      Thread.sleep(100);
    }
    gateway.partitionsFor(ORDERS);
  }

  /**
   * Orders at {@code rate} for {@code seconds}, open loop, then waits until the app has read them.
   */
  Map<String, Object> run(double rate, double seconds) throws InterruptedException {
    long count = Math.round(rate * seconds);
    long before = processed.get();
    long t0 = System.nanoTime();
    for (long i = 0; i < count; i++) {
      long due = t0 + (long) (i * 1e9 / rate);
      long wait = due - System.nanoTime();
      if (wait > 0) {
        LockSupport.parkNanos(wait);
      }
      gateway.send(new ProducerRecord<>(ORDERS, members[(int) ((sent + i) % MEMBERS)], order));
    }
    sent += count;
    double sendSeconds = (System.nanoTime() - t0) / 1e9;
    gateway.flush();
    long until = System.currentTimeMillis() + 60_000;
    while (processed.get() - before < count && System.currentTimeMillis() < until) {
      Thread.sleep(5);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("sent", count);
    out.put("processed", processed.get() - before);
    out.put("send_seconds", sendSeconds);
    return out;
  }

  @Override
  public void close() {
    gateway.close();
    streams.close(java.time.Duration.ofSeconds(30));
    streams.cleanUp();
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: FlowFloor SETTINGS.properties   (then run lines on stdin)");
      System.exit(2);
    }
    Properties file = new Properties();
    try (var in = Files.newBufferedReader(Path.of(args[0]))) {
      file.load(in);
    }
    Map<String, String> overrides = new LinkedHashMap<>();
    file.stringPropertyNames().forEach(k -> overrides.put(k, file.getProperty(k)));
    overrides.putIfAbsent("floor.partitions", "4");
    overrides.putIfAbsent("application.id", "bsfloor-flow");
    AppSettings settings = AppSettings.of(overrides);
    Path state = Files.createTempDirectory("bsfloor-state");
    ObjectMapper json = new ObjectMapper();
    try (FlowFloor floor = new FlowFloor(settings, state)) {
      floor.start(120_000);
      System.out.println("ready");
      System.out.flush();
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line; (line = in.readLine()) != null; ) {
        String[] w = line.trim().split("\\s+");
        if (w[0].equals("quit")) {
          break;
        }
        if (!w[0].equals("run") || w.length != 3) {
          System.out.println(
              json.writeValueAsString(Map.of("error", "expected: run RATE SECONDS")));
        } else {
          System.out.println(
              json.writeValueAsString(
                  floor.run(Double.parseDouble(w[1]), Double.parseDouble(w[2]))));
        }
        System.out.flush();
      }
    } finally {
      deleteTopics(settings.get("kafka.bootstrap"));
    }
  }
}
