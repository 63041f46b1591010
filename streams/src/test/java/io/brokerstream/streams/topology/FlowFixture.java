package io.brokerstream.streams.topology;

import io.brokerstream.avro.Account;
import io.brokerstream.avro.DeadLetter;
import io.brokerstream.avro.EquityStart;
import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.InstrumentStatus;
import io.brokerstream.avro.Member;
import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderCommand;
import io.brokerstream.avro.OrderEvent;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.OrderTrigger;
import io.brokerstream.avro.Position;
import io.brokerstream.avro.PriceControl;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.avro.Side;
import io.brokerstream.avro.UnrealizedPnl;
import io.brokerstream.money.Micros;
import io.brokerstream.rules.PositionState;
import io.brokerstream.rules.RiskState;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.serde.InMemorySchemaRegistry;
import io.brokerstream.streams.AppSerdes;
import io.brokerstream.streams.AppSettings;
import io.brokerstream.streams.StreamsProperties;
import io.brokerstream.streams.Topics;
import io.brokerstream.streams.state.BookedPosition;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;

/** The order topology in a TopologyTestDriver, with helpers that speak the domain. */
final class FlowFixture implements AutoCloseable {
  static final Instant NOW = Instant.parse("2026-11-20T15:00:00Z");

  final AppSerdes serdes;
  final TopologyTestDriver driver;
  final List<OrderResult> notified = new ArrayList<>();
  final List<DeadLetter> referenceLetters = new ArrayList<>();
  final LocalResults localResults = new LocalResults();
  private final Path stateDir;
  private final TestInputTopic<String, Member> members;
  private final TestInputTopic<String, Account> accounts;
  private final TestInputTopic<String, Instrument> instruments;
  private final TestInputTopic<String, EquityStart> starts;
  private final TestInputTopic<String, PriceTick> latestPrices;
  final TestInputTopic<String, PriceTick> ticks;
  final TestInputTopic<String, Order> orders;
  final TestInputTopic<String, byte[]> rawOrders;
  final TestOutputTopic<String, OrderResult> results;
  final TestOutputTopic<String, Position> positions;
  final TestOutputTopic<String, PriceTick> pricesOut;
  final TestOutputTopic<String, DeadLetter> deadLetters;
  final TestOutputTopic<String, DeadLetter> deadTicks;
  final TestInputTopic<String, OrderCommand> commands;
  final TestInputTopic<String, OrderTrigger> triggersIn;
  final TestInputTopic<String, OrderTrigger> fastTriggersIn;
  final TestOutputTopic<String, OrderEvent> events;
  final TestOutputTopic<String, OrderTrigger> triggers;
  final TestInputTopic<String, PriceControl> controls;
  final TestInputTopic<String, UnrealizedPnl> memberMarks;
  final TestOutputTopic<String, InstrumentStatus> statuses;
  private int orderNo;
  private long tickNo = 100;

  FlowFixture() {
    this(Map.of());
  }

  FlowFixture(Map<String, String> settingOverrides) {
    this(settingOverrides, FastTriggers.NONE);
  }

