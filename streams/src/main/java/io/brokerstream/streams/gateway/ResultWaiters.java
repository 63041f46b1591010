package io.brokerstream.streams.gateway;

import io.brokerstream.avro.OrderResult;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Long polls waiting for order results. The results table calls {@link #complete} for every result
 * it materializes on this instance; a waiter registered for that order id is answered then.
 */
public final class ResultWaiters {
  private final Map<String, List<Consumer<OrderResult>>> waiting = new ConcurrentHashMap<>();

  /**
   * Registers before the caller looks in the store, so a result landing in between is not missed.
   */
  Runnable await(String orderId, Consumer<OrderResult> onResult) {
    List<Consumer<OrderResult>> list =
        waiting.computeIfAbsent(orderId, k -> new CopyOnWriteArrayList<>());
    list.add(onResult);
    return () ->
        waiting.computeIfPresent(
            orderId,
            (k, l) -> {
              l.remove(onResult);
              return l.isEmpty() ? null : l;
            });
  }

  public void complete(String orderId, OrderResult result) {
    if (result == null) {
      return;
    }
    List<Consumer<OrderResult>> list = waiting.remove(orderId);
    if (list != null) {
      list.forEach(w -> w.accept(result));
    }
  }

  int waitingCount() {
    return waiting.size();
  }
}
