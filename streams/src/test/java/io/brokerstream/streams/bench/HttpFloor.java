package io.brokerstream.streams.bench;

import io.brokerstream.streams.AppSettings;
import io.brokerstream.streams.gateway.Gateway;
import io.brokerstream.streams.http.HttpCall;
import io.brokerstream.streams.http.HttpEdge;
import io.brokerstream.streams.http.HttpHandler;
import io.brokerstream.streams.http.Transport;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The least the gateway's HTTP work can cost, measured alone: the order gateway's own edge ({@link
 * HttpEdge}, its limits, transport and event-loop threads from the gateway's settings) with nothing
 * behind it. {@code POST /orders} is answered 202 on the event loop that read it, as the gateway
 * answers a placement; {@code GET /orders/{id}} and {@code POST /orders?wait_ms=N} are held and
 * answered 200 with a result-sized body by one thread every {@code answerEveryMs}, as the order
 * flow's commit announces a batch of results to the waiting polls. No JSON parse, no key check, no
 * Kafka send, no store: what is left is HTTP on this machine, so a figure the gateway cannot go
 * below with this edge.
 *
 * <pre>
 *   java -cp streams-tests.jar:streams.jar io.brokerstream.streams.bench.HttpFloor HOST PORT [ANSWER_EVERY_MS]
 *   stdout: "ready PORT"; runs until stdin closes
 * </pre>
 */
public final class HttpFloor {
  // about what the gateway sends: an accepted order, and a decided one
  private static final byte[] ACCEPTED =
      ("{\"order_id\":\"floor\",\"status\":\"PENDING\",\"member_id\":\"M000001\","
              + "\"received_ts\":1764460800000}")
          .getBytes(StandardCharsets.UTF_8);
  private static final byte[] RESULT = result();

  private final List<HttpCall> held = new ArrayList<>();

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      System.err.println("usage: HttpFloor HOST PORT [ANSWER_EVERY_MS]");
      System.exit(2);
    }
    long answerEveryMs = args.length > 2 ? Long.parseLong(args[2]) : 100;
    AppSettings s = AppSettings.of(Map.of());
    HttpFloor floor = new HttpFloor();
    // the gateway's own pool of handler threads: nothing here runs on it, as no route the load uses
    // leaves the event loop
    ExecutorService workers = Executors.newFixedThreadPool(s.getInt("gateway.threads"));
    ScheduledExecutorService announcer = Executors.newSingleThreadScheduledExecutor();
    try (HttpEdge edge = floor.edge(args[0], Integer.parseInt(args[1]), s, workers)) {
      InetSocketAddress bound = edge.start();
      announcer.scheduleAtFixedRate(
          floor::answerHeld, answerEveryMs, answerEveryMs, TimeUnit.MILLISECONDS);
      System.out.println("ready " + bound.getPort());
      System.out.flush();
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      while (in.readLine() != null) {
        // runs until the driver closes stdin
      }
    } finally {
      announcer.shutdownNow();
      workers.shutdownNow();
    }
  }

  /** The gateway's edge, from its settings, with this floor's handler behind it. */
  HttpEdge edge(String host, int port, AppSettings s, ExecutorService workers) {
    return new HttpEdge(
        host,
        port,
        Gateway.limits(s),
        (method, path) -> s.getInt("gateway.max-body-bytes"),
        Transport.of(s.get("gateway.transport")),
        s.getInt("gateway.io-threads"),
        workers,
        handler());
  }

  HttpHandler handler() {
    return new HttpHandler() {
      @Override
      public void handle(HttpCall call) {
        String path = call.rawPath();
        if (call.method().equals("POST") && path.equals("/orders")) {
          if (call.rawQuery() != null && call.rawQuery().startsWith("wait_ms=")) {
            hold(call);
          } else {
            call.respond(202, "application/json", ACCEPTED, Map.of());
          }
        } else if (call.method().equals("GET") && path.startsWith("/orders/")) {
          hold(call);
        } else {
          call.respond(404, "application/json", "{}".getBytes(StandardCharsets.UTF_8), Map.of());
        }
      }

      @Override
      public boolean onEventLoop(HttpCall call) {
        return true;
      }
    };
  }

  private void hold(HttpCall call) {
    synchronized (held) {
      held.add(call);
    }
  }

  /** Answers every held call: what one commit's announcement of its results does. */
  void answerHeld() {
    List<HttpCall> due;
    synchronized (held) {
      due = new ArrayList<>(held);
      held.clear();
    }
    for (HttpCall call : due) {
      call.respond(200, "application/json", RESULT, Map.of());
    }
  }

  int heldCount() {
    synchronized (held) {
      return held.size();
    }
  }

  private static byte[] result() {
    return ("{\"order_id\":\"floor\",\"member_id\":\"M000001\",\"account_id\":\"A000001\","
            + "\"instrument_id\":\"EQ000001\",\"side\":\"BUY\",\"quantity\":100,\"status\":"
            + "\"ACCEPTED\",\"reason\":null,\"fill_price\":\"101.250000\",\"notional\":"
            + "\"10125.000000\",\"realized_pnl\":\"0.000000\",\"received_ts\":1764460800000,"
            + "\"processed_ts\":1764460800012}")
        .getBytes(StandardCharsets.UTF_8);
  }
}
