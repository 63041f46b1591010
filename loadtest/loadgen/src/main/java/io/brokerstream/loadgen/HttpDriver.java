package io.brokerstream.loadgen;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Orders through the gateway as members send them: POST /orders with the member's key, then a long
 * poll of GET /orders/{id} until the result is there. Accept latency is due -> 202, visible latency
 * due -> the result's 200. With {@code oneRequest} each order is a single POST /orders?wait_ms=N
 * that answers with the result (200; a 202 still polls): visible latency only, no accept. At most
 * {@code maxInFlight} connections are open; requests beyond them wait for one, and the wait counts
 * in their latency (it is measured from the due time). With several gateways (instances of the
 * streams app) the orders go to them in turn, an order's poll to the gateway that took it.
 */
final class HttpDriver implements Driver {
  private static final long POST_TIMEOUT_MS = 60_000;
  private final NioHttp[] http;
  private final String[] host;
  private final long waitMs;
  private final boolean oneRequest;
  private final AtomicInteger open = new AtomicInteger();

  HttpDriver(Plan plan, boolean oneRequest) {
    this.oneRequest = oneRequest;
    int gateways = plan.gatewayUrls().size();
    this.http = new NioHttp[gateways];
    this.host = new String[gateways];
    this.waitMs = plan.resultWaitMs();
    for (int g = 0; g < gateways; g++) {
      URI base = URI.create(plan.gatewayUrls().get(g));
      host[g] = base.getHost() + ":" + base.getPort();
      try {
        http[g] =
            new NioHttp(base.getHost(), base.getPort(), Math.max(1, plan.maxInFlight() / gateways));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  @Override
  public void send(StepState step, int seq, OrderMix.Next o) {
    open.incrementAndGet();
    int g = Math.floorMod(seq, http.length);
    NioHttp http = this.http[g];
    String host = this.host[g];
    String id = step.orderId(seq);
    long due = step.schedule.dueMicros(seq);
    String key = "X-Api-Key: " + o.client().key();
    String body =
        "{\"order_id\":\""
            + id
            + "\",\"account_id\":\""
            + o.account()
            + "\",\"instrument_id\":\""
            + o.instrument()
            + "\",\"side\":\""
            + (o.buy() ? "BUY" : "SELL")
            + "\",\"quantity\":"
            + o.quantity()
            + ",\"client_ts\":"
            + due / 1000
            + "}";
    byte[] post =
        NioHttp.request(
            "POST",
            oneRequest ? "/orders?wait_ms=" + waitMs : "/orders",
            host,
            new String[] {key, "Content-Type: application/json"},
            body);
    step.clientSent.set(seq, step.schedule.nowMicros());
    http.submit(
        post,
        POST_TIMEOUT_MS,
        (status, answer, err) -> {
          if (err != null) {
            step.error("POST " + err.getClass().getSimpleName());
            open.decrementAndGet();
          } else if (oneRequest && status == 200) {
            step.client.record("visible", step.schedule.nowMicros() - due);
            open.decrementAndGet();
          } else if (status != 202) {
            step.error("POST " + status);
            open.decrementAndGet();
          } else {
            if (!oneRequest) {
              step.client.record("accept", step.schedule.nowMicros() - due);
            }
            byte[] get =
                NioHttp.request(
                    "GET", "/orders/" + id + "?wait_ms=" + waitMs, host, new String[] {key}, null);
            http.submit(
                get,
                waitMs + 30_000,
                (s, b, e) -> {
                  if (e != null) {
                    step.error("GET " + e.getClass().getSimpleName());
                  } else if (s != 200) {
                    step.error("GET " + s);
                  } else {
                    step.client.record("visible", step.schedule.nowMicros() - due);
                  }
                  open.decrementAndGet();
                });
          }
        });
  }

  @Override
  public int inFlight() {
    return open.get();
  }

  @Override
  public void close() {
    for (NioHttp h : http) {
      h.close();
    }
  }
}
