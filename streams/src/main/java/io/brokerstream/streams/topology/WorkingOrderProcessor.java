package io.brokerstream.streams.topology;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderCommand;
import io.brokerstream.avro.OrderEventType;
import io.brokerstream.avro.OrderTrigger;
import io.brokerstream.money.Micros;
import io.brokerstream.rules.Decision;
import io.brokerstream.rules.OrderDecider;
import io.brokerstream.rules.ReferenceData;
import io.brokerstream.streams.Topics;
import io.brokerstream.streams.state.OpenOrder;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Function;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * The rest of a working order's life, in its member's task (order-commands and order-triggers are
 * keyed by member like orders): a trigger from the book decides it at the crossing price, a cancel
 * takes it off, an amend changes it, and the market close expires a DAY order. Each starts by
 * taking the order out of the member's working orders, and the task handles one record (or
 * punctuation) at a time, so when two race exactly one finds the order: a late cancel or amend is
 * told so (CANCEL_REJECTED, AMEND_REJECTED), a late trigger is dropped (whatever took the order off
 * has answered). A trigger from a book entry that an amend has since replaced carries the old
 * entry's place and is dropped too: the amended order works on.
 */
public final class WorkingOrderProcessor
    implements Processor<String, SpecificRecord, String, SpecificRecord> {
  /**
   * At most this many DAY orders expire per punctuation, so a close with many keeps the task
   * responsive.
   */
  static final int EXPIRIES_PER_PUNCTUATION = 5_000;

  private final OrderDecider decider;
  private final Placement placement;
  private final Function<ProcessorContext<?, ?>, ReferenceData> referenceData;
  private final ExpiryChecks checks;
  private ProcessorContext<String, SpecificRecord> context;
  private Cancellable nextCheck;
  private long checkEveryMs;
  private Ledger ledger;
  private WorkingOrders working;
  private ReferenceData ref;

  public WorkingOrderProcessor(OrderDecider decider, ReferenceCache cache, ExpiryChecks checks) {
    this(decider, context -> new StoreReferenceData(context, cache), checks);
  }

  WorkingOrderProcessor(
      OrderDecider decider,
      Function<ProcessorContext<?, ?>, ReferenceData> referenceData,
      ExpiryChecks checks) {
    this.decider = decider;
    this.placement = new Placement(decider);
    this.referenceData = referenceData;
    this.checks = checks;
  }

  @Override
  public void init(ProcessorContext<String, SpecificRecord> context) {
    ledger = new Ledger(context);
    working = new WorkingOrders(context);
    ref = referenceData.apply(context);
    this.context = context;
    // The close is the broker's clock, not stream time: a quiet member's DAY orders expire on time
    // too. The first check comes soon and sets when the next one is due (ExpiryChecks).
    checkIn(checks.minMs());
  }

  private void checkIn(long everyMs) {
    if (nextCheck != null && everyMs == checkEveryMs) {
      return; // already scheduled so
    }
    if (nextCheck != null) {
      nextCheck.cancel();
    }
    checkEveryMs = everyMs;
    nextCheck =
        context.schedule(Duration.ofMillis(everyMs), PunctuationType.WALL_CLOCK_TIME, this::check);
  }

  private void check(long nowMs) {
    expire(nowMs);
    checkIn(checks.delayMs(nowMs, working.earliestExpiryMs()));
  }

  @Override
  public void process(Record<String, SpecificRecord> record) {
    // Checked before anything is read or written: a record that fails is dead-lettered, the task
    // goes on.
    if (record.value() instanceof OrderTrigger trigger) {
      triggered(record, InputGuard.trigger(record.key(), trigger), trigger);
    } else if (record.value() instanceof OrderCommand command) {
      String member = InputGuard.command(record.key(), command);
      switch (command.getAction()) {
        case CANCEL -> cancel(record, member, command);
        case AMEND -> amend(record, member, command);
        default ->
            throw new IllegalArgumentException("unknown order action " + command.getAction());
      }
    } else {
      throw new io.brokerstream.streams.errors.UndecidableRecord(
          "a command or trigger record without a value");
    }
  }

  private void triggered(
      Record<String, SpecificRecord> record, String member, OrderTrigger trigger) {
    String key = Topics.resultKey(member, trigger.getOrderId());
    OpenOrder current = working.get(key);
    if (current == null) {
      return; // cancelled or expired before the trigger reached the member: that outcome stands
    }
    if (stale(trigger, current)) {
      return; // from the entry an amend replaced: the amended order rests on its new terms
    }
    OpenOrder open = working.take(member, key);
    Order order = open.order();
    if (open.expiresMs() > 0 && trigger.getTriggeredTs().toEpochMilli() >= open.expiresMs()) {
      // crossed at or after its close (the expiry check runs seconds apart): a DAY order never
      // fills after its market closed
      expired(record, member, open);
      return;
    }
    long price = Micros.of(trigger.getPrice());
    ledger.event(
        record,
        member,
        order,
        OrderEventType.TRIGGERED,
        price,
        null,
        null,
        null,
        order.getTraceId());
    // Decided again in full at the crossing price and the broker's time of the tick: the account,
    // the instrument, short rules and buying power (less what the member's other working orders
    // hold) may have changed while it rested. A stop order is a market order now: no limit to meet.
    Decision decision =
        decider.decideTriggered(
            order,
            member,
            trigger.getTriggeredTs(),
            ref,
            ledger.position(order),
            ledger.risk(member),
            price,
            working.reserved(member));
    ledger.decided(record, member, order, open.receivedMs(), decision);
  }

  /**
   * Whether a trigger is from an entry of the order other than its current one: by entry number, or
   * (entries written before they were numbered) by the time the entry took its place.
   */
  static boolean stale(OrderTrigger trigger, OpenOrder current) {
    if (trigger.getEntry() != 0 && current.entry() != 0) {
      return trigger.getEntry() != current.entry();
    }
    long placed = trigger.getPlacedTs().toEpochMilli();
    return placed != 0 && placed != current.placedMs();
  }

  private void cancel(Record<String, SpecificRecord> record, String member, OrderCommand command) {
    OpenOrder open = takeOrRefuse(record, member, command, OrderEventType.CANCEL_REJECTED);
    if (open == null) {
      return;
    }
    Order order = open.order();
    ledger.book(record, BookProcessor.entry(member, open, true));
    ledger.event(
        record,
        member,
        order,
        OrderEventType.CANCELLED,
        null,
        null,
        null,
        null,
        command.getTraceId());
    ledger.cancelled(record, member, order, open.receivedMs());
  }

  /**
   * A new quantity, limit or stop for a working order, decided as if it had just been placed at the
   * amend's broker time: it may now fill, rest again (behind every order already on the book) or,
   * if it could not (buying power for a larger quantity, an invalid value), be refused with the
   * order working on unchanged.
   */
  private void amend(Record<String, SpecificRecord> record, String member, OrderCommand command) {
    String key = Topics.resultKey(member, command.getOrderId());
    OpenOrder open = takeOrRefuse(record, member, command, OrderEventType.AMEND_REJECTED);
    if (open == null) {
      return;
    }
    Order before = open.order();
    if (open.expiresMs() > 0 && record.timestamp() >= open.expiresMs()) {
      // an amend that reaches the broker after the order's close finds it expired
      expired(record, member, open);
      ledger.refusal(
          record,
          member,
          before.getOrderId(),
          OrderEventType.AMEND_REJECTED,
          "order " + before.getOrderId() + " expired at its market close",
          command.getTraceId());
      return;
    }
    String refused = amendRefused(before, command);
    Placement.Outcome outcome = null;
    Order after = null;
    if (refused == null) {
      after =
          Order.newBuilder(before)
              .setQuantity(
                  command.getQuantity() == null ? before.getQuantity() : command.getQuantity())
              .setLimitPrice(
                  command.getLimitPrice() == null
                      ? before.getLimitPrice()
                      : command.getLimitPrice())
              .setStopPrice(
                  command.getStopPrice() == null ? before.getStopPrice() : command.getStopPrice())
              .build();
      outcome =
          placement.place(
              after,
              member,
              Instant.ofEpochMilli(record.timestamp()),
              ref,
              ledger.position(after),
              ledger.risk(member),
              working.reserved(member));
      if (outcome instanceof Placement.Now now && now.decision() instanceof Decision.Rejected r) {
        refused = r.reason() + ": " + r.detail();
      }
    }
    if (refused != null) {
      working.rest(member, key, open); // as it was, holding what it held
      ledger.event(
          record,
          member,
          before,
          OrderEventType.AMEND_REJECTED,
          null,
          null,
          null,
          "amend refused, the order works on unchanged: " + refused,
          command.getTraceId());
      return;
    }
    ledger.book(record, BookProcessor.entry(member, open, true));
    if (outcome instanceof Placement.Rests rests) {
      OpenOrder amended =
          new OpenOrder(
              after,
              open.receivedMs(),
              record.timestamp(),
              rests.hold(),
              rests.underlyingId(),
              open.expiresMs(),
              open.entry() + 1);
      working.rest(member, key, amended);
      ledger.book(record, BookProcessor.entry(member, amended, false));
      ledger.event(
          record,
          member,
          after,
          OrderEventType.AMENDED,
          rests.level(),
          rests.hold(),
          after.getQuantity(),
          null,
          command.getTraceId());
      return;
    }
    // Marketable on its new terms: it fills now.
    ledger.event(
        record,
        member,
        after,
        OrderEventType.AMENDED,
        null,
        null,
        after.getQuantity(),
        "the amended order could fill at once",
        command.getTraceId());
    ledger.decided(record, member, after, open.receivedMs(), ((Placement.Now) outcome).decision());
  }

  /** Why this amend cannot apply to this order at all; null when it can. */
  private static String amendRefused(Order order, OrderCommand command) {
    if (command.getQuantity() == null
        && command.getLimitPrice() == null
        && command.getStopPrice() == null) {
      return "an amend needs a new quantity, limit_price or stop_price";
    }
    if (command.getLimitPrice() != null && order.getLimitPrice() == null) {
      return "a stop order has no limit to amend (amend its stop_price)";
    }
    if (command.getStopPrice() != null && order.getStopPrice() == null) {
      return "a limit order has no stop to amend (amend its limit_price)";
    }
    return null;
  }

  /** DAY orders still working at their close: off the book, reservation released, EXPIRED. */
  private void expire(long nowMs) {
    for (String key : working.expiredBy(nowMs, EXPIRIES_PER_PUNCTUATION)) {
      String member = key.substring(0, key.indexOf('|'));
      OpenOrder open = working.take(member, key);
      if (open == null) {
        continue;
      }
      expired(new Record<>(key, null, nowMs), member, open);
    }
  }

  /** A DAY order taken off at (or found past) its close: removal, EXPIRED event and result. */
  private void expired(Record<String, ?> at, String member, OpenOrder open) {
    Order order = open.order();
    Instant close = Instant.ofEpochMilli(open.expiresMs());
    ledger.book(at, BookProcessor.entry(member, open, true));
    ledger.event(
        at,
        member,
        order,
        OrderEventType.EXPIRED,
        null,
        null,
        null,
        "DAY order still working at the market close " + close,
        order.getTraceId());
    ledger.expired(at, member, order, open.receivedMs(), close);
  }

  /**
   * The command's working order, taken; null, with the member told why ({@code refused}), when none
   * works.
   */
  private OpenOrder takeOrRefuse(
      Record<String, SpecificRecord> record,
      String member,
      OrderCommand command,
      OrderEventType refused) {
    String orderId = command.getOrderId();
    String key = Topics.resultKey(member, orderId);
    OpenOrder open = working.take(member, key);
    if (open == null) {
      ledger.refusal(
          record,
          member,
          orderId,
          refused,
          ledger.decided.decided(key)
              ? "order "
                  + orderId
                  + " is not working: it was filled, rejected, cancelled or expired"
              : "no order " + orderId + " from member " + member,
          command.getTraceId());
    }
    return open;
  }
}
