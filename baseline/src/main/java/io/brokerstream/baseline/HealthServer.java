package io.brokerstream.baseline;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;

/**
 * GET /health: 200 once every consumer thread has its partitions, 503 before. GET /metrics:
 * counters.
 */
final class HealthServer implements AutoCloseable {
  private final HttpServer server;

  HealthServer(String host, int port, CountDownLatch assigned, Counters counters)
      throws IOException {
    server = HttpServer.create(new InetSocketAddress(host, port), 16);
    server.createContext(
        "/health",
        exchange -> {
          boolean ready = assigned.getCount() == 0;
          reply(
              exchange,
              ready ? 200 : 503,
              ready ? "{\"status\":\"UP\"}" : "{\"status\":\"STARTING\"}");
        });
    server.createContext(
        "/metrics",
        exchange ->
            reply(
                exchange,
                200,
                counters.snapshot().entrySet().stream()
                    .map(e -> "\"" + e.getKey() + "\":" + e.getValue())
                    .collect(Collectors.joining(",", "{", "}"))));
    server.start();
  }

  private static void reply(HttpExchange exchange, int status, String json) throws IOException {
    try (exchange) {
      if (!"GET".equals(exchange.getRequestMethod())) {
        exchange.sendResponseHeaders(405, -1);
        return;
      }
      byte[] body = json.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(status, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
