package io.brokerstream.pnl;

import io.brokerstream.kafka.ClientLogin;
import java.time.Duration;
import java.util.Properties;
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
 * The unrealized P&L job: accepted prices, positions, option terms and volatilities from Kafka; P&L per
 * position, account and member to Kafka, exactly once (transactional sink committed on checkpoints).
 *
 * <pre>flink run -d flink-jobs-0.1.0.jar [--window.ms=1000 ...]</pre>
 */
public final class PnlJob {
  public static final String NAME = "brokerstream-pnl";

  private PnlJob() {}

  public static void main(String[] args) throws Exception {
    PnlSettings settings = PnlSettings.load(System.getenv(), args);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(runtimeConfig(settings));
    define(env, settings);
    env.executeAsync(NAME);
  }

  static Configuration runtimeConfig(PnlSettings settings) {
    Configuration conf = new Configuration();
    conf.setString("state.backend.type", settings.get("state.backend"));
    // The heap state is written whole on every checkpoint; Flink's 4 KB default buffer made that a
    // system call per few positions, a fifth of the job's CPU.
    conf.setString("execution.checkpointing.write-buffer-size", settings.get("checkpoint.write-buffer"));
    if (!settings.get("checkpoint.dir").isEmpty()) {
      conf.setString("execution.checkpointing.dir", settings.get("checkpoint.dir"));
    }
    return conf;
  }

  public static void define(StreamExecutionEnvironment env, PnlSettings settings) {
    env.setParallelism(settings.getInt("parallelism"));
    // Chained operators hand records over without a copy: no operator keeps or changes what it emitted.
    env.getConfig().enableObjectReuse();
    env.enableCheckpointing(settings.getLong("checkpoint.interval-ms"), CheckpointingMode.EXACTLY_ONCE);
    String bootstrap = settings.get("bootstrap.servers");
    String registry = settings.get("registry.url");
    String group = settings.get("group.id");

    OffsetsInitializer tickStart = switch (settings.get("ticks.start")) {
      case "earliest" -> OffsetsInitializer.earliest();
      case "latest" -> OffsetsInitializer.latest();
      default -> throw new IllegalArgumentException("ticks.start is latest or earliest");
    };
    // Accepted prices only: the streams app checks every raw tick and folds the accepted ones.
    Properties login = ClientLogin.load(settings.get("kafka.login"));
    DataStream<PnlInput> ticks = source(env, bootstrap, login, group, settings.get("ticks.topic"), tickStart,
        new InputSchemas.Ticks(registry));
    // The whole compacted changelogs: every open position and all reference data, on any fresh start.
    DataStream<PnlInput> positions = source(env, bootstrap, login, group, "positions", OffsetsInitializer.earliest(),
        new InputSchemas.Positions(registry));
    DataStream<PnlInput> instruments = source(env, bootstrap, login, group, "ref.instruments", OffsetsInitializer.earliest(),
        new InputSchemas.Instruments(registry));
    DataStream<PnlInput> volatilities = source(env, bootstrap, login, group, "ref.equity-starts",
        OffsetsInitializer.earliest(), new InputSchemas.Volatilities(registry));

    PnlPipeline.Outputs out = PnlPipeline.build(ticks.union(positions, instruments, volatilities), settings);
    String prefix = settings.get("transactional-id-prefix");
    out.positions().sinkTo(sink(settings, login, prefix + "-positions", PnlRecordSchema.POSITIONS))
        .name("position P&L to Kafka").uid("pnl-sink-positions");
    out.snapshots().sinkTo(sink(settings, login, prefix + "-snapshots", PnlRecordSchema.POSITION_SNAPSHOTS))
        .name("position P&L snapshots to Kafka").uid("pnl-sink-position-snapshots");
    out.rollUps().sinkTo(sink(settings, login, prefix + "-rollups", null))
        .name("roll-ups to Kafka").uid("pnl-sink-rollups");
  }

  /** A sink to {@code topic}, or to each record's own topic when null. */
  private static KafkaSink<PnlRecord> sink(PnlSettings settings, Properties login, String transactionalIdPrefix,
      String topic) {
    var records = KafkaRecordSerializationSchema.<PnlRecord>builder()
        .setKeySerializationSchema(new PnlRecordSchema.Keys())
        .setValueSerializationSchema(new PnlRecordSchema.Values(settings.get("registry.url"), topic));
    // a topic selector is wrapped in a cache looked up per record (hashing the record): a fixed topic
    // spares the position records that
    records = topic != null ? records.setTopic(topic) : records.setTopicSelector(PnlRecordSchema::topic);
    return KafkaSink.<PnlRecord>builder()
        // first: in some versions of the builder this replaces what was set before, and keeps the
        // object it is given, which the sink's own settings below then change: a copy per sink
        .setKafkaProducerConfig((Properties) login.clone())
        .setBootstrapServers(settings.get("bootstrap.servers"))
        .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
        .setTransactionalIdPrefix(transactionalIdPrefix)
        // longer than a checkpoint interval plus a restart, shorter than the broker's maximum (15 min)
        .setProperty("transaction.timeout.ms", String.valueOf(Duration.ofMinutes(10).toMillis()))
        .setProperty("linger.ms", "20")
        // a window writes every position of an equity at once: large batches mean fewer of them to
        // build, compress and acknowledge per record
        .setProperty("batch.size", "262144")
        .setProperty("compression.type", settings.get("sink.compression"))
        .setRecordSerializer(records.build())
        .build();
  }

  private static DataStream<PnlInput> source(StreamExecutionEnvironment env, String bootstrap, Properties login, String group,
      String topic, OffsetsInitializer start, InputSchemas.RegistryDeserializer<?> deserializer) {
    KafkaSource<PnlInput> source = KafkaSource.<PnlInput>builder()
        .setBootstrapServers(bootstrap)
        .setProperties(login)
        .setTopics(topic)
        .setGroupId(group)
        .setStartingOffsets(start)
        .setDeserializer(KafkaRecordDeserializationSchema.valueOnly(deserializer))
        // positions come from the streams app's transactions: only committed ones are real
        .setProperty("isolation.level", "read_committed")
        .setProperty("client.id.prefix", group + "-" + topic)
        .build();
    return env.fromSource(source, WatermarkStrategy.noWatermarks(), topic).uid("source-" + topic);
  }
}
