package io.brokerstream.streams.topology;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderAction;
import io.brokerstream.avro.OrderCommand;
import io.brokerstream.avro.OrderEventType;
import io.brokerstream.avro.OrderTrigger;
import io.brokerstream.money.Micros;
import io.brokerstream.rules.Decision;
import io.brokerstream.rules.OrderDecider;
import io.brokerstream.rules.ReferenceData;
import io.brokerstream.streams.Topics;
import io.brokerstream.streams.state.OpenOrder;
import java.util.function.Function;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The second half of a working order's life, in its member's task (order-commands and order-triggers are
 * keyed by member like orders): a trigger from the book decides it at the crossing price, a cancel takes
 * it off. Both take the order out of the member's working orders first, and the task handles one record
 * at a time, so when a cancel and a trigger race exactly one finds the order: the other is told it came
 * too late (a CANCEL_REJECTED event) or, for a trigger, dropped (the cancel already answered).
 */
public final class WorkingOrderProcessor implements Processor<String, SpecificRecord, String, SpecificRecord> {
  private final OrderDecider decider;
  private final Function<ProcessorContext<?, ?>, ReferenceData> referenceData;
  private Ledger ledger;
  private WorkingOrders working;
  private KeyValueStore<String, Long> orderIds;
  private ReferenceData ref;

  public WorkingOrderProcessor(OrderDecider decider, ReferenceCache cache) {
    this(decider, context -> new StoreReferenceData(context, cache));
  }

  WorkingOrderProcessor(OrderDecider decider, Function<ProcessorContext<?, ?>, ReferenceData> referenceData) {
    this.decider = decider;
    this.referenceData = referenceData;
  }

  @Override
  public void init(ProcessorContext<String, SpecificRecord> context) {
    ledger = new Ledger(context);
    working = new WorkingOrders(context);
    orderIds = context.getStateStore(StoreNames.ORDER_IDS);
    ref = referenceData.apply(context);
  }

  @Override
  public void process(Record<String, SpecificRecord> record) {
    String member = record.key() == null ? "" : record.key();
    if (record.value() instanceof OrderTrigger trigger) {
      triggered(record, member, trigger);
    } else if (record.value() instanceof OrderCommand command) {
      commanded(record, member, command);
    } else {
      throw new IllegalArgumentException("not a trigger or a command: " + record.value());
    }
  }

  private void triggered(Record<String, SpecificRecord> record, String member, OrderTrigger trigger) {
    String key = Topics.resultKey(member, trigger.getOrderId());
    OpenOrder open = working.take(member, key);
    if (open == null) {
      return; // cancelled before the trigger reached the member: the cancel has answered
    }
    Order order = open.order();
    long price = Micros.of(trigger.getPrice());
    ledger.event(record, member, order.getOrderId(), OrderEventType.TRIGGERED, price, null, null, order.getTraceId());
    // Decided again in full at the crossing price and the broker's time of the tick: the account, the
    // instrument, short rules and buying power (less what the member's other working orders hold) may
    // have changed while it rested.
    Decision decision = decider.decide(order, member, trigger.getTriggeredTs(), ref, ledger.position(order),
        ledger.risk(member), price, working.reserved(member));
    ledger.decided(record, member, order, open.receivedMs(), decision);
  }

  private void commanded(Record<String, SpecificRecord> record, String member, OrderCommand command) {
    if (command.getAction() != OrderAction.CANCEL) {
      throw new IllegalArgumentException("unknown order action " + command.getAction());
    }
    String key = Topics.resultKey(member, command.getOrderId());
    OpenOrder open = working.take(member, key);
    if (open == null) {
      String why = orderIds.get(key) != null
          ? "order " + command.getOrderId() + " is not working: it was filled, rejected or cancelled"
          : "no order " + command.getOrderId() + " from member " + member;
      ledger.event(record, member, command.getOrderId(), OrderEventType.CANCEL_REJECTED, null, null, why,
          command.getTraceId());
      return;
    }
    Order order = open.order();
    ledger.book(record, OrderProcessor.resting(member, order, open.underlyingId(), open.receivedMs(), true));
    ledger.event(record, member, order.getOrderId(), OrderEventType.CANCELLED, null, null, null, command.getTraceId());
    ledger.cancelled(record, member, order, open.receivedMs());
  }
}
