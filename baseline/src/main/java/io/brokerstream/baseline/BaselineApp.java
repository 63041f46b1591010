package io.brokerstream.baseline;

import io.brokerstream.avro.DeadLetter;
import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.money.Micros;
import io.brokerstream.pricing.MarketModel;
import io.brokerstream.pricing.OptionPricer;
import io.brokerstream.rules.DecisionLimits;
import io.brokerstream.rules.OrderDecider;
import io.brokerstream.rules.PriceBand;
import io.brokerstream.rules.TickRules;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.serde.RestSchemaRegistry;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The baseline monolith: {@code orders.threads} order threads and {@code prices.threads} price
 * threads over one connection pool, plus /health and /metrics. Settings:
 * baseline-defaults.properties, the file BASELINE_CONFIG_FILE names, BASELINE_* variables.
 */
public final class BaselineApp {
  private static final Logger LOG = LoggerFactory.getLogger(BaselineApp.class);

  private BaselineApp() {}

  public static void main(String[] args) throws Exception {
    String file = System.getenv("BASELINE_CONFIG_FILE");
    BaselineSettings settings =
        BaselineSettings.load(
            file == null || file.isBlank() ? null : Path.of(file), System.getenv());
    int orderThreads = settings.getInt("orders.threads", 1);
    int priceThreads = settings.getInt("prices.threads", 0);

    RestSchemaRegistry registry = new RestSchemaRegistry(settings.get("registry.url"));
    boolean register = settings.getBoolean("registry.auto-register");
    Database db = new Database(settings);
    db.createTables();
    KafkaSetup kafka = new KafkaSetup(settings);
    OptionPricer pricer = MarketModel.load().pricer();
    long maxPrice = Micros.parse(settings.get("orders.max-price"));
    // the same bounds as the order flow's, but for margin from marks (the monolith keeps none) and
    // halts (its price threads hold a price in doubt; its order threads do not see the halt)
    OrderDecider decider =
        new OrderDecider(
            pricer,
            new DecisionLimits(
                maxPrice,
                settings.getLong("orders.max-quantity"),
                settings.getLong("orders.max-price-age-ms"),
                0,
                settings.getDouble("orders.limit-band-factor")));
    TickRules tickRules = new TickRules(maxPrice);
    PriceBand band =
        new PriceBand(
            settings.getDouble("ticks.max-jump-factor"),
            settings.getDouble("ticks.halt-confirm-fraction"),
            settings.getInt("ticks.halt-confirm-ticks", 3));
    AvroCodec<DeadLetter> letterCodec = AvroCodec.specific(DeadLetter.class, registry, register);
    DeadLetterRecords deadLetters =
        new DeadLetterRecords(letterCodec, settings.get("topics.dead-letters"));
    ReferenceLookups lookups =
        new ReferenceLookups(db, settings.getBoolean("orders.parallel-lookups"));
    Counters counters = new Counters();
    CountDownLatch assigned = new CountDownLatch(orderThreads + priceThreads);

    List<OrderConsumer> orderConsumers = new ArrayList<>();
    List<PriceConsumer> priceConsumers = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < orderThreads; i++) {
      OrderConsumer c =
          new OrderConsumer(
              i,
              settings,
              kafka,
              db,
              lookups,
              decider,
              AvroCodec.specific(Order.class, registry, register),
              AvroCodec.specific(OrderResult.class, registry, register),
              deadLetters,
              counters,
              assigned);
      orderConsumers.add(c);
      threads.add(new Thread(c, "orders-" + i));
    }
    for (int i = 0; i < priceThreads; i++) {
      PriceConsumer c =
          new PriceConsumer(
              i,
              settings,
              kafka,
              db,
              tickRules,
              band,
              pricer,
              AvroCodec.specific(PriceTick.class, registry, register),
              letterCodec,
              deadLetters,
              counters,
              assigned);
      priceConsumers.add(c);
      threads.add(new Thread(c, "prices-" + i));
    }
    HealthServer http =
        new HealthServer(
            settings.get("http.host"), settings.getInt("http.port", 0), assigned, counters);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  orderConsumers.forEach(OrderConsumer::stop);
                  priceConsumers.forEach(PriceConsumer::stop);
                  for (Thread t : threads) {
                    try {
                      t.join(30_000);
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  }
                  http.close();
                  lookups.close();
                  db.close();
                  LOG.info("baseline stopped: {}", counters.snapshot());
                },
                "shutdown"));
    threads.forEach(Thread::start);
    LOG.info(
        "baseline running: {} order threads, {} price threads, pool {}, schema {}, http {}:{}",
        orderThreads,
        priceThreads,
        settings.get("db.pool-size"),
        db.schema(),
        settings.get("http.host"),
        settings.get("http.port"));
  }
}
