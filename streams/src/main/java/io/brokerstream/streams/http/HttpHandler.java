package io.brokerstream.streams.http;

/** What the edge hands each complete request to, on a handler thread (never an I/O thread). */
@FunctionalInterface
public interface HttpHandler {
  void handle(HttpCall call);
}