  /**
   * With the book's fast copies of its triggers sent to `fast` (the test pipes them in when it
   * likes).
   */
  FlowFixture(Map<String, String> settingOverrides, FastTriggers fast) {
    try {
      stateDir = Files.createTempDirectory("flow-test");
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
    // Tables of cases send orders at any broker time against prices stamped NOW: the age of a price
    // is
    // its own test's subject (StalePricesTest), which sets the bound again.
    Map<String, String> overrides =
        new HashMap<>(Map.of("state.dir", stateDir.toString(), "orders.max-price-age-ms", "0"));
    overrides.putAll(settingOverrides);
    AppSettings settings = AppSettings.of(overrides);
    InMemorySchemaRegistry registry = new InMemorySchemaRegistry();
    serdes = new AppSerdes(registry, true);
    Properties props = StreamsProperties.of(settings, serdes.deadLetters());
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    driver =
        new TopologyTestDriver(
            OrderTopology.build(
                settings,
                serdes,
                props,
                (id, r) -> notified.add(r),
                new ReferenceCache(),
                fast,
                localResults,
                ResultsTail.NONE,
                referenceLetters::add),
            props,
            NOW);
    StringSerializer keys = new StringSerializer();
    members = driver.createInputTopic(Topics.REF_MEMBERS, keys, serdes.member().serializer());
    accounts = driver.createInputTopic(Topics.REF_ACCOUNTS, keys, serdes.account().serializer());
    instruments =
        driver.createInputTopic(Topics.REF_INSTRUMENTS, keys, serdes.instrument().serializer());
    starts =
        driver.createInputTopic(Topics.REF_EQUITY_STARTS, keys, serdes.equityStart().serializer());
    latestPrices = driver.createInputTopic(Topics.PRICES_LATEST, keys, serdes.tick().serializer());
    ticks = driver.createInputTopic(Topics.PRICE_TICKS, keys, serdes.tick().serializer());
    orders = driver.createInputTopic(Topics.ORDERS, keys, serdes.order().serializer());
    rawOrders = driver.createInputTopic(Topics.ORDERS, keys, new ByteArraySerializer());
    StringDeserializer keyOut = new StringDeserializer();
    results =
        driver.createOutputTopic(Topics.ORDER_RESULTS, keyOut, serdes.result().deserializer());
    positions =
        driver.createOutputTopic(Topics.POSITIONS, keyOut, serdes.position().deserializer());
    pricesOut =
        driver.createOutputTopic(Topics.PRICES_LATEST, keyOut, serdes.tick().deserializer());
    AvroCodec<DeadLetter> dlq = serdes.deadLetters();
    deadLetters =
        driver.createOutputTopic(Topics.DEAD_LETTERS, keyOut, (topic, bytes) -> dlq.decode(bytes));
    deadTicks =
        driver.createOutputTopic(Topics.DEAD_TICKS, keyOut, (topic, bytes) -> dlq.decode(bytes));
    commands =
        driver.createInputTopic(
            Topics.ORDER_COMMANDS, keys, serdes.of(OrderCommand.class).serializer());
    triggersIn =
        driver.createInputTopic(
            Topics.ORDER_TRIGGERS, keys, serdes.of(OrderTrigger.class).serializer());
    fastTriggersIn =
        driver.createInputTopic(
            Topics.ORDER_TRIGGERS_FAST, keys, serdes.of(OrderTrigger.class).serializer());
    events =
        driver.createOutputTopic(
            Topics.ORDER_EVENTS, keyOut, serdes.of(OrderEvent.class).deserializer());
    triggers =
        driver.createOutputTopic(
            Topics.ORDER_TRIGGERS, keyOut, serdes.of(OrderTrigger.class).deserializer());
    controls =
        driver.createInputTopic(
            Topics.PRICES_CONTROLS, keys, serdes.of(PriceControl.class).serializer());
    memberMarks =
        driver.createInputTopic(
            Topics.PNL_MEMBERS, keys, serdes.of(UnrealizedPnl.class).serializer());
    statuses =
        driver.createOutputTopic(
            Topics.PRICES_STATUS, keyOut, serdes.of(InstrumentStatus.class).deserializer());
  }

  /** A tick from the feed (event time NOW, in sequence). */
  FlowFixture feed(String equity, String price) {
    ticks.pipeInput(equity, tick(equity, price, ++tickNo), NOW);
    return this;
  }

  /** An operator's halt or resumption. */
  FlowFixture control(String equity, String action, String reason) {
    controls.pipeInput(
        equity,
        PriceControl.newBuilder()
            .setInstrumentId(equity)
            .setAction(action)
            .setOperator("ops")
            .setReason(reason)
            .setTs(NOW)
            .build(),
        NOW);
    return this;
  }

  // --- reference data
  // -----------------------------------------------------------------------------
  FlowFixture member(String id, String status, String creditLimit) {
    members.pipeInput(
        id,
        Member.newBuilder()
            .setMemberId(id)
            .setName(id)
            .setStatus(status)
            .setCreditLimit(money(creditLimit))
            .build());
    return this;
  }

  /** A member under a trading state and per-order limits (null: none). */
  FlowFixture member(
      String id, String state, Long maxQuantity, String maxNotional, Integer perSecond) {
    members.pipeInput(
        id,
        Member.newBuilder()
            .setMemberId(id)
            .setName(id)
            .setStatus("ACTIVE")
            .setCreditLimit(money("1000000"))
            .setTradingState(state)
            .setMaxOrderQuantity(maxQuantity)
            .setMaxOrderNotional(maxNotional == null ? null : money(maxNotional))
            .setMaxOrdersPerSecond(perSecond)
            .build());
    return this;
  }

  /** What the P&L flow says of a member's open positions: their loss, and when it computed it. */
  FlowFixture marks(String member, String loss, int positions, Instant computed) {
    memberMarks.pipeInput(
        member,
        UnrealizedPnl.newBuilder()
            .setScope(io.brokerstream.avro.PnlScope.MEMBER)
            .setMemberId(member)
            .setMarketValue(money("0"))
            .setCostBasis(money("0"))
            .setUnrealizedPnl(money(loss))
            .setUnrealizedLoss(money(loss))
            .setPositions(positions)
            .setWindowEnd(computed)
            .setComputedTs(computed)
            .build());
    return this;
  }

  FlowFixture deleteMember(String id) {
    members.pipeInput(id, null);
    return this;
  }

  FlowFixture account(String id, String member, String status, String cash, boolean shortAllowed) {
    accounts.pipeInput(
        id,
        Account.newBuilder()
            .setAccountId(id)
            .setMemberId(member)
            .setStatus(status)
            .setCashBalance(money(cash))
            .setShortAllowed(shortAllowed)
            .build());
    return this;
  }

  FlowFixture deleteAccount(String id) {
    accounts.pipeInput(id, null);
    return this;
  }

  FlowFixture equity(String id, String status) {
    instruments.pipeInput(
        id,
        Instrument.newBuilder()
            .setInstrumentId(id)
            .setSymbol(id)
            .setCurrency("USD")
            .setExchange("XNYS")
            .setName(id)
            .setInstrumentType("EQUITY")
            .setStatus(status)
            .setMultiplier(1)
            .build());
    return this;
  }

  FlowFixture option(
      String id, String underlying, String type, String style, String strike, LocalDate maturity) {
    instruments.pipeInput(
        id,
        Instrument.newBuilder()
            .setInstrumentId(id)
            .setSymbol(id)
            .setCurrency("USD")
            .setExchange("XCBO")
            .setName(id)
            .setInstrumentType("OPTION")
            .setStatus("ACTIVE")
            .setUnderlyingId(underlying)
            .setUnderlyingSymbol(underlying)
            .setMaturity(maturity)
            .setOptionType(type)
            .setStrike(money(strike))
            .setMultiplier(100)
            .setExerciseStyle(style)
            .build());
    return this;
  }

  /** An instrument record as a feed of reference data might send it, checked or not. */
  FlowFixture instrument(Instrument instrument) {
    instruments.pipeInput(instrument.getInstrumentId(), instrument);
    return this;
  }

  FlowFixture volatility(String equity, double sigma) {
    starts.pipeInput(
        equity,
        EquityStart.newBuilder()
            .setInstrumentId(equity)
            .setStartPrice(money("100"))
            .setVolatility(sigma)
            .build());
    return this;
  }

  FlowFixture price(String equity, String price) {
    latestPrices.pipeInput(equity, tick(equity, price, 1));
    return this;
  }

  /** A record of prices.latest as it is (its event time the tick's). */
  FlowFixture latest(PriceTick tick) {
    latestPrices.pipeInput(tick.getInstrumentId(), tick);
    return this;
  }

  static PriceTick tick(String equity, String price, long sequence) {
    return PriceTick.newBuilder()
        .setInstrumentId(equity)
        .setPrice(money(price))
        .setEventTs(NOW)
        .setSequence(sequence)
        .build();
  }

  /** The usual cast: member M1 with accounts A1 (may short) and A2 (may not), equity EQ1 at 100. */
  FlowFixture standard() {
    member("M1", "ACTIVE", "1000000")
        .account("A1", "M1", "ACTIVE", "500000", true)
        .account("A2", "M1", "ACTIVE", "250000", false)
        .equity("EQ1", "ACTIVE")
        .volatility("EQ1", 0.2)
        .price("EQ1", "100");
    return this;
  }

  // --- orders
  // -------------------------------------------------------------------------------------
  Order order(String account, String instrument, Side side, long quantity, String limit) {
    return Order.newBuilder()
        .setOrderId("o" + (++orderNo))
        .setAccountId(account)
        .setInstrumentId(instrument)
        .setSide(side)
        .setQuantity(quantity)
        .setLimitPrice(limit == null ? null : money(limit))
        .setShortSale(false)
        .setClientTs(NOW)
        .setTraceId(null)
        .build();
  }

  OrderResult send(String member, Order order) {
    return sendAt(member, order, NOW);
  }

  /** The order as the broker received it at `received` (its record's append time). */
  OrderResult sendAt(String member, Order order, Instant received) {
    orders.pipeInput(member, order, received);
    return results.readValue();
  }

  OrderResult send(String member, String account, String instrument, Side side, long quantity) {
    return send(member, order(account, instrument, side, quantity, null));
  }

  OrderResult buy(String account, String instrument, long quantity) {
    return send("M1", account, instrument, Side.BUY, quantity);
  }

  OrderResult sell(String account, String instrument, long quantity) {
    return send("M1", account, instrument, Side.SELL, quantity);
  }

  PositionState position(String account, String instrument) {
    BookedPosition booked = booked(account, instrument);
    return booked == null ? null : booked.state();
  }

  private BookedPosition booked(String account, String instrument) {
    Position stored =
        driver
            .<String, Position>getKeyValueStore(StoreNames.POSITIONS)
            .get(Topics.positionKey(account, instrument));
    return stored == null ? null : BookedPosition.of(stored);
  }

  RiskState risk(String member) {
    return driver.<String, RiskState>getKeyValueStore(StoreNames.MEMBER_RISK).get(member);
  }

  /** What the account's fills moved: the cash of its positions, summed as the gateway sums it. */
  long cash(String account) {
    long cash = 0;
    try (var it =
        driver
            .<String, Position>getKeyValueStore(StoreNames.POSITIONS)
            .prefixScan(account + "|", new StringSerializer())) {
      while (it.hasNext()) {
        cash = Math.addExact(cash, BookedPosition.of(it.next().value).cash());
      }
    }
    return cash;
  }

  static BigDecimal money(String text) {
    return Micros.toDecimal(Micros.parse(text));
  }

  static long micros(String text) {
    return Micros.parse(text);
  }

  @Override
  public void close() {
    driver.close();
    try (var files = Files.walk(stateDir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (java.io.IOException ignored) {
      // a temp folder
    }
  }
}
