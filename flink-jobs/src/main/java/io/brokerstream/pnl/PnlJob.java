package io.brokerstream.pnl;

import io.brokerstream.kafka.ClientLogin;
import java.time.Duration;
import java.util.Properties;
import java.util.Set;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The unrealized P&L job: accepted prices, positions, option terms and volatilities from Kafka; the
 * marks of held instruments and P&L per account and member to Kafka. Every output is a latest value
 * per key (compacted topics), so it is written at least once, without transactions: visible as soon
 * as it is written, and a replay after a restore only writes values again (`sink.guarantee` chooses
 * exactly once, where every output then waits for the next checkpoint).
 *
 * <pre>flink run -d flink-jobs-0.1.0.jar [--window.ms=1000 ...]</pre>
 */
public final class PnlJob {
  public static final String NAME = "brokerstream-pnl";
  static final String REF_INSTRUMENTS = "ref.instruments";
  static final String REF_EQUITY_STARTS = "ref.equity-starts";

  private PnlJob() {}

  public static void main(String[] args) throws Exception {
    PnlSettings settings = PnlSettings.load(System.getenv(), args);
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(runtimeConfig(settings));
    define(env, settings);
    env.executeAsync(NAME);
  }

  static Configuration runtimeConfig(PnlSettings settings) {
    Configuration conf = new Configuration();
    conf.setString("state.backend.type", settings.get("state.backend"));
    // The heap state is written whole on every checkpoint; Flink's 4 KB default buffer made that a
    // system call per few positions, a fifth of the job's CPU.
    conf.setString(
        "execution.checkpointing.write-buffer-size", settings.get("checkpoint.write-buffer"));
    if (!settings.get("checkpoint.dir").isEmpty()) {
      conf.setString("execution.checkpointing.dir", settings.get("checkpoint.dir"));
    }
    return conf;
  }

  public static void define(StreamExecutionEnvironment env, PnlSettings settings) {
    env.setParallelism(settings.getInt("parallelism"));
    // Chained operators hand records over without a copy: no operator keeps or changes what it
    // emitted.
    env.getConfig().enableObjectReuse();
    env.enableCheckpointing(
        settings.getLong("checkpoint.interval-ms"), CheckpointingMode.EXACTLY_ONCE);
    String registry = settings.get("registry.url");

    OffsetsInitializer tickStart =
        switch (settings.get("ticks.start")) {
          case "earliest" -> OffsetsInitializer.earliest();
          case "latest" -> OffsetsInitializer.latest();
          default -> throw new IllegalArgumentException("ticks.start is latest or earliest");
        };
    // Accepted prices only: the streams app checks every raw tick and folds the accepted ones.
    Properties login = ClientLogin.load(settings.get("kafka.login"));
    DataStream<PnlInput> ticks =
        source(
            env,
            settings,
            login,
            settings.get("ticks.topic"),
            tickStart,
            new InputSchemas.Ticks(registry));
    // The whole compacted changelogs: every open position and all reference data, on any fresh
    // start.
    DataStream<PnlInput> positions =
        source(
            env,
            settings,
            login,
            settings.get("positions.topic"),
            OffsetsInitializer.earliest(),
            new InputSchemas.Positions(registry));
    DataStream<PnlInput> instruments =
        source(
            env,
            settings,
            login,
            REF_INSTRUMENTS,
            OffsetsInitializer.earliest(),
            new InputSchemas.Instruments(registry));
    DataStream<PnlInput> volatilities =
        source(
            env,
            settings,
            login,
            REF_EQUITY_STARTS,
            OffsetsInitializer.earliest(),
            new InputSchemas.Volatilities(registry));

    PnlPipeline.Outputs out =
        PnlPipeline.build(ticks.union(positions, instruments, volatilities), settings);
    String prefix = settings.get("transactional-id-prefix");
    out.marks()
        .sinkTo(
            sink(
                settings,
                login,
                prefix + "-marks",
                KafkaRecordSerializationSchema.<EquityMarksRecord>builder()
                    .setTopic(EquityMarksSchema.TOPIC)
                    .setKeySerializationSchema(new EquityMarksSchema.Keys())
                    .setValueSerializationSchema(
                        EquityMarksSchema.values(settings.get("registry.url")))
                    .build()))
        .name("marks to Kafka")
        .uid("pnl-sink-marks");
    out.rollUps()
        .sinkTo(
            sink(
                settings,
                login,
                prefix + "-rollups",
                KafkaRecordSerializationSchema.<PnlRecord>builder()
                    .setKeySerializationSchema(new PnlRecordSchema.Keys())
                    .setValueSerializationSchema(
                        new PnlRecordSchema.Values(settings.get("registry.url")))
                    .setTopicSelector(PnlRecordSchema::topic)
                    .build()))
        .name("roll-ups to Kafka")
        .uid("pnl-sink-rollups");
  }

