package io.brokerstream.streams.topology;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderEventType;
import io.brokerstream.avro.ReasonCode;
import io.brokerstream.avro.RestingOrder;
import io.brokerstream.avro.TimeInForce;
import io.brokerstream.money.Micros;
import io.brokerstream.streams.Topics;
import io.brokerstream.streams.state.OpenOrder;
import io.brokerstream.rules.Decision;
import io.brokerstream.rules.OrderDecider;
import io.brokerstream.rules.ReferenceData;
import io.brokerstream.rules.PositionState;
import io.brokerstream.rules.RiskState;
import io.brokerstream.trace.Stages;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Function;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * One decision per order, in the task that owns the order's member: read the position and the
 * member's risk, decide, and on a fill write both back with the account's cash, then emit the
 * result, the new position and any realized P&L. A GTC limit order whose limit the price does not meet
 * rests instead, if it could fill at its limit: it holds the buying power that fill would commit, goes on
 * its equity's book (orders.resting) and is decided again when a tick crosses it ({@link
 * WorkingOrderProcessor}). Under exactly-once the store writes and the emitted
 * records commit together or not at all.
 *
 * <p>An order id is unique per member: the task remembers every (member, order id) it decided, for
 * {@code orders.dedup-retention}, and a second record of one (a retry through any gateway instance,
 * a producer that wrote it twice, a replay) books nothing and emits nothing: the first result stands.
 * The time that decides is the broker's: the order record's append time.
 */
public final class OrderProcessor implements Processor<String, Order, String, SpecificRecord> {
  public static final String RESULTS_SINK = Ledger.RESULTS_SINK;
  public static final String POSITIONS_SINK = Ledger.POSITIONS_SINK;
  public static final String REALIZED_SINK = Ledger.REALIZED_SINK;

  private final OrderDecider decider;
  private final Function<ProcessorContext<?, ?>, ReferenceData> referenceData;
  private Ledger ledger;
  private WorkingOrders working;
  private KeyValueStore<String, Long> orderIds;
  private ReferenceData ref;
  private final long dedupRetentionMs;

  public OrderProcessor(OrderDecider decider, ReferenceCache cache, Duration dedupRetention) {
    this(decider, context -> new StoreReferenceData(context, cache), dedupRetention);
  }

  OrderProcessor(OrderDecider decider, Function<ProcessorContext<?, ?>, ReferenceData> referenceData,
      Duration dedupRetention) {
    this.decider = decider;
    this.referenceData = referenceData;
    this.dedupRetentionMs = dedupRetention.toMillis();
  }

  @Override
  public void init(ProcessorContext<String, SpecificRecord> context) {
    ledger = new Ledger(context);
    working = new WorkingOrders(context);
    orderIds = context.getStateStore(StoreNames.ORDER_IDS);
    ref = referenceData.apply(context);
    // Forget order ids past their retention a slice at a time, so no sweep stalls the task.
    // A working order's id stays taken while it works, however long that is.
    OrderIdSweeper sweeper = new OrderIdSweeper(orderIds, dedupRetentionMs, OrderIdSweeper.SLICE, working::working);
    context.schedule(Duration.ofSeconds(1), PunctuationType.WALL_CLOCK_TIME, sweeper::sweep);
  }

  @Override
  public void process(Record<String, Order> record) {
    boolean traced = Stages.sampled(record.headers());
    if (traced) {
      Stages.stamp(record.headers(), Stages.DECIDE_START, Stages.nowMicros());
    }
    Order order = record.value();
    if (order == null) {
      throw new IllegalArgumentException("an order record without a value (tombstone) cannot be decided");
    }
    String member = record.key() == null ? "" : record.key();
    String resultKey = Topics.resultKey(member, order.getOrderId());
    if (orderIds.get(resultKey) != null) {
      return; // a retry: the first record of this order was decided (or works) and its outcome stands
    }
    orderIds.put(resultKey, record.timestamp());
    Instant received = Instant.ofEpochMilli(record.timestamp());
    PositionState position = ledger.position(order);
    RiskState memberRisk = ledger.risk(member);
    long reserved = member.isEmpty() ? 0 : working.reserved(member);

    Decision decision = decider.decide(order, member, received, ref, position, memberRisk, null, reserved);
    if (decision instanceof Decision.Rejected r && r.reason() == ReasonCode.LIMIT_NOT_MET
        && order.getTimeInForce() == TimeInForce.GTC) {
      // Not now, but it may work: it rests if it could fill at its own limit (short rules, buying power),
      // holding what that fill would add to the member's committed value.
      long limit = Micros.of(order.getLimitPrice());
      decision = decider.decide(order, member, received, ref, position, memberRisk, limit, reserved);
      if (decision instanceof Decision.Filled atLimit) {
        long hold = Math.max(0, atLimit.risk().committed() - memberRisk.committed());
        working.rest(member, resultKey, new OpenOrder(order, record.timestamp(), hold, atLimit.underlyingId()));
        decided(record, traced);
        ledger.event(record, member, order.getOrderId(), OrderEventType.OPEN, limit, hold, null, order.getTraceId());
        ledger.book(record, resting(member, order, atLimit.underlyingId(), record.timestamp(), false));
        return;
      }
    }
    decided(record, traced);
    ledger.decided(record, member, order, record.timestamp(), decision);
  }

  static RestingOrder resting(String member, Order order, String underlying, long placedMs, boolean removed) {
    return RestingOrder.newBuilder().setMemberId(member).setOrderId(order.getOrderId())
        .setInstrumentId(order.getInstrumentId()).setUnderlyingId(underlying).setSide(order.getSide())
        .setLimitPrice(order.getLimitPrice()).setPlacedTs(Instant.ofEpochMilli(placedMs)).setRemoved(removed).build();
  }

  /** Every record emitted for an order carries the input's headers: the decision's end reaches them all. */
  private static void decided(Record<String, Order> record, boolean traced) {
    if (traced) {
      Stages.stamp(record.headers(), Stages.DECIDE_END, Stages.nowMicros());
    }
  }
}
