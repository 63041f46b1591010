package io.brokerstream.streams.topology;

import io.brokerstream.avro.Account;
import io.brokerstream.avro.InstrumentStatus;
import io.brokerstream.avro.OrderCommand;
import io.brokerstream.avro.OrderEvent;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.OrderTrigger;
import io.brokerstream.avro.Position;
import io.brokerstream.avro.PriceControl;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.avro.RestingOrder;
import io.brokerstream.avro.UnrealizedPnl;
import io.brokerstream.kafka.MemberPartition;
import io.brokerstream.money.Micros;
import io.brokerstream.pricing.MarketModel;
import io.brokerstream.rules.BoundedLetters;
import io.brokerstream.rules.DecisionLimits;
import io.brokerstream.rules.OrderDecider;
import io.brokerstream.rules.PriceBand;
import io.brokerstream.rules.ReferenceChecks;
import io.brokerstream.rules.TickRules;
import io.brokerstream.streams.AppSerdes;
import io.brokerstream.streams.AppSettings;
import io.brokerstream.streams.Topics;
import io.brokerstream.streams.metrics.DeadLetterCount;
import io.brokerstream.streams.state.HashKeyValueStore;
import io.brokerstream.streams.state.StateSerdes;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.function.BiConsumer;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * The order flow, top to bottom:
 *
 * <ol>
 *   <li>reference data and the latest prices as global stores, so any instance can check any order
 *       and the gateway can answer from any instance;
 *   <li>price ticks checked (a refused one is dead-lettered with its fault) and the accepted ones
 *       folded to the latest per instrument between commits, into prices.latest, which both the
 *       order flow and the P&L job price with;
 *   <li>orders, keyed by member, decided one by one in the member's task against its positions (and
 *       the cash they moved), risk and the order ids it already decided, emitting results (with the
 *       P&L a fill realized) and positions;
 *   <li>working (DAY, GTC) limit and stop orders on the book of their equity, beside its ticks; a
 *       crossed one goes back to its member's task (order-triggers), as do a member's cancels and
 *       amends (order-commands), and is decided there; DAY orders expire there at their exchange's
 *       close;
 *   <li>results read back, in the member's task, into a store by member|order id: the gateway's
 *       reads and long polls, and the order ids the task decided.
 * </ol>
 */
public final class OrderTopology {
  private OrderTopology() {}

  public static Topology build(
      AppSettings settings,
      AppSerdes serdes,
      Properties streamsProps,
      BiConsumer<String, OrderResult> onResult) {
    return build(
        settings,
        serdes,
        streamsProps,
        onResult,
        new ReferenceCache(),
        FastTriggers.NONE,
        new LocalResults(),
        ResultsTail.NONE);
  }

  /**
   * With the cache of decoded reference data the gateway shares (API keys, members), where the book
   * sends its triggers' fast copies, where the results stores are found by the gateway, and what
   * reads a starting member task's committed results past its group's offset.
   */
  public static Topology build(
      AppSettings settings,
      AppSerdes serdes,
      Properties streamsProps,
      BiConsumer<String, OrderResult> onResult,
      ReferenceCache cache,
      FastTriggers fast,
      LocalResults results,
      ResultsTail tail) {
    return build(
        settings,
        serdes,
        streamsProps,
        onResult,
        cache,
        fast,
        results,
        tail,
        ReferenceLetters.NONE);
  }

