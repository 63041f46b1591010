package io.brokerstream.streams.topology;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.avro.Position;
import io.brokerstream.avro.RealizedPnl;
import io.brokerstream.money.Micros;
import io.brokerstream.streams.Topics;
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
 * result, the new position and any realized P&L. Under exactly-once the store writes and the emitted
 * records commit together or not at all.
 *
 * <p>An order id is unique per member: the task remembers every (member, order id) it decided, for
 * {@code orders.dedup-retention}, and a second record of one (a retry through any gateway instance,
 * a producer that wrote it twice, a replay) books nothing and emits nothing: the first result stands.
 * The time that decides is the broker's: the order record's append time.
 */
public final class OrderProcessor implements Processor<String, Order, String, SpecificRecord> {
  public static final String RESULTS_SINK = "order-results-sink";
  public static final String POSITIONS_SINK = "positions-sink";
  public static final String REALIZED_SINK = "realized-pnl-sink";

  private final OrderDecider decider;
  private final Function<ProcessorContext<?, ?>, ReferenceData> referenceData;
  private ProcessorContext<String, SpecificRecord> context;
  private KeyValueStore<String, PositionState> positions;
  private KeyValueStore<String, RiskState> risk;
  private KeyValueStore<String, Long> cash;
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
    this.context = context;
    positions = context.getStateStore(StoreNames.POSITIONS);
    risk = context.getStateStore(StoreNames.MEMBER_RISK);
    cash = context.getStateStore(StoreNames.ACCOUNT_CASH);
    orderIds = context.getStateStore(StoreNames.ORDER_IDS);
    ref = referenceData.apply(context);
    // Forget order ids past their retention a slice at a time, so no sweep stalls the task.
    OrderIdSweeper sweeper = new OrderIdSweeper(orderIds, dedupRetentionMs, OrderIdSweeper.SLICE);
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
      return; // a retry: the first record of this order was decided and its result stands
    }
    orderIds.put(resultKey, record.timestamp());
    Instant received = Instant.ofEpochMilli(record.timestamp());
    String positionKey = Topics.positionKey(order.getAccountId(), order.getInstrumentId());
    PositionState position = orElse(positions.get(positionKey), PositionState.FLAT);
    RiskState memberRisk = member.isEmpty() ? RiskState.NONE : orElse(risk.get(member), RiskState.NONE);

    Decision decision = decider.decide(order, member, received, ref, position, memberRisk);
    Instant now = Instant.ofEpochMilli(context.currentSystemTimeMs());
    OrderResult.Builder result = OrderResult.newBuilder()
        .setOrderId(order.getOrderId()).setMemberId(member).setAccountId(order.getAccountId())
        .setInstrumentId(order.getInstrumentId()).setSide(order.getSide()).setQuantity(order.getQuantity())
        .setClientTs(order.getClientTs()).setIngestTs(received)
        .setProcessedTs(now).setTraceId(order.getTraceId()).setLimitPrice(order.getLimitPrice())
        .setShortSale(order.getShortSale());

    if (decision instanceof Decision.Rejected rejected) {
      result.setStatus(OrderStatus.REJECTED).setReason(rejected.reason()).setReasonDetail(rejected.detail());
      decided(record, traced);
      context.forward(record.withKey(resultKey).withValue(result.build()), RESULTS_SINK);
      return;
    }
    Decision.Filled fill = (Decision.Filled) decision;
    positions.put(positionKey, fill.position());
    risk.put(member, fill.risk());
    cash.put(order.getAccountId(), Math.addExact(orElse(cash.get(order.getAccountId()), 0L), fill.cashDelta()));

    result.setStatus(OrderStatus.ACCEPTED).setFillPrice(Micros.toDecimal(fill.fillPrice()))
        .setRealizedPnl(Micros.toDecimal(fill.realized()));
    decided(record, traced);
    context.forward(record.withKey(resultKey).withValue(result.build()), RESULTS_SINK);
    context.forward(record.withKey(positionKey).withValue(Position.newBuilder()
        .setAccountId(order.getAccountId()).setMemberId(member).setInstrumentId(order.getInstrumentId())
        .setUnderlyingId(fill.underlyingId()).setMultiplier(fill.multiplier())
        .setQuantity(fill.position().quantity()).setAvgCost(Micros.toDecimal(fill.position().avgCost()))
        .setRealizedPnl(Micros.toDecimal(fill.position().realized())).setVersion(fill.position().version())
        .setUpdatedTs(now).build()), POSITIONS_SINK);
    if (fill.closedQuantity() > 0) {
      context.forward(record.withKey(order.getAccountId()).withValue(RealizedPnl.newBuilder()
          .setOrderId(order.getOrderId()).setAccountId(order.getAccountId()).setMemberId(member)
          .setInstrumentId(order.getInstrumentId()).setClosedQuantity(fill.closedQuantity())
          .setFillPrice(Micros.toDecimal(fill.fillPrice())).setAvgCost(Micros.toDecimal(fill.closedAvgCost()))
          .setRealizedPnl(Micros.toDecimal(fill.realized())).setTs(now).build()), REALIZED_SINK);
    }
  }

  /** Every record emitted for an order carries the input's headers: the decision's end reaches them all. */
  private static void decided(Record<String, Order> record, boolean traced) {
    if (traced) {
      Stages.stamp(record.headers(), Stages.DECIDE_END, Stages.nowMicros());
    }
  }

  private static <T> T orElse(T value, T fallback) {
    return value == null ? fallback : value;
  }
}
