package io.brokerstream.streams;

import io.brokerstream.avro.DeadLetter;
import io.brokerstream.kafka.ClientLogin;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.streams.errors.DeadLetterOnDeserializationError;
import io.brokerstream.streams.errors.DeadLetterOnProcessingError;
import io.brokerstream.streams.errors.DeadLetters;
import io.brokerstream.streams.errors.FailOnProductionError;
import io.brokerstream.streams.topology.BoundedRocksDb;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;

/** The Kafka Streams configuration of the order flow, from the app's settings. */
public final class StreamsProperties {
  private StreamsProperties() {}

  public static Properties of(AppSettings s, AvroCodec<DeadLetter> deadLetterCodec) {
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, s.get("application.id"));
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, s.get("kafka.bootstrap"));
    p.putAll(ClientLogin.load(s.get("kafka.login")));
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, s.getInt("stream.threads"));
    p.put(StreamsConfig.STATE_DIR_CONFIG, s.get("state.dir"));
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, s.getLong("commit.interval.ms"));
    p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, s.getLong("cache.bytes"));
    // Changelogs and repartition topics as replicated as the brokers' default (1, or 3 with three
    // brokers): a changelog on one broker would stop every transaction when that broker dies.
    p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, -1);
    // The results table reuses order-results as its changelog instead of writing every result
    // twice.
    p.put(StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG, StreamsConfig.OPTIMIZE);
    p.put(
        StreamsConfig.APPLICATION_SERVER_CONFIG,
        s.get("gateway.advertised-host") + ":" + s.getInt("gateway.port"));
    p.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, BoundedRocksDb.class);
    p.put(BoundedRocksDb.CACHE_BYTES, s.getLong("rocksdb.block-cache-bytes"));
    p.put(BoundedRocksDb.WRITE_BUFFER_BYTES, s.getLong("rocksdb.write-buffer-bytes"));
    p.put(
        BoundedRocksDb.INDEX_FILTER_HIGH_PRIORITY,
        s.getBoolean("rocksdb.index-filter-high-priority"));
    p.put(
        StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG,
        DeadLetterOnDeserializationError.class);
    p.put(
        StreamsConfig.PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG, DeadLetterOnProcessingError.class);
    p.put(StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG, FailOnProductionError.class);
    p.put(DeadLetters.CODEC_CONFIG, deadLetterCodec);
    p.put(DeadLetters.APPLICATION_CONFIG, s.get("application.id"));
    // A crashed instance's partitions move after 10 s instead of 45.
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 10_000);
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 2_000);
    // Few, large requests: on two cores the broker's CPU goes to requests more than to records. A
    // fetch waits up to fetch.max-wait-ms for fetch.min-bytes, so at a thousand orders a second the
    // consumer asks about 50 times a second, not once per record that arrives; under load the bytes
    // are there at once and nothing waits.
    p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.MAX_POLL_RECORDS_CONFIG), 2000);
    p.put(
        StreamsConfig.mainConsumerPrefix(ConsumerConfig.FETCH_MIN_BYTES_CONFIG),
        s.getInt("fetch.min-bytes"));
    p.put(
        StreamsConfig.mainConsumerPrefix(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG),
        s.getInt("fetch.max-wait-ms"));
    // Reference data and prices.latest (one fold per commit) need no millisecond freshness.
    p.put(StreamsConfig.globalConsumerPrefix(ConsumerConfig.FETCH_MIN_BYTES_CONFIG), 65_536);
    p.put(StreamsConfig.globalConsumerPrefix(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG), 100);
    // A transaction's records are sent by its commit at the latest (the commit flushes them):
    // lingering as long as a commit interval costs nothing a reader could see and makes each commit
    // one request.
    p.put(
        StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG),
        s.getLong("commit.interval.ms"));
    p.put(StreamsConfig.producerPrefix(ProducerConfig.BATCH_SIZE_CONFIG), 262_144);
    // Uncompressed: each new batch's LZ4 frame cost the stream thread more than its bytes cost the
    // broker, and the broker validates a compressed batch by decompressing it.
    p.put(StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG), "none");
    // One produce request in flight per broker. With pipelining, the first batch of a new
    // transaction can be refused with CONCURRENT_TRANSACTIONS (the last commit's markers are still
    // being written) while the batches behind it arrive and are refused as
    // OUT_OF_ORDER_SEQUENCE_NUMBER; the producer then stalls for seconds. Measured with every
    // service on (bench gateway, 1,000 orders/s): accept p99 6.3-7.5 s with five in flight, 0.6-2.6
    // s with one.
    p.put(StreamsConfig.producerPrefix(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION), 1);
    p.putAll(s.streamsOverrides());
    // Kafka Streams' default, pinned after the pass-through settings: a task waits for a partition
    // with known lag before it picks the next record by timestamp, so a member task reads its
    // results back before the orders that follow them (-1 would let a retry overtake its order's
    // result; a wait longer than 0 only adds latency).
    p.put(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG, 0L);
    return p;
  }
}