  /** The same, with where refused reference records' dead letters go. */
  public static Topology build(
      AppSettings settings,
      AppSerdes serdes,
      Properties streamsProps,
      BiConsumer<String, OrderResult> onResult,
      ReferenceCache cache,
      FastTriggers fast,
      LocalResults results,
      ResultsTail tail,
      ReferenceLetters letters) {
    Serde<String> keys = Serdes.String();
    boolean inMemory = "in_memory".equals(settings.get("stores.member"));
    StreamsBuilder builder = new StreamsBuilder();

    // Reference data and latest prices as global stores: a change in Postgres reaches validation
    // (and the gateway's key lookups) through Debezium; the updaters also drop what the cache of
    // decoded values holds for a key.
    globalStore(builder, StoreNames.MEMBERS, Topics.REF_MEMBERS, serdes.member(), cache);
    globalStore(builder, StoreNames.API_KEYS, Topics.REF_API_KEYS, serdes.apiKey(), cache);
    // Model inputs are checked again (Postgres checks them where they enter): a record written
    // around it with a NaN volatility or an absurd multiplier is refused and dead-lettered.
    long maxPrice = Micros.parse(settings.get("orders.max-price"));
    String application = settings.get("application.id");
    checkedStore(
        builder,
        StoreNames.INSTRUMENTS,
        Topics.REF_INSTRUMENTS,
        serdes.instrument(),
        cache,
        i -> ReferenceChecks.problem(i, maxPrice),
        letters,
        application);
    checkedStore(
        builder,
        StoreNames.EQUITY_STARTS,
        Topics.REF_EQUITY_STARTS,
        serdes.equityStart(),
        cache,
        ReferenceChecks::problem,
        letters,
        application);
    globalStore(builder, StoreNames.PRICES, Topics.PRICES_LATEST, serdes.tick(), cache);
    // Accounts keep an index by member too, for the member's deposited cash.
    builder.addGlobalStore(
        Stores.keyValueStoreBuilder(
                Stores.persistentKeyValueStore(StoreNames.ACCOUNTS), keys, StateSerdes.accounts())
            .withLoggingDisabled(),
        Topics.REF_ACCOUNTS,
        Consumed.<String, Account>with(keys, serdes.account()),
        () -> new AccountsStoreUpdater(cache));

    // A tick is a feed's claim: check it before it may price anything; refused ones are kept with
    // their fault. A price in doubt halts its instrument (held ticks price nothing) until the feed
    // confirms a level or an operator resumes it; halts and resumptions go to prices.status, which
    // the decisions read as a global store.
    TickRules tickRules = new TickRules(Micros.parse(settings.get("orders.max-price")));
    PriceBand band =
        new PriceBand(
            settings.getDouble("ticks.max-jump-factor"),
            settings.getDouble("ticks.halt-confirm-fraction"),
            settings.getInt("ticks.halt-confirm-ticks"));
    globalStore(
        builder,
        StoreNames.PRICE_STATUS,
        Topics.PRICES_STATUS,
        serdes.of(InstrumentStatus.class),
        cache);
    // Margin from the marks: each member's unrealized loss as the P&L flow last computed it. In
    // memory: a few hundred members, rewritten every window, re-read whole from the compacted topic
    // at a start.
    builder.addGlobalStore(
        Stores.keyValueStoreBuilder(
                Stores.inMemoryKeyValueStore(StoreNames.MEMBER_MARKS),
                keys,
                serdes.of(UnrealizedPnl.class))
            .withLoggingDisabled(),
        Topics.PNL_MEMBERS,
        Consumed.with(keys, serdes.of(UnrealizedPnl.class)),
        () -> new GlobalStoreUpdater<UnrealizedPnl>(StoreNames.MEMBER_MARKS, cache));
    // Halts are few and rare: in memory, changelogged, so a restarted task keeps them.
    builder.addStateStore(
        Stores.keyValueStoreBuilder(
                Stores.inMemoryKeyValueStore(StoreNames.PRICE_HALTS), keys, StateSerdes.halts())
            .withCachingDisabled());
    Map<String, KStream<String, TickValidator.Checked>> ticks =
        builder.stream(Topics.PRICE_TICKS, Consumed.with(keys, serdes.tick()))
            .mapValues(tick -> (SpecificRecord) tick, Named.as("tick-in"))
            .merge(
                builder.stream(
                        Topics.PRICES_CONTROLS, Consumed.with(keys, serdes.of(PriceControl.class)))
                    .mapValues(control -> (SpecificRecord) control, Named.as("control-in")),
                Named.as("ticks-and-controls"))
            .processValues(
                () ->
                    new TickValidator(
                        tickRules,
                        band,
                        cache,
                        serdes.tickCodec(),
                        serdes.codec(PriceControl.class),
                        settings.get("application.id")),
                Named.as("validate-ticks"),
                StoreNames.PRICE_HALTS)
            .split(Named.as("ticks-"))
            .branch((id, checked) -> checked.tick() != null, Branched.as("accepted"))
            .branch((id, checked) -> checked.status() != null, Branched.as("status"))
            .defaultBranch(Branched.as("refused"));
    ticks
        .get("ticks-status")
        .mapValues(TickValidator.Checked::status, Named.as("status-change"))
        .to(Topics.PRICES_STATUS, Produced.with(keys, serdes.of(InstrumentStatus.class)));
    ticks
        .get("ticks-refused")
        .mapValues(TickValidator.Checked::refused, Named.as("refused-tick"))
        .peek(
            (key, letter) ->
                DeadLetterCount.letter(letter.getSourceTopic(), letter.getErrorClass()),
            Named.as("refused-tick-count"))
        // the feed's key, cut to a size any topic takes (the letter keeps up to 1 KB of it)
        .selectKey((key, letter) -> BoundedLetters.clip(key, 64), Named.as("refused-tick-key"))
        .to(Topics.DEAD_TICKS, Produced.with(keys, serdes.deadLetter()));
    // Ticks arrive far faster than prices need to change for pricing: keep the latest per
    // instrument in a cached table and emit it at most once a commit, into the compacted
    // prices.latest. The table's store is in memory: nothing reads it but the cache's flush, and
    // in RocksDB every flushed tick was a write a tenth of the stream thread's time under ticks.
    KStream<String, PriceTick> accepted =
        ticks
            .get("ticks-accepted")
            .mapValues(TickValidator.Checked::tick, Named.as("accepted-tick"));
    accepted
        .toTable(
            Materialized.<String, PriceTick>as(HashKeyValueStore.supplier(StoreNames.LATEST_TICKS))
                .withKeySerde(keys)
                .withValueSerde(serdes.tick())
                .withLoggingDisabled()
                .withCachingEnabled())
        .toStream()
        .to(Topics.PRICES_LATEST, Produced.with(keys, serdes.tick()));

    // The book of working orders, beside the ticks that cross them: entries from the member tasks
    // and the accepted ticks meet in one task per equity; crossed orders go back to their member's
    // task.
    OrderDecider decider = new OrderDecider(MarketModel.load().pricer(), limits(settings));
    builder.addStateStore(
        Stores.keyValueStoreBuilder(
                Stores.persistentKeyValueStore(StoreNames.RESTING_BOOK),
                keys,
                StateSerdes.resting())
            .withCachingDisabled());
    builder.stream(Topics.ORDERS_RESTING, Consumed.with(keys, serdes.of(RestingOrder.class)))
        .mapValues(entry -> (SpecificRecord) entry, Named.as("book-entry"))
        .merge(
            accepted.mapValues(tick -> (SpecificRecord) tick, Named.as("book-tick")),
            Named.as("book-input"))
        .process(
            () -> new BookProcessor(decider, cache, fast),
            Named.as("book"),
            StoreNames.RESTING_BOOK)
        .to(Topics.ORDER_TRIGGERS, Produced.with(keys, serdes.of(OrderTrigger.class)));

    Topology topology = builder.build(streamsProps);

    // The decision: one order at a time per member, exactly once; a working order's trigger or
    // cancel in the same task, on the same stores.
    MarketCalendar calendar =
        new MarketCalendar(
            settings.getPairs("orders.market-close"), settings.get("orders.market-close-default"));
    ExpiryChecks checks =
        new ExpiryChecks(
            calendar,
            settings.getLong("orders.expiry-check-min-ms"),
            settings.getLong("orders.expiry-check-max-ms"));
    topology
        .addSource(
            "orders-source", keys.deserializer(), serdes.order().deserializer(), Topics.ORDERS)
        .addProcessor(
            "decide", () -> new OrderProcessor(decider, calendar, cache, tail), "orders-source")
        // Positions (with the cash their fills moved) are many and mostly written once per commit:
        // no record cache in front of them. Their changelog is the positions topic (Avro, what the
        // P&L job and the Postgres sink read), so a fill writes its position once. A member's risk
        // is a sum over its positions: no changelog, summed again when the task starts.
        .addStateStore(positionsStore(inMemory, serdes), "decide")
        .addStateStore(totalsStore(StoreNames.MEMBER_RISK, StateSerdes.risk()), "decide")
        .addSource(
            "commands-source",
            keys.deserializer(),
            serdes.of(OrderCommand.class).deserializer(),
            Topics.ORDER_COMMANDS)
        .addSource(
            "triggers-source",
            keys.deserializer(),
            serdes.of(OrderTrigger.class).deserializer(),
            Topics.ORDER_TRIGGERS)
        .addSource(
            "fast-triggers-source",
            keys.deserializer(),
            serdes.of(OrderTrigger.class).deserializer(),
            Topics.ORDER_TRIGGERS_FAST)
        .addProcessor(
            "working",
            () -> new WorkingOrderProcessor(decider, cache, checks),
            "commands-source",
            "triggers-source",
            "fast-triggers-source")
        .connectProcessorAndStateStores("working", StoreNames.POSITIONS, StoreNames.MEMBER_RISK)
        // Working orders: few next to positions, each written when it rests and when it leaves.
        .addStateStore(
            memberStore(StoreNames.OPEN_ORDERS, false, StateSerdes.openOrders()),
            "decide",
            "working")
        // The buying power they hold, a sum over them like risk over positions.
        .addStateStore(
            totalsStore(StoreNames.MEMBER_RESERVED, StateSerdes.micros()), "decide", "working")
        .addStateStore(
            memberStore(StoreNames.ORDER_EXPIRIES, false, StateSerdes.micros()),
            "decide",
            "working")
        // Results go to their member's partition, so this task reads its own back (below).
        .addSink(
            Ledger.RESULTS_SINK,
            Topics.ORDER_RESULTS,
            keys.serializer(),
            serdes.result().serializer(),
            (topic, key, result, partitions) ->
                Optional.of(Set.of(MemberPartition.ofKey(key, partitions))),
            "decide",
            "working")
        .addSink(
            Ledger.EVENTS_SINK,
            Topics.ORDER_EVENTS,
            keys.serializer(),
            serdes.of(OrderEvent.class).serializer(),
            "decide",
            "working")
        .addSink(
            Ledger.RESTING_SINK,
            Topics.ORDERS_RESTING,
            keys.serializer(),
            serdes.of(RestingOrder.class).serializer(),
            "decide",
            "working");

    // Results by member|order id, read back from the committed order-results topic, which is also
    // what the store is restored from; each wakes the gateway's long polls waiting for it. In the
    // member task (the topic is partitioned by member): what the task decided is what it has read
    // back, plus what it emitted since (RESULTS_UNREAD), so an order id needs no store of its own.
    topology
        .addReadOnlyStateStore(
            Stores.keyValueStoreBuilder(
                    Stores.persistentKeyValueStore(StoreNames.ORDER_RESULTS), keys, serdes.result())
                .withCachingDisabled(),
            "results-source",
            null,
            keys.deserializer(),
            serdes.result().deserializer(),
            Topics.ORDER_RESULTS,
            "results",
            () -> new ResultsProcessor(results, onResult))
        .addStateStore(
            Stores.keyValueStoreBuilder(
                    HashKeyValueStore.pointLookups(StoreNames.RESULTS_UNREAD),
                    keys,
                    StateSerdes.micros())
                .withCachingDisabled()
                .withLoggingDisabled(),
            "results",
            "decide",
            "working")
        .connectProcessorAndStateStores("decide", StoreNames.ORDER_RESULTS)
        .connectProcessorAndStateStores("working", StoreNames.ORDER_RESULTS);
    return topology;
  }

