package io.brokerstream.streams.topology;

import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderEventType;
import io.brokerstream.avro.TimeInForce;
import io.brokerstream.rules.OrderDecider;
import io.brokerstream.rules.ReferenceData;
import io.brokerstream.rules.RiskState;
import io.brokerstream.streams.Topics;
import io.brokerstream.streams.state.OpenOrder;
import io.brokerstream.trace.Stages;
import java.time.Instant;
import java.util.function.Function;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One decision per order, in the task that owns the order's member: read the position and the
 * member's risk, decide, and on a fill write both back with the account's cash, then emit the
 * result (carrying any P&L the fill realized) and the new position. A DAY or GTC limit order whose
 * limit the price does not meet, or stop order whose stop it does not touch, rests instead ({@link
 * Placement}): it holds the buying power its fill would commit, goes on its equity's book
 * (orders.resting) and is decided again when a tick crosses it ({@link WorkingOrderProcessor}); a
 * DAY order expires at its exchange's close ({@link MarketCalendar}). Under exactly-once the store
 * writes and the emitted records commit together or not at all.
 *
 * <p>An order id is unique per member: the task knows every (member, order id) it decided from the
 * results themselves ({@link DecidedOrders}: order-results is partitioned by member, and the task
 * reads its partition back) and every one still working from its open orders, so a second record of
 * one (a retry through any gateway instance, a producer that wrote it twice, a replay) books
 * nothing and emits nothing: the first result stands, for as long as order-results keeps it. The
 * time that decides is the broker's: the order record's append time.
 */
public final class OrderProcessor implements Processor<String, Order, String, SpecificRecord> {
  private static final Logger log = LoggerFactory.getLogger(OrderProcessor.class);
  public static final String RESULTS_SINK = Ledger.RESULTS_SINK;

  private final Placement placement;
  private final MarketCalendar calendar;
  private final Function<ProcessorContext<?, ?>, ReferenceData> referenceData;
  private Ledger ledger;
  private WorkingOrders working;
  private ReferenceData ref;
  private final ResultsTail tail;

  public OrderProcessor(
      OrderDecider decider, MarketCalendar calendar, ReferenceCache cache, ResultsTail tail) {
    this(decider, calendar, context -> new StoreReferenceData(context, cache), tail);
  }

  OrderProcessor(
      OrderDecider decider,
      MarketCalendar calendar,
      Function<ProcessorContext<?, ?>, ReferenceData> referenceData,
      ResultsTail tail) {
    this.placement = new Placement(decider);
    this.calendar = calendar;
    this.referenceData = referenceData;
    this.tail = tail;
  }

  @Override
  public void init(ProcessorContext<String, SpecificRecord> context) {
    ledger = new Ledger(context);
    working = new WorkingOrders(context);
    ref = referenceData.apply(context);
    // Every result the task committed counts before its first record, also those it had not read
    // back when it stopped (the store was restored up to what it had read).
    ledger.decided.catchUp(tail, context.taskId().partition());
    // The task's positions and open orders are restored by now: its members' totals are their sums.
    long started = System.nanoTime();
    MemberTotals.Rebuilt totals =
        MemberTotals.rebuild(
            ledger.positions,
            context.getStateStore(StoreNames.OPEN_ORDERS),
            ledger.risk,
            context.getStateStore(StoreNames.MEMBER_RESERVED));
    if (totals.positions() > 0) {
      log.info(
          "task {}: the risk of {} members summed from {} positions, the reservations of {}, in"
              + " {} ms",
          context.taskId(),
          totals.riskMembers(),
          totals.positions(),
          totals.reservedMembers(),
          (System.nanoTime() - started) / 1_000_000);
    }
  }

  @Override
  public void process(Record<String, Order> record) {
    boolean traced = Stages.sampled(record.headers());
    if (traced) {
      Stages.stamp(record.headers(), Stages.DECIDE_START, Stages.nowMicros());
    }
    // Checked before anything is read or written: a record that fails is dead-lettered, the task
    // goes on.
    Order order = record.value();
    String member = InputGuard.order(record.key(), order);
    String resultKey = Topics.resultKey(member, order.getOrderId());
    if (ledger.decided.decided(resultKey) || working.working(resultKey)) {
      return; // a retry: the first record of this order was decided (or works) and its outcome
      // stands
    }
    Instant received = Instant.ofEpochMilli(record.timestamp());
    long reserved = working.reserved(member);
    RiskState memberRisk = ledger.risk(member);
    Placement.Outcome outcome =
        placement.place(order, member, received, ref, ledger.position(order), memberRisk, reserved);
    decided(record, traced);
    if (outcome instanceof Placement.Rests rests) {
      long expires =
          order.getTimeInForce() == TimeInForce.DAY
              ? calendar.nextClose(exchangeOf(order), received).toEpochMilli()
              : 0;
      OpenOrder open =
          new OpenOrder(
              order,
              record.timestamp(),
              record.timestamp(),
              rests.hold(),
              rests.underlyingId(),
              expires,
              1);
      working.rest(member, resultKey, open);
      ledger.event(
          record,
          member,
          order,
          OrderEventType.OPEN,
          rests.level(),
          rests.hold(),
          order.getQuantity(),
          null,
          order.getTraceId());
      ledger.book(record, BookProcessor.entry(member, open, false));
      return;
    }
    ledger.decided(record, member, order, record.timestamp(), ((Placement.Now) outcome).decision());
  }

  private String exchangeOf(Order order) {
    Instrument instrument = ref.instrument(order.getInstrumentId());
    return instrument == null ? null : instrument.getExchange();
  }

  /**
   * Every record emitted for an order carries the input's headers: the decision's end reaches them
   * all.
   */
  private static void decided(Record<String, Order> record, boolean traced) {
    if (traced) {
      Stages.stamp(record.headers(), Stages.DECIDE_END, Stages.nowMicros());
    }
  }
}
