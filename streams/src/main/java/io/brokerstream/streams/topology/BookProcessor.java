package io.brokerstream.streams.topology;

import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.OrderTrigger;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.avro.RestingOrder;
import io.brokerstream.avro.Order;
import io.brokerstream.money.Micros;
import io.brokerstream.rules.OrderDecider;
import io.brokerstream.rules.ReferenceData;
import io.brokerstream.streams.state.OpenOrder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The book of working orders, in the task that sees an equity's ticks (orders.resting and price-ticks are
 * both keyed by equity). Entries are keyed equity|placed time|member|order id, so one prefix scan per tick
 * walks the equity's working orders (on it and on its options) in the order they were placed: when one
 * tick crosses many, they trigger in that order (price-time priority of triggering). A limit order is
 * crossed when the price reaches its limit from the side it waits on; a stop order when the price touches
 * its stop (a buy stop from below, a sell stop from above). A crossed order
 * leaves the book as it triggers, so it triggers once; its member's task decides it.
 */
public final class BookProcessor implements Processor<String, SpecificRecord, String, OrderTrigger> {
  private static final StringSerializer KEYS = new StringSerializer();
  private final OrderDecider decider;
  private final Function<ProcessorContext<?, ?>, ReferenceData> referenceData;
  private ProcessorContext<String, OrderTrigger> context;
  private KeyValueStore<String, RestingOrder> book;
  private ReferenceData ref;

  public BookProcessor(OrderDecider decider, ReferenceCache cache) {
    this(decider, context -> new StoreReferenceData(context, cache));
  }

  BookProcessor(OrderDecider decider, Function<ProcessorContext<?, ?>, ReferenceData> referenceData) {
    this.decider = decider;
    this.referenceData = referenceData;
  }

  @Override
  public void init(ProcessorContext<String, OrderTrigger> context) {
    this.context = context;
    book = context.getStateStore(StoreNames.RESTING_BOOK);
    ref = referenceData.apply(context);
  }

  /** The book entry of a working order: on the book, or (removed) off it. */
  static RestingOrder entry(String member, OpenOrder open, boolean removed) {
    Order order = open.order();
    boolean stop = order.getStopPrice() != null;
    return RestingOrder.newBuilder().setMemberId(member).setOrderId(order.getOrderId())
        .setInstrumentId(order.getInstrumentId()).setUnderlyingId(open.underlyingId()).setSide(order.getSide())
        .setLimitPrice(stop ? order.getStopPrice() : order.getLimitPrice()).setStop(stop)
        .setPlacedTs(Instant.ofEpochMilli(open.placedMs())).setRemoved(removed).build();
  }

  static String bookKey(RestingOrder r) {
    return String.format("%s|%019d|%s|%s", r.getUnderlyingId(), r.getPlacedTs().toEpochMilli(), r.getMemberId(),
        r.getOrderId());
  }

  @Override
  public void process(Record<String, SpecificRecord> record) {
    if (record.value() instanceof RestingOrder entry) {
      if (entry.getRemoved()) {
        book.delete(bookKey(entry));
      } else {
        book.put(bookKey(entry), entry);
      }
    } else if (record.value() instanceof PriceTick tick) {
      crossed(record, tick);
    } else if (record.value() != null) {
      throw new IllegalArgumentException("not a book entry or a tick: " + record.value());
    }
  }

  private void crossed(Record<String, SpecificRecord> record, PriceTick tick) {
    long spot = Micros.of(tick.getPrice());
    Instant now = Instant.ofEpochMilli(context.currentSystemTimeMs());
    Map<String, Long> prices = new HashMap<>();
    record Fired(String bookKey, String member, OrderTrigger trigger) {}
    List<Fired> fired = new ArrayList<>();
    try (KeyValueIterator<String, RestingOrder> it = book.prefixScan(tick.getInstrumentId() + "|", KEYS)) {
      while (it.hasNext()) {
        KeyValue<String, RestingOrder> e = it.next();
        RestingOrder r = e.value;
        Long price = prices.computeIfAbsent(r.getInstrumentId(), id -> priceOf(id, spot, now));
        if (price == null) {
          continue; // an option the model cannot price now (no volatility): it waits for one that can
        }
        if (Placement.crosses(r.getSide(), r.getStop(), price, Micros.of(r.getLimitPrice()))) {
          fired.add(new Fired(e.key, r.getMemberId(), OrderTrigger.newBuilder().setOrderId(r.getOrderId())
              .setInstrumentId(r.getInstrumentId()).setPrice(Micros.toDecimal(price))
              .setTickSequence(tick.getSequence()).setTriggeredTs(now).setPlacedTs(r.getPlacedTs()).build()));
        }
      }
    }
    for (Fired f : fired) {
      book.delete(f.bookKey());
      context.forward(record.withKey(f.member()).withValue(f.trigger()));
    }
  }

  private Long priceOf(String instrumentId, long spot, Instant now) {
    Instrument instrument = ref.instrument(instrumentId);
    if (instrument == null) {
      return null;
    }
    String underlying = instrument.getUnderlyingId() == null ? instrumentId : instrument.getUnderlyingId();
    return decider.price(instrument, spot, ref.volatility(underlying), now);
  }
}
