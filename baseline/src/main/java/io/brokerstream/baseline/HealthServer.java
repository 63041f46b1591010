package io.brokerstream.baseline;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;

/**
 * GET /health: 200 once every consumer thread has its partitions, 503 before. GET /metrics: the
 * counters and the JVM's metrics in Prometheus' text format.
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
    PrometheusRegistry registry = counters.registry();
    PrometheusTextFormatWriter text = PrometheusTextFormatWriter.create();
    server.createContext(
        "/metrics",
        exchange -> {
          ByteArrayOutputStream out = new ByteArrayOutputStream();
          text.write(out, registry.scrape());
          reply(exchange, 200, text.getContentType(), out.toByteArray());
        });
    server.start();
  }

  private static void reply(HttpExchange exchange, int status, String json) throws IOException {
    reply(exchange, status, "application/json", json.getBytes(StandardCharsets.UTF_8));
  }

  private static void reply(HttpExchange exchange, int status, String type, byte[] body)
      throws IOException {
    try (exchange) {
      if (!"GET".equals(exchange.getRequestMethod())) {
        exchange.sendResponseHeaders(405, -1);
        return;
      }
      exchange.getResponseHeaders().set("Content-Type", type);
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