  static DeliveryGuarantee guarantee(PnlSettings settings) {
    return switch (settings.get("sink.guarantee")) {
      case "at-least-once" -> DeliveryGuarantee.AT_LEAST_ONCE;
      case "exactly-once" -> DeliveryGuarantee.EXACTLY_ONCE;
      default ->
          throw new IllegalArgumentException(
              "sink.guarantee is at-least-once or exactly-once, got "
                  + settings.get("sink.guarantee"));
    };
  }

  private static <T> KafkaSink<T> sink(
      PnlSettings settings,
      Properties login,
      String transactionalIdPrefix,
      KafkaRecordSerializationSchema<T> records) {
    return KafkaSink.<T>builder()
        // first: in some versions of the builder this replaces what was set before, and keeps the
        // object it is given, which the sink's own settings below then change: a copy per sink
        .setKafkaProducerConfig((Properties) login.clone())
        .setBootstrapServers(settings.get("bootstrap.servers"))
        .setDeliveryGuarantee(guarantee(settings))
        .setTransactionalIdPrefix(transactionalIdPrefix)
        // longer than a checkpoint interval plus a restart, shorter than the broker's maximum (15
        // min)
        .setProperty("transaction.timeout.ms", String.valueOf(Duration.ofMinutes(10).toMillis()))
        // windows end at several instants of each second (window.phases): a batch gathers the
        // equities of one instant, and lingering gathers several instants per request
        .setProperty("linger.ms", settings.get("sink.linger-ms"))
        // a window writes the marks of an equity's held instruments at once: large batches mean
        // fewer of them to build and acknowledge per record
        .setProperty("batch.size", "262144")
        .setProperty("compression.type", settings.get("sink.compression"))
        .setRecordSerializer(records)
        .build();
  }

  /** The reference topics the job reads: rare changes, so their fetches may wait longer. */
  static final Set<String> REFERENCE_TOPICS = Set.of(REF_INSTRUMENTS, REF_EQUITY_STARTS);

  /**
   * How long a fetch of {@code topic} waits for bytes before it answers with what there is (ms).
   */
  static String fetchMaxWaitMs(PnlSettings settings, String topic) {
    return settings.get(
        REFERENCE_TOPICS.contains(topic)
            ? "reference.fetch-max-wait-ms"
            : "source.fetch-max-wait-ms");
  }

  private static DataStream<PnlInput> source(
      StreamExecutionEnvironment env,
      PnlSettings settings,
      Properties login,
      String topic,
      OffsetsInitializer start,
      InputSchemas.RegistryDeserializer<?> deserializer) {
    String group = settings.get("group.id");
    KafkaSource<PnlInput> source =
        KafkaSource.<PnlInput>builder()
            .setBootstrapServers(settings.get("bootstrap.servers"))
            .setProperties(login)
            .setTopics(topic)
            .setGroupId(group)
            .setStartingOffsets(start)
            .setDeserializer(KafkaRecordDeserializationSchema.valueOnly(deserializer))
            // positions come from the streams app's transactions: only committed ones are real
            .setProperty("isolation.level", "read_committed")
            // a fetch waits for bytes rather than asking again per record: the windows are a second
            // long
            .setProperty("fetch.min.bytes", "65536")
            .setProperty("fetch.max.wait.ms", fetchMaxWaitMs(settings, topic))
            .setProperty("client.id.prefix", group + "-" + topic)
            .build();
    return env.fromSource(source, WatermarkStrategy.noWatermarks(), topic).uid("source-" + topic);
  }
}
