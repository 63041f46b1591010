package io.brokerstream.streams.topology;

import io.brokerstream.streams.state.OpenOrder;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A member's working orders, the buying power they hold and when the DAY ones expire, in the
 * member's task. Every path that takes an order off (fill, rejection at the fill, cancel, amend,
 * expiry) goes through {@link #take}, which releases what it reserved and forgets its expiry, so no
 * reservation outlives its order.
 */
final class WorkingOrders {
  private final KeyValueStore<String, OpenOrder> open;
  private final KeyValueStore<String, Long> reserved;
  private final KeyValueStore<String, Long> expiries;

  WorkingOrders(ProcessorContext<?, ?> context) {
    open = context.getStateStore(StoreNames.OPEN_ORDERS);
    reserved = context.getStateStore(StoreNames.MEMBER_RESERVED);
    expiries = context.getStateStore(StoreNames.ORDER_EXPIRIES);
  }

  long reserved(String member) {
    Long r = reserved.get(member);
    return r == null ? 0 : r;
  }

  boolean working(String resultKey) {
    return open.get(resultKey) != null;
  }

  OpenOrder get(String resultKey) {
    return open.get(resultKey);
  }

  void rest(String member, String resultKey, OpenOrder order) {
    open.put(resultKey, order);
    if (order.reserved() != 0) {
      reserved.put(member, Math.addExact(reserved(member), order.reserved()));
    }
    if (order.expiresMs() > 0) {
      expiries.put(expiryKey(order.expiresMs(), resultKey), order.expiresMs());
    }
  }

  /**
   * The working order under this key, off the book with its reservation released; null if none
   * works.
   */
  OpenOrder take(String member, String resultKey) {
    OpenOrder order = open.get(resultKey);
    if (order == null) {
      return null;
    }
    open.delete(resultKey);
    if (order.reserved() != 0) {
      long left = reserved(member) - order.reserved();
      if (left == 0) {
        reserved.delete(member);
      } else {
        reserved.put(member, left);
      }
    }
    if (order.expiresMs() > 0) {
      expiries.delete(expiryKey(order.expiresMs(), resultKey));
    }
    return order;
  }

  /**
   * Up to {@code max} keys (member|order id) of orders whose expiry is at or before {@code nowMs},
   * soonest first.
   */
  List<String> expiredBy(long nowMs, int max) {
    List<String> due = new ArrayList<>();
    // Zero-padded times sort as strings, and '}' right after the '|' that follows the time.
    try (KeyValueIterator<String, Long> it = expiries.range("0", String.format("%019d}", nowMs))) {
      while (it.hasNext() && due.size() < max) {
        String key = it.next().key;
        due.add(key.substring(key.indexOf('|') + 1));
      }
    }
    return due;
  }

  /** The soonest expiry of a working order of this task, or -1 when none has one. */
  long earliestExpiryMs() {
    try (KeyValueIterator<String, Long> it = expiries.all()) {
      return it.hasNext() ? it.next().value : -1;
    }
  }

  private static String expiryKey(long expiresMs, String resultKey) {
    return String.format("%019d|%s", expiresMs, resultKey);
  }
}