  /** The broker's own bounds on a decision, from the settings. */
  static DecisionLimits limits(AppSettings settings) {
    return new DecisionLimits(
        Micros.parse(settings.get("orders.max-price")),
        settings.getLong("orders.max-quantity"),
        settings.getLong("orders.max-price-age-ms"),
        settings.getLong("risk.marks-max-age-ms"),
        settings.getDouble("orders.limit-band-factor"));
  }

  private static <V> void checkedStore(
      StreamsBuilder builder,
      String name,
      String topic,
      Serde<V> values,
      ReferenceCache cache,
      java.util.function.Function<V, String> check,
      ReferenceLetters letters,
      String application) {
    builder.addGlobalStore(
        Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(name), Serdes.String(), values)
            .withLoggingDisabled(),
        topic,
        Consumed.with(Serdes.String(), values),
        () -> new GlobalStoreUpdater<V>(name, cache, check, letters, application));
  }

  private static <V> void globalStore(
      StreamsBuilder builder, String name, String topic, Serde<V> values, ReferenceCache cache) {
    builder.addGlobalStore(
        Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(name), Serdes.String(), values)
            .withLoggingDisabled(),
        topic,
        Consumed.with(Serdes.String(), values),
        () -> new GlobalStoreUpdater<V>(name, cache));
  }

  /**
   * Compacted eagerly, like every latest-per-key topic a reader starts from the beginning of: a
   * restoring task or the P&L job reads about one record per open position, not every fill.
   */
  static final Map<String, String> POSITIONS_TOPIC_CONFIG =
      Map.of("segment.ms", "60000", "min.cleanable.dirty.ratio", "0.1");

  private static StoreBuilder<KeyValueStore<String, Position>> positionsStore(
      boolean inMemory, AppSerdes serdes) {
    return memberStore(StoreNames.POSITIONS, inMemory, serdes.position())
        .withLoggingEnabled(POSITIONS_TOPIC_CONFIG);
  }

  /**
   * A member's total over other stores of its task (MemberTotals): in memory, no changelog and no
   * record cache (the cache only spared changelog writes), summed again whenever the task starts.
   */
  private static <V> StoreBuilder<KeyValueStore<String, V>> totalsStore(
      String name, Serde<V> values) {
    return Stores.keyValueStoreBuilder(HashKeyValueStore.supplier(name), Serdes.String(), values)
        .withCachingDisabled()
        .withLoggingDisabled();
  }

  private static <V> StoreBuilder<KeyValueStore<String, V>> memberStore(
      String name, boolean inMemory, Serde<V> values) {
    KeyValueBytesStoreSupplier supplier =
        inMemory ? HashKeyValueStore.supplier(name) : Stores.persistentKeyValueStore(name);
    // Changelogged: a restarted or moved task rebuilds exactly the committed state. No record
    // cache: each is written about once per key per commit.
    return Stores.keyValueStoreBuilder(supplier, Serdes.String(), values).withCachingDisabled();
  }
}
