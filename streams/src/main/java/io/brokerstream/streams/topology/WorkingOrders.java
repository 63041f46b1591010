package io.brokerstream.streams.topology;

import io.brokerstream.streams.state.OpenOrder;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A member's working orders and the buying power they hold, in the member's task. Every path that takes
 * an order off (fill, rejection at the fill, cancel) goes through {@link #take}, which releases what it
 * reserved, so no reservation outlives its order.
 */
final class WorkingOrders {
  private final KeyValueStore<String, OpenOrder> open;
  private final KeyValueStore<String, Long> reserved;

  WorkingOrders(ProcessorContext<?, ?> context) {
    open = context.getStateStore(StoreNames.OPEN_ORDERS);
    reserved = context.getStateStore(StoreNames.MEMBER_RESERVED);
  }

  long reserved(String member) {
    Long r = reserved.get(member);
    return r == null ? 0 : r;
  }

  boolean working(String resultKey) {
    return open.get(resultKey) != null;
  }

  void rest(String member, String resultKey, OpenOrder order) {
    open.put(resultKey, order);
    if (order.reserved() != 0) {
      reserved.put(member, Math.addExact(reserved(member), order.reserved()));
    }
  }

  /** The working order under this key, off the book with its reservation released; null if none works. */
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
    return order;
  }
}
