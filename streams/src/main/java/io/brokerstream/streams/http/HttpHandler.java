package io.brokerstream.streams.http;

/**
 * What the edge hands each complete request to. A request runs on a handler thread unless {@link
 * #onEventLoop} says it may run on the connection's event-loop thread.
 */
@FunctionalInterface
public interface HttpHandler {
  void handle(HttpCall call);

  /**
   * True for a request whose handling never blocks and takes microseconds: it runs on the event
   * loop that read it, and its answer is written there without waking another thread. Every
   * hand-off between threads costs both of them a context switch, on two cores more than such a
   * request's own work. Anything that may wait (a lock held long, a blocking send, a scan of a
   * store) answers false.
   */
  default boolean onEventLoop(HttpCall call) {
    return false;
  }
}
