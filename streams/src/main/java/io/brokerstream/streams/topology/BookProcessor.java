package io.brokerstream.streams.topology;

import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderTrigger;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.avro.RestingOrder;
import io.brokerstream.avro.Side;
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
 * The book of working orders, in the task that sees an equity's ticks (orders.resting and
 * price-ticks are both keyed by equity). Entries are indexed by level ({@link #bookKey}), so a tick
 * reads only the orders it crosses (and the options on the equity, which the model prices at the
 * tick) rather than the whole book; when one tick crosses many, they trigger in the order they took
 * their place (price-time priority of triggering). A limit order is crossed when the price reaches
 * its limit from the side it waits on; a stop order when the price touches its stop (a buy stop
 * from below, a sell stop from above). A crossed order leaves the book as it triggers, so it
 * triggers once; its member's task decides it.
 */
public final class BookProcessor
    implements Processor<String, SpecificRecord, String, OrderTrigger> {
  private static final StringSerializer KEYS = new StringSerializer();
  private final OrderDecider decider;
  private final FastTriggers fast;
  private final Function<ProcessorContext<?, ?>, ReferenceData> referenceData;
  private ProcessorContext<String, OrderTrigger> context;
  private KeyValueStore<String, RestingOrder> book;
  private ReferenceData ref;
  private BookTops tops;

  public BookProcessor(OrderDecider decider, ReferenceCache cache, FastTriggers fast) {
    this(decider, context -> new StoreReferenceData(context, cache), fast);
  }

  BookProcessor(
      OrderDecider decider,
      Function<ProcessorContext<?, ?>, ReferenceData> referenceData,
      FastTriggers fast) {
    this.decider = decider;
    this.referenceData = referenceData;
    this.fast = fast;
  }

  @Override
  public void init(ProcessorContext<String, OrderTrigger> context) {
    this.context = context;
    book = context.getStateStore(StoreNames.RESTING_BOOK);
    tops = new BookTops(book);
    ref = referenceData.apply(context);
  }

  /** The book entry of a working order: on the book, or (removed) off it. */
  static RestingOrder entry(String member, OpenOrder open, boolean removed) {
    Order order = open.order();
    boolean stop = order.getStopPrice() != null;
    return RestingOrder.newBuilder()
        .setMemberId(member)
        .setOrderId(order.getOrderId())
        .setInstrumentId(order.getInstrumentId())
        .setUnderlyingId(open.underlyingId())
        .setSide(order.getSide())
        .setLimitPrice(stop ? order.getStopPrice() : order.getLimitPrice())
        .setStop(stop)
        .setPlacedTs(Instant.ofEpochMilli(open.placedMs()))
        .setRemoved(removed)
        .setEntry(open.entry())
        .build();
  }

  /**
   * equity|group|level|placed|member|order. An equity's own orders are grouped by side and kind and
   * sorted by level, so the orders one tick crosses are one contiguous range per group: a buy limit
   * is crossed by a price at or below its level (levels from the price up), a sell limit at or
   * above (levels up to the price), a buy stop at or above, a sell stop at or below. Options on the
   * equity ("O") have no level in the equity's price: each is priced by the model at the tick and
   * checked.
   */
  static String bookKey(RestingOrder r) {
    String group =
        !r.getInstrumentId().equals(r.getUnderlyingId())
            ? "O"
            : (r.getSide() == Side.BUY ? "B" : "S") + (r.getStop() ? "S" : "L");
    return String.format(
        "%s|%s|%019d|%019d|%s|%s",
        r.getUnderlyingId(),
        group,
        Micros.of(r.getLimitPrice()),
        r.getPlacedTs().toEpochMilli(),
        r.getMemberId(),
        r.getOrderId());
  }

  @Override
  public void process(Record<String, SpecificRecord> record) {
    if (record.value() instanceof RestingOrder entry) {
      String key = bookKey(entry);
      if (entry.getRemoved()) {
        book.delete(key);
      } else {
        book.put(key, entry);
      }
      tops.changed(entry.getUnderlyingId(), key, !entry.getRemoved());
    } else if (record.value() instanceof PriceTick tick) {
      crossed(record, tick);
    } else if (record.value() != null) {
      throw new IllegalArgumentException("not a book entry or a tick: " + record.value());
    }
  }

  private record Fired(
      String bookKey, long placedMs, String member, String orderId, OrderTrigger trigger) {}

  private void crossed(Record<String, SpecificRecord> record, PriceTick tick) {
    String equity = tick.getInstrumentId();
    long spot = Micros.of(tick.getPrice());
    Instant now = Instant.ofEpochMilli(context.currentSystemTimeMs());
    List<Fired> fired = new ArrayList<>();
    String level = null;
    // Levels from the price up: buy limits and sell stops; levels up to the price: sell limits and
    // buy stops. Most ticks cross nothing: the best level of each group (kept in memory) says so
    // without a read.
    for (BookTops.Group g : BookTops.Group.values()) {
      if (g != BookTops.Group.O && tops.crossed(equity, g, spot)) {
        level = level == null ? String.format("%019d|", spot) : level;
        String prefix = equity + "|" + g + "|";
        collect(
            fired,
            g.fromPriceUp()
                ? book.range(prefix + level, prefix + "~")
                : book.range(prefix, prefix + level + "~"),
            spot,
            tick,
            now);
      }
    }
    if (!tops.any(equity, BookTops.Group.O)) {
      finish(record, fired);
      return;
    }
    Map<String, Long> prices = new HashMap<>();
    try (KeyValueIterator<String, RestingOrder> it = book.prefixScan(equity + "|O|", KEYS)) {
      while (it.hasNext()) {
        KeyValue<String, RestingOrder> e = it.next();
        RestingOrder r = e.value;
        Long price = prices.computeIfAbsent(r.getInstrumentId(), id -> priceOf(id, spot, now));
        // an option the model cannot price now (no volatility) waits for one that can
        if (price != null
            && Placement.crosses(r.getSide(), r.getStop(), price, Micros.of(r.getLimitPrice()))) {
          fired.add(fire(e.key, r, price, tick, now));
        }
      }
    }
    finish(record, fired);
  }

  private void finish(Record<String, SpecificRecord> record, List<Fired> fired) {
    // Price-time priority of triggering: the crossed orders in the order they took their place.
    fired.sort(
        java.util.Comparator.comparingLong(Fired::placedMs)
            .thenComparing(Fired::member)
            .thenComparing(Fired::orderId));
    for (Fired f : fired) {
      book.delete(f.bookKey());
      tops.changed(f.bookKey().substring(0, f.bookKey().indexOf('|')), f.bookKey(), false);
      context.forward(record.withKey(f.member()).withValue(f.trigger()));
      fast.send(f.member(), f.trigger(), record.timestamp());
    }
  }

  /**
   * Every entry of a range is crossed by construction of the key; the check is the guard of that.
   */
  private void collect(
      List<Fired> fired,
      KeyValueIterator<String, RestingOrder> range,
      long spot,
      PriceTick tick,
      Instant now) {
    try (range) {
      while (range.hasNext()) {
        KeyValue<String, RestingOrder> e = range.next();
        RestingOrder r = e.value;
        if (Placement.crosses(r.getSide(), r.getStop(), spot, Micros.of(r.getLimitPrice()))) {
          fired.add(fire(e.key, r, spot, tick, now));
        }
      }
    }
  }

  private static Fired fire(String key, RestingOrder r, long price, PriceTick tick, Instant now) {
    return new Fired(
        key,
        r.getPlacedTs().toEpochMilli(),
        r.getMemberId(),
        r.getOrderId(),
        OrderTrigger.newBuilder()
            .setOrderId(r.getOrderId())
            .setInstrumentId(r.getInstrumentId())
            .setPrice(Micros.toDecimal(price))
            .setTickSequence(tick.getSequence())
            .setTriggeredTs(now)
            .setPlacedTs(r.getPlacedTs())
            .setEntry(r.getEntry())
            .build());
  }

  private Long priceOf(String instrumentId, long spot, Instant now) {
    Instrument instrument = ref.instrument(instrumentId);
    return instrument == null ? null : decider.priceAt(instrument, spot, ref, now);
  }
}
