package io.brokerstream.streams.topology;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderEvent;
import io.brokerstream.avro.OrderEventType;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.avro.Position;
import io.brokerstream.money.Micros;
import io.brokerstream.rules.BoundedLetters;
import io.brokerstream.rules.Decision;
import io.brokerstream.rules.PositionState;
import io.brokerstream.rules.RiskState;
import io.brokerstream.streams.Topics;
import io.brokerstream.streams.state.BookedPosition;
import java.time.Instant;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Writes a member's decisions: a fill into its positions (with the cash it moved) and risk stores,
 * and every outcome as the records it emits (result, with the P&L a fill realized; lifecycle event;
 * the positions store's changelog is the positions topic). Shared by the processors of the member's
 * task (new orders, and the triggers, cancels, amends and expiries of working ones), so a fill
 * books the same way whichever way it came.
 */
final class Ledger {
  static final String RESULTS_SINK = "order-results-sink";
  static final String EVENTS_SINK = "order-events-sink";
  static final String RESTING_SINK = "orders-resting-sink";

  /**
   * The longest detail text a record carries. Details are built from ids (64 characters at most, by
   * the id rule) and the broker's own words, so this bound is never reached by design; it is kept
   * so no future detail can make a record outgrow its topic.
   */
  static final int MAX_DETAIL = 1024;

  private final ProcessorContext<String, SpecificRecord> context;
  final KeyValueStore<String, Position> positions;
  final KeyValueStore<String, RiskState> risk;
  final DecidedOrders decided;
  // The position read for the order being decided: its fill books on top of it without a second
  // read. Kept for that order object only (a record's own), so nothing stale outlives the record.
  private Order readFor;
  private BookedPosition read;

  Ledger(ProcessorContext<String, SpecificRecord> context) {
    this.context = context;
    positions = context.getStateStore(StoreNames.POSITIONS);
    risk = context.getStateStore(StoreNames.MEMBER_RISK);
    decided = new DecidedOrders(context);
  }

  PositionState position(Order order) {
    read = booked(Topics.positionKey(order.getAccountId(), order.getInstrumentId()));
    readFor = order;
    return read.state();
  }

  private BookedPosition booked(String positionKey) {
    return BookedPosition.of(positions.get(positionKey));
  }

  RiskState risk(String member) {
    RiskState r = member.isEmpty() ? null : risk.get(member);
    return r == null ? RiskState.NONE : r;
  }

  Instant now() {
    return Instant.ofEpochMilli(context.currentSystemTimeMs());
  }

  OrderResult.Builder result(Order order, String member, long receivedMs) {
    return OrderResult.newBuilder()
        .setOrderId(order.getOrderId())
        .setMemberId(member)
        .setAccountId(order.getAccountId())
        .setInstrumentId(order.getInstrumentId())
        .setSide(order.getSide())
        .setQuantity(order.getQuantity())
        .setClientTs(order.getClientTs())
        .setIngestTs(Instant.ofEpochMilli(receivedMs))
        .setProcessedTs(now())
        .setTraceId(order.getTraceId())
        .setLimitPrice(order.getLimitPrice())
        .setShortSale(order.getShortSale());
  }

  /** The final outcome of a decided order: a rejection, or a fill booked into the stores. */
  void decided(
      Record<String, ?> in, String member, Order order, long receivedMs, Decision decision) {
    String resultKey = Topics.resultKey(member, order.getOrderId());
    OrderResult.Builder result = result(order, member, receivedMs);
    if (decision instanceof Decision.Rejected rejected) {
      result
          .setStatus(OrderStatus.REJECTED)
          .setReason(rejected.reason())
          .setReasonDetail(BoundedLetters.clip(rejected.detail(), MAX_DETAIL));
      conclude(in, resultKey, result.build());
      return;
    }
    Decision.Filled fill = (Decision.Filled) decision;
    String positionKey = Topics.positionKey(order.getAccountId(), order.getInstrumentId());
    // The position carries the cash its fills moved: one changelog record per fill, not two.
    BookedPosition before = order == readFor ? read : booked(positionKey);
    readFor = null;
    long cash = Math.addExact(before.cash(), fill.cashDelta());
    Instant now = now();
    // The store's changelog is the positions topic: this put is the position's one record.
    positions.put(
        positionKey,
        Position.newBuilder()
            .setAccountId(order.getAccountId())
            .setMemberId(member)
            .setInstrumentId(order.getInstrumentId())
            .setUnderlyingId(fill.underlyingId())
            .setMultiplier(fill.multiplier())
            .setQuantity(fill.position().quantity())
            .setAvgCost(Micros.toDecimal(fill.position().avgCost()))
            .setCostBasis(Micros.toDecimal(fill.position().costBasis()))
            .setRealizedPnl(Micros.toDecimal(fill.position().realized()))
            .setVersion(fill.position().version())
            .setUpdatedTs(now)
            .setCash(Micros.toDecimal(cash))
            .build());
    risk.put(member, fill.risk());
    // The result is also the fill's realized P&L record: what it closed, at what cost, realizing
    // what. No record of its own, so a closing fill writes as many records as an opening one.
    result
        .setStatus(OrderStatus.ACCEPTED)
        .setFillPrice(Micros.toDecimal(fill.fillPrice()))
        .setRealizedPnl(Micros.toDecimal(fill.realized()))
        .setPositionVersion(fill.position().version());
    if (fill.closedQuantity() > 0) {
      result
          .setClosedQuantity(fill.closedQuantity())
          .setClosedAvgCost(Micros.toDecimal(fill.closedAvgCost()));
    }
    conclude(in, resultKey, result.build());
  }

  /** A working order's final outcome when its member takes it off the book. */
  void cancelled(Record<String, ?> in, String member, Order order, long receivedMs) {
    conclude(
        in,
        Topics.resultKey(member, order.getOrderId()),
        result(order, member, receivedMs)
            .setStatus(OrderStatus.CANCELLED)
            .setReasonDetail("cancelled by the member while working")
            .build());
  }

  /** A DAY order's final outcome when its market closes with it still working. */
  void expired(Record<String, ?> in, String member, Order order, long receivedMs, Instant close) {
    conclude(
        in,
        Topics.resultKey(member, order.getOrderId()),
        result(order, member, receivedMs)
            .setStatus(OrderStatus.EXPIRED)
            .setReasonDetail("DAY order still working at the market close " + close)
            .build());
  }

  /**
   * An order's one result: remembered as decided until the task reads it back from order-results
   * (its member's partition, so this task's).
   */
  private void conclude(Record<String, ?> in, String resultKey, OrderResult result) {
    decided.emitted(resultKey, in.timestamp());
    context.forward(in.withKey(resultKey).withValue(result), RESULTS_SINK);
  }

  /** A step in a working order's life, with what it trades (so an account's statement finds it). */
  void event(
      Record<String, ?> in,
      String member,
      Order order,
      OrderEventType type,
      Long price,
      Long reserved,
      Long quantity,
      String detail,
      String traceId) {
    emit(
        in,
        member,
        order.getOrderId(),
        OrderEvent.newBuilder()
            .setAccountId(order.getAccountId())
            .setInstrumentId(order.getInstrumentId())
            .setEvent(type)
            .setPrice(price == null ? null : Micros.toDecimal(price))
            .setReserved(reserved == null ? null : Micros.toDecimal(reserved))
            .setQuantity(quantity)
            .setDetail(BoundedLetters.clip(detail, MAX_DETAIL))
            .setTraceId(traceId));
  }

  /** A cancel or amend that found no working order: what it named is all there is to tell. */
  void refusal(
      Record<String, ?> in,
      String member,
      String orderId,
      OrderEventType type,
      String detail,
      String traceId) {
    emit(
        in,
        member,
        orderId,
        OrderEvent.newBuilder()
            .setEvent(type)
            .setDetail(BoundedLetters.clip(detail, MAX_DETAIL))
            .setTraceId(traceId));
  }

  private void emit(Record<String, ?> in, String member, String orderId, OrderEvent.Builder event) {
    context.forward(
        in.withKey(Topics.resultKey(member, orderId))
            .withValue(event.setOrderId(orderId).setMemberId(member).setTs(now()).build()),
        EVENTS_SINK);
  }

  void book(Record<String, ?> in, io.brokerstream.avro.RestingOrder entry) {
    context.forward(in.withKey(entry.getUnderlyingId()).withValue(entry), RESTING_SINK);
  }
}
