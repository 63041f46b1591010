package io.brokerstream.streams;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderCommand;
import io.brokerstream.avro.OrderTrigger;
import io.brokerstream.kafka.ClientLogin;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.serde.RestSchemaRegistry;
import io.brokerstream.streams.gateway.Gateway;
import io.brokerstream.streams.gateway.KeyLocations;
import io.brokerstream.streams.gateway.OrderSubmitter;
import io.brokerstream.streams.gateway.PendingOrders;
import io.brokerstream.streams.gateway.ResultWaiters;
import io.brokerstream.streams.metrics.AppMetrics;
import io.brokerstream.streams.topology.FastTriggers;
import io.brokerstream.streams.topology.LocalResults;
import io.brokerstream.streams.topology.OrderTopology;
import io.brokerstream.streams.topology.ReferenceCache;
import io.brokerstream.streams.topology.ReferenceLetters;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker's order flow: the Kafka Streams topology and the HTTP gateway in one process.
 *
 * <pre>java -jar streams.jar [--config FILE]</pre>
 *
 * Settings: broker-defaults.properties, overridden by the file and by BROKER_* variables.
 */
public final class BrokerApp {
  private static final Logger log = LoggerFactory.getLogger(BrokerApp.class);
  private static final int THREAD_REPLACEMENTS = 5;

  private BrokerApp() {}

  private static void closeQuietly(String what, Runnable close) {
    try {
      close.run();
    } catch (RuntimeException | LinkageError e) {
      log.error("closing the {} failed", what, e);
    }
  }

  public static void main(String[] args) throws Exception {
    Path configFile = args.length == 2 && args[0].equals("--config") ? Path.of(args[1]) : null;
    AppSettings settings = AppSettings.load(configFile, System.getenv());

    RestSchemaRegistry registry = new RestSchemaRegistry(settings.get("registry.url"));
    AppSerdes serdes = new AppSerdes(registry, settings.getBoolean("registry.auto-register"));
    ResultWaiters waiters = new ResultWaiters();
    PendingOrders pending =
        new PendingOrders(
            settings.getInt("gateway.pending-capacity"),
            settings.getLong("gateway.pending-ttl-ms"),
            System::currentTimeMillis);
    Properties props = StreamsProperties.of(settings, serdes.deadLetters());
    ReferenceCache cache = new ReferenceCache();
    LocalResults results = new LocalResults();
    FastTriggers fastTriggers =
        settings.getBoolean("orders.fast-triggers")
            ? new FastTriggerProducer(
                settings.get("kafka.bootstrap"),
                ClientLogin.load(settings.get("kafka.login")),
                serdes.of(OrderTrigger.class).serializer())
            : FastTriggers.NONE;
    // Results committed past the group's offset, read by a member task as it starts (ResultsTail).
    KafkaResultsTail resultsTail =
        new KafkaResultsTail(
            settings.get("kafka.bootstrap"),
            ClientLogin.load(settings.get("kafka.login")),
            settings.get("application.id"),
            serdes.result().deserializer());
    ReferenceLetters referenceLetters =
        new ReferenceLetterProducer(
            settings.get("kafka.bootstrap"),
            ClientLogin.load(settings.get("kafka.login")),
            serdes.deadLetter().serializer());
    AppMetrics metrics = new AppMetrics();
    Topology topology =
        OrderTopology.build(
            settings,
            serdes,
            props,
            (key, result) -> {
              metrics.result(result.getStatus().name(), pending.decided(key));
              waiters.complete(key, result);
            },
            cache,
            fastTriggers,
            results,
            resultsTail,
            referenceLetters);
    log.info("topology:\n{}", topology.describe());

    KafkaStreams streams = new KafkaStreams(topology, props);
    Path stateDir = Path.of(settings.get("state.dir"));
    LocalState.rebuildIfTopologyChanged(streams, topology, stateDir);
    LocalState.dropGlobalStateUnlessClosedCleanly(stateDir, settings.get("application.id"));
    CountDownLatch stopped = new CountDownLatch(1);
    AtomicInteger replacements = new AtomicInteger();
    // A thread that dies of a transient error is replaced a few times; then the app stops, loudly.
    streams.setUncaughtExceptionHandler(
        e -> {
          log.error("stream thread failed", e);
          return replacements.incrementAndGet() <= THREAD_REPLACEMENTS
              ? StreamThreadExceptionResponse.REPLACE_THREAD
              : StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
    // where each key's task runs, kept between rebalances: every one passes through a state change
    KeyLocations locations = new KeyLocations(KeyLocations.of(streams, topology.describe()));
    streams.setStateListener(
        (now, before) -> {
          locations.forget();
          log.info("state {} -> {}", before, now);
          if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
            stopped.countDown();
          }
        });
    OrderSubmitter submitter =
        new OrderSubmitter(
            settings.get("kafka.bootstrap"),
            ClientLogin.load(settings.get("gateway.kafka-login")),
            AvroCodec.specific(
                Order.class, registry, settings.getBoolean("registry.auto-register")),
            AvroCodec.specific(
                OrderCommand.class, registry, settings.getBoolean("registry.auto-register")),
            settings.getInt("gateway.linger-ms"),
            settings.get("gateway.compression"),
            settings.getLong("gateway.max-block-ms"));
    if (!submitter.warm(30_000)) {
      log.warn(
          "the orders topics' metadata or schema ids are not known yet; the first orders wait");
    }
    Gateway gateway =
        new Gateway(
            settings, streams, locations, submitter, waiters, pending, cache, results, metrics);
    metrics.withJvmAndKafka(streams::metrics);
    metrics.serve(settings.get("metrics.host"), settings.getInt("metrics.port"));
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  log.info("shutting down");
                  // Each part closes whatever another one threw: Kafka Streams above all must
                  // close, or its state is left without checkpoints and the next start rebuilds it
                  // from the changelogs.
                  closeQuietly("gateway", gateway::close);
                  closeQuietly("metrics", metrics::close);
                  closeQuietly("order producer", submitter::close);
                  // Leaving the group lets a restarted instance take the partitions at once instead
                  // of waiting out this member's session.
                  closeQuietly(
                      "kafka streams",
                      () -> {
                        boolean closed =
                            streams.close(
                                CloseOptions.groupMembershipOperation(
                                        CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                                    .withTimeout(Duration.ofSeconds(30)));
                        if (closed) {
                          try {
                            LocalState.markClosedCleanly(stateDir);
                          } catch (IOException e) {
                            log.warn("cannot mark the close as clean", e);
                          }
                        } else {
                          log.warn("kafka streams did not close within 30 s");
                        }
                      });
                  closeQuietly("fast trigger producer", fastTriggers::close);
                  closeQuietly("reference letter producer", referenceLetters::close);
                  closeQuietly("results tail reader", resultsTail::close);
                  stopped.countDown();
                },
                "shutdown"));

    streams.start();
    gateway.start();
    stopped.await();
    if (streams.state() == KafkaStreams.State.ERROR) {
      log.error("the order flow stopped on an error");
      System.exit(1);
    }
  }
}
