package io.brokerstream.streams.gateway;

import io.brokerstream.streams.http.HttpCall;
import io.brokerstream.streams.metrics.AppMetrics;
import java.net.InetAddress;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A request whose one answer is counted by the route it took and its status; a placed order's
 * answer also times its acceptance (request read to answer). The route is a name from the gateway's
 * own table, never the path a client sent.
 */
final class MeteredCall implements HttpCall {
  private final HttpCall call;
  private final AppMetrics metrics;
  private final long readNanos = System.nanoTime();
  private final AtomicBoolean answered = new AtomicBoolean();
  private volatile String route = "none";
  private volatile boolean timesAcceptance;

  MeteredCall(HttpCall call, AppMetrics metrics) {
    this.call = call;
    this.metrics = metrics;
  }

  void routed(String route, boolean timesAcceptance) {
    this.route = route;
    this.timesAcceptance = timesAcceptance;
  }

  @Override
  public void respond(int status, String contentType, byte[] body, Map<String, String> headers) {
    call.respond(status, contentType, body, headers);
    if (answered.compareAndSet(false, true)) {
      metrics.answered(route, status);
      if (timesAcceptance && status >= 200 && status < 300) {
        metrics.accepted(System.nanoTime() - readNanos);
      }
    }
  }

  @Override
  public String method() {
    return call.method();
  }

  @Override
  public String rawPath() {
    return call.rawPath();
  }

  @Override
  public String rawQuery() {
    return call.rawQuery();
  }

  @Override
  public String rawTarget() {
    return call.rawTarget();
  }

  @Override
  public String header(String name) {
    return call.header(name);
  }

  @Override
  public byte[] body() {
    return call.body();
  }

  @Override
  public InetAddress client() {
    return call.client();
  }

  @Override
  public void onHangUp(Runnable action) {
    call.onHangUp(action);
  }
}
