package io.brokerstream.streams.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.InstrumentStatus;
import io.brokerstream.avro.Member;
import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderCommand;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.UnrealizedPnl;
import io.brokerstream.money.Micros;
import io.brokerstream.rules.AccountEntry;
import io.brokerstream.rules.BuyingPower;
import io.brokerstream.rules.PositionState;
import io.brokerstream.rules.RiskState;
import io.brokerstream.streams.AppSettings;
import io.brokerstream.streams.Topics;
import io.brokerstream.streams.http.EdgeLimits;
import io.brokerstream.streams.http.HttpCall;
import io.brokerstream.streams.http.HttpEdge;
import io.brokerstream.streams.http.HttpHandler;
import io.brokerstream.streams.http.Texts;
import io.brokerstream.streams.http.Transport;
import io.brokerstream.streams.metrics.AppMetrics;
import io.brokerstream.streams.state.BookedPosition;
import io.brokerstream.streams.state.OpenOrder;
import io.brokerstream.streams.topology.LocalResults;
import io.brokerstream.streams.topology.ReferenceCache;
import io.brokerstream.streams.topology.StoreNames;
import io.brokerstream.trace.Stages;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP gateway: members place orders and read their results, positions and risk.
 *
 * <pre>
 *   POST /orders              one order          -> 202 {order_id, ...}
 *   POST /orders:batch        up to 1000 orders   -> 202 {orders: [...]}, all or none
 *   GET  /orders/{id}?wait_ms long-polls until the result exists
 *   POST /orders/{id}/cancel  cancel a working order -> its final result (CANCELLED, or the fill that won)
 *   PATCH  /orders/{id}       amend a working order's quantity, limit or stop -> 202
 *   GET  /members/{id}/orders?status=OPEN  the member's working orders
 *   GET  /accounts/{id}/positions
 *   GET  /members/{id}/risk
 *   GET  /instruments/{id}/status   whether it trades, or is halted (and why)
 *   GET  /health, /openapi.yaml
 * </pre>
 *
 * Every request but health and the OpenAPI document needs an API key (X-Api-Key or Authorization:
 * Bearer): 401 without a known key, 403 for another member's account, order or risk. Results,
 * positions and risk come from interactive queries; a key held by another instance is answered by
 * that instance, through this one.
 *
 * <p>What a request may be is checked in this order, and the first failure answers: the route (404,
 * or 405 with Allow), the key (401, 403), then the request itself (400, 413, 415: every id by
 * {@link io.brokerstream.rules.Identifiers}, numbers as ASCII decimals within their bounds). A
 * refused request writes nothing. The edge ({@link HttpEdge}) has already bounded the connection,
 * the time and the size.
 */
public final class Gateway implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Gateway.class);
  private static final String FORWARDED = "X-Brokerstream-Forwarded";
  private static final String JSON = "application/json";

  /**
   * Every route, with the methods it answers (405 with Allow for the others) and whether it needs a
   * key.
   */
  private enum Route {
    HEALTH("/health", false, "GET"),
    OPENAPI("/openapi.yaml", false, "GET"),
    ORDERS("/orders", true, "POST"),
    BATCH("/orders:batch", true, "POST"),
    ORDER("^/orders/([^/]+)$", true, "GET", "PATCH"),
    // A cancel is a request to the broker, not the removal of a record: the order and its result
    // stay readable.
    CANCEL("^/orders/([^/]+)/cancel$", true, "POST"),
    MEMBER_ORDERS("^/members/([^/]+)/orders$", true, "GET"),
    POSITIONS("^/accounts/([^/]+)/positions$", true, "GET"),
    RISK("^/members/([^/]+)/risk$", true, "GET"),
    INSTRUMENT_STATUS("^/instruments/([^/]+)/status$", true, "GET");

    final String exact;
    final Pattern pattern;
    final boolean keyed;
    final List<String> methods;

    Route(String path, boolean keyed, String... methods) {
      this.exact = path.startsWith("^") ? null : path;
      this.pattern = path.startsWith("^") ? Pattern.compile(path) : null;
      this.keyed = keyed;
      this.methods = List.of(methods);
    }

    /**
     * The path's variable segment (still encoded), "" for an exact route, null when the path is not
     * this route.
     */
    String match(String path) {
      if (exact != null) {
        return exact.equals(path) ? "" : null;
      }
      Matcher m = pattern.matcher(path);
      return m.matches() ? m.group(1) : null;
    }
  }

  private final ObjectMapper json = OrderRequests.strictJson();
  private final KafkaStreams streams;
  private final Queries queries;
  private final OrderSubmitter submitter;
  private final ResultWaiters waiters;
  private final PendingOrders pending;
  private final ApiKeys apiKeys;
  private final OrderRequests requests;
  private final long defaultWaitMs;
  private final long maxWaitMs;
  private final HttpEdge edge;
  private final ExecutorService workers;
  private final ScheduledExecutorService timers =
      ResultPolls.timers(r -> daemon(r, "gateway-timer"));
  private final HttpClient peers =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final long traceOneIn;
  private final int maxBodyBytes;
  private final int maxBatchBodyBytes;
  private final PollLimits polls;
  private final ResultPolls resultPolls;
  private final AtomicLong traced = new AtomicLong();
  private final ReferenceCache cache;
  private final AppMetrics metrics;
  private final MemberRates rates;

  public Gateway(
      AppSettings settings,
      KafkaStreams streams,
      KeyLocations locations,
      OrderSubmitter submitter,
      ResultWaiters waiters,
      PendingOrders pending,
      ReferenceCache cache,
      LocalResults results,
      AppMetrics metrics) {
    this.metrics = metrics;
    this.pending = pending;
    this.streams = streams;
    this.submitter = submitter;
    this.waiters = waiters;
    this.queries =
        new Queries(
            streams,
            locations,
            new HostInfo(settings.get("gateway.advertised-host"), settings.getInt("gateway.port")),
            results);
    this.cache = cache;
    this.apiKeys =
        new ApiKeys(
            hash -> cache.get(StoreNames.API_KEYS, hash, queries::apiKey),
            id -> cache.get(StoreNames.MEMBERS, id, queries::member));
    this.requests = new OrderRequests(json);
    this.rates = new MemberRates(settings.getInt("gateway.member-orders-per-second"));
    this.defaultWaitMs = settings.getLong("gateway.result-wait-ms");
    this.maxWaitMs = settings.getLong("gateway.result-wait-max-ms");
    this.traceOneIn = settings.getLong("trace.sample-one-in");
    this.maxBodyBytes = settings.getInt("gateway.max-body-bytes");
    this.maxBatchBodyBytes = settings.getInt("gateway.max-batch-body-bytes");
    this.polls =
        new PollLimits(
            settings.getInt("gateway.max-waiting-polls"),
            settings.getInt("gateway.max-waiting-polls-per-member"));
    this.workers =
        Executors.newFixedThreadPool(settings.getInt("gateway.threads"), r -> daemon(r, "gateway"));
    this.resultPolls =
        new ResultPolls(
            polls, waiters, timers, workers, settings.getLong("gateway.result-recheck-ms"));
    // A batch may be large; every other body is one order or an amend.
    this.edge =
        new HttpEdge(
            settings.get("gateway.host"),
            settings.getInt("gateway.port"),
            limits(settings),
            (method, path) -> path.equals("/orders:batch") ? maxBatchBodyBytes : maxBodyBytes,
            Transport.of(settings.get("gateway.transport")),
            settings.getInt("gateway.io-threads"),
            workers,
            new HttpHandler() {
              @Override
              public void handle(HttpCall call) {
                Gateway.this.handle(call);
              }

              @Override
              public boolean onEventLoop(HttpCall call) {
                return Gateway.this.onEventLoop(call);
              }
            });
  }

  /** The edge's limits from the gateway.* settings (broker-defaults.properties documents each). */
  public static EdgeLimits limits(AppSettings s) {
    return new EdgeLimits(
        s.getInt("gateway.max-connections"),
        s.getInt("gateway.max-connections-per-address"),
        s.getLong("gateway.header-timeout-ms"),
        s.getLong("gateway.body-timeout-ms"),
        s.getLong("gateway.idle-timeout-ms"),
        s.getInt("gateway.max-request-line-bytes"),
        s.getInt("gateway.max-header-bytes"),
        Math.max(s.getInt("gateway.max-body-bytes"), s.getInt("gateway.max-batch-body-bytes")),
        s.getInt("gateway.max-pipelined-requests"));
  }

  public void start() throws InterruptedException {
    log.info("gateway listening on {} ({})", edge.start(), edge.transport().name().toLowerCase());
  }

  @Override
  public void close() {
    edge.close();
    workers.shutdownNow();
    timers.shutdownNow();
  }

  // --- routing
  // -------------------------------------------------------------------------------------
  /**
   * Placing one order and reading one result run on the event loop that read them: both are a
   * parse, a cache or store lookup and a non-blocking Kafka send or waiter (the producer blocks at
   * most {@code gateway.max-block-ms}, and only when Kafka is far behind). Batches, cancels,
   * amends, scans of positions and risk, and forwards to another instance run on worker threads.
   */
  private boolean onEventLoop(HttpCall call) {
    String path = call.rawPath();
    return switch (call.method()) {
      case "POST" -> path.equals("/orders");
      case "GET" -> path.startsWith("/orders/") && path.indexOf('/', 8) < 0;
      default -> false;
    };
  }

  private void handle(HttpCall request) {
    long received = Stages.nowMicros();
    MeteredCall call = new MeteredCall(request, metrics);
    handle(call, () -> route(call, received));
  }

  private void route(MeteredCall call, long received) {
    String path = call.rawPath();
    String method = call.method();
    Route route = null;
    String segment = null;
    for (Route r : Route.values()) {
      if ((segment = r.match(path)) != null) {
        route = r;
        break;
      }
    }
    if (route == null) {
      throw new HttpError(404, "no route for " + Texts.printable(path, 80));
    }
    // an order placed with wait_ms is answered with its result: its time is the visible latency
    String query = call.rawQuery();
    boolean waits = query != null && query.contains("wait_ms=");
    call.routed(route.name(), route == Route.BATCH || (route == Route.ORDERS && !waits));
    if (!route.methods.contains(method)) {
      throw new HttpError(
              405,
              method
                  + " is not allowed on this path (allowed: "
                  + String.join(", ", route.methods)
                  + ")")
          .with("Allow", String.join(", ", route.methods));
    }
    if (!route.keyed) {
      if (route == Route.HEALTH) {
        health(call);
      } else {
        openApi(call);
      }
      return;
    }
    String member = authenticate(call);
    switch (route) {
      case ORDERS -> placeOne(call, member, received);
      case BATCH -> placeBatch(call, member, received);
      case ORDER -> {
        String orderId = RequestInput.id(segment, "order id");
        if (method.equals("GET")) {
          result(call, member, orderId);
        } else {
          amend(call, member, orderId);
        }
      }
      case CANCEL -> cancel(call, member, RequestInput.id(segment, "order id"));
      case MEMBER_ORDERS -> openOrders(call, member, RequestInput.id(segment, "member id"));
      case POSITIONS -> positions(call, member, RequestInput.id(segment, "account id"));
      case RISK -> risk(call, member, RequestInput.id(segment, "member id"));
      case INSTRUMENT_STATUS -> instrumentStatus(call, RequestInput.id(segment, "instrument id"));
      default -> throw new IllegalStateException("unrouted " + route);
    }
  }

  /** The member's rate (429 with Retry-After beyond it), taken just before anything is written. */
  private void throttle(String member, int requests) {
    rates.take(member, requests, cache.get(StoreNames.MEMBERS, member, queries::member));
  }

  private String authenticate(HttpCall call) {
    String key = call.header("X-Api-Key");
    String auth = call.header("Authorization");
    if (key == null && auth != null && auth.startsWith("Bearer ")) {
      key = auth.substring(7).trim();
    }
    return apiKeys.memberOf(key);
  }

  // --- orders
  // --------------------------------------------------------------------------------------
  private void placeOne(HttpCall call, String member, long received) {
    // Read before anything is written: a bad wait is a 400 and writes nothing.
    long wait = RequestInput.queryLong(call, "wait_ms", 0, 0, maxWaitMs);
    Order order =
        requests.one(RequestInput.jsonBody(call, maxBodyBytes), System.currentTimeMillis());
    authorizeAccount(member, order.getAccountId());
    throttle(member, 1);
    // Answered from the producer's I/O thread: the answer is a small JSON body queued on the
    // connection's event loop, cheaper there than waking a worker thread to do it.
    submitter
        .submit(member, order, traced(received))
        .whenComplete(
            (meta, err) -> {
              if (err != null) {
                error(
                    call,
                    new HttpError(
                        503, "order not accepted: cannot write to Kafka: " + err.getMessage()));
                return;
              }
              String key = Topics.resultKey(member, order.getOrderId());
              pending.accepted(key);
              if (wait == 0) {
                send(call, 202, accepted(order));
              } else {
                awaitPlaced(call, member, key, wait, order);
              }
            });
  }

  /**
   * One request per order ({@code POST /orders?wait_ms=N}): the result, as {@code GET /orders/{id}}
   * gives it, when the order is decided within the wait, else the 202 of a plain placement. Half
   * the requests of a placement and a long poll, for members who wait for the result anyway. The
   * order is written by now, so nothing here answers an error: a result held by another instance,
   * no free poll slot, or a store that is moving all answer the 202, and the member polls as usual.
   */
  private void awaitPlaced(HttpCall call, String member, String key, long wait, Order order) {
    try {
      KeyQueryMetadata where = queries.locate(StoreNames.ORDER_RESULTS, member);
      if (!queries.isLocal(where)) {
        send(call, 202, accepted(order));
        return;
      }
      awaitResult(call, member, key, wait, where, () -> send(call, 202, accepted(order)));
    } catch (RuntimeException notNow) {
      send(call, 202, accepted(order));
    }
  }

  private void placeBatch(HttpCall call, String member, long received) {
    List<Order> orders =
        requests.batch(RequestInput.jsonBody(call, maxBatchBodyBytes), System.currentTimeMillis());
    for (Order order : orders) {
      authorizeAccount(member, order.getAccountId());
    }
    throttle(member, orders.size());
    List<CompletableFuture<?>> sends = new ArrayList<>(orders.size());
    for (Order order : orders) {
      sends.add(submitter.submit(member, order, traced(received)));
    }
    CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new))
        .whenCompleteAsync(
            (v, err) -> {
              if (err != null) {
                error(
                    call,
                    new HttpError(
                        503,
                        "batch not fully written (the idempotent producer may have written part "
                            + "of it; GET each order to see): "
                            + err.getMessage()));
                return;
              }
              orders.forEach(o -> pending.accepted(Topics.resultKey(member, o.getOrderId())));
              ObjectNode body = json.createObjectNode();
              ArrayNode list = body.putArray("orders");
              orders.forEach(o -> list.add(accepted(o)));
              send(call, 202, body);
            },
            workers);
  }

  /** The receive time when this order is one of the 1 in trace.sample-one-in traced, else -1. */
  private long traced(long receivedMicros) {
    return traceOneIn > 0 && traced.incrementAndGet() % traceOneIn == 0 ? receivedMicros : -1;
  }

  /** 403 for another member's account; an unknown account goes to the flow, which rejects it. */
  private void authorizeAccount(String member, String accountId) {
    // the flow's own decoded copy (dropped by the accounts store's updater on every change)
    AccountEntry account = cache.get(StoreNames.ACCOUNTS, accountId, queries::account);
    if (account != null && !account.memberId().equals(member)) {
      throw new HttpError(403, "account " + accountId + " is not one of your accounts");
    }
  }

  private ObjectNode accepted(Order order) {
    ObjectNode node = json.createObjectNode();
    node.put("order_id", order.getOrderId());
    node.put("status", "SUBMITTED");
    node.put("result", "/orders/" + order.getOrderId());
    return node;
  }

  // --- working orders: cancel, amend, list
  // ---------------------------------------------------------
  /**
   * Writes the cancel, then answers as GET /orders/{id} does: with the order's final result,
   * CANCELLED when the cancel won, ACCEPTED (or REJECTED) when a fill got there first. 409 when the
   * order already ended.
   */
  private void cancel(HttpCall call, String member, String orderId) {
    refuseWhenEnded(member, orderId, "cancel");
    throttle(member, 1);
    submitter
        .command(member, OrderRequests.cancel(orderId, System.currentTimeMillis()))
        .whenCompleteAsync(
            (meta, err) -> {
              if (err != null) {
                error(
                    call,
                    new HttpError(
                        503, "cancel not accepted: cannot write to Kafka: " + err.getMessage()));
                return;
              }
              handle(call, () -> result(call, member, orderId));
            },
            workers);
  }

  /**
   * Writes the amend: 202, and the order's new terms show in GET /members/{id}/orders?status=OPEN
   * (or it fills, and GET /orders/{id} has the result); a refused amend leaves it unchanged, with
   * the reason in its history (order-events). 409 when the order already ended.
   */
  private void amend(HttpCall call, String member, String orderId) {
    OrderCommand command =
        requests.amend(
            RequestInput.jsonBody(call, maxBodyBytes), orderId, System.currentTimeMillis());
    refuseWhenEnded(member, orderId, "amend");
    throttle(member, 1);
    submitter
        .command(member, command)
        .whenCompleteAsync(
            (meta, err) -> {
              if (err != null) {
                error(
                    call,
                    new HttpError(
                        503, "amend not accepted: cannot write to Kafka: " + err.getMessage()));
                return;
              }
              ObjectNode node = json.createObjectNode();
              node.put("order_id", orderId);
              node.put("status", "AMEND_REQUESTED");
              node.put("open_orders", "/members/" + member + "/orders?status=OPEN");
              node.put("result", "/orders/" + orderId);
              send(call, 202, node);
            },
            workers);
  }

  /**
   * 409 for an order whose final result this instance holds: nothing is left to cancel or amend.
   */
  private void refuseWhenEnded(String member, String orderId, String what) {
    String key = Topics.resultKey(member, orderId);
    KeyQueryMetadata where = queries.locate(StoreNames.ORDER_RESULTS, member);
    if (queries.isLocal(where)) {
      OrderResult ended = queries.result(where, key);
      if (ended != null) {
        throw new HttpError(
            409,
            "cannot "
                + what
                + " order "
                + orderId
                + ": it is not working, it ended "
                + ended.getStatus());
      }
    }
  }

  /** A member's working orders, from its task's open-orders store. */
  private void openOrders(HttpCall call, String member, String memberId) {
    if (!memberId.equals(member)) {
      throw new HttpError(403, "you may list only your own orders (member " + member + ")");
    }
    String status = RequestInput.queryText(call, "status", "OPEN");
    if (!status.equals("OPEN")) {
      throw HttpError.badField(
          "status",
          "only OPEN (working orders) is listed here; an order that ended is at "
              + "GET /orders/{id}, its history in the account statement");
    }
    KeyQueryMetadata where = queries.locate(StoreNames.OPEN_ORDERS, memberId);
    if (!queries.isLocal(where)) {
      forward(call, where.activeHost());
      return;
    }
    ObjectNode body = json.createObjectNode();
    body.put("member_id", memberId);
    ArrayNode list = body.putArray("orders");
    for (OpenOrder open : queries.openOrders(where, memberId)) {
      Order o = open.order();
      ObjectNode node = list.addObject();
      node.put("order_id", o.getOrderId());
      node.put("status", "OPEN");
      node.put("account_id", o.getAccountId());
      node.put("instrument_id", o.getInstrumentId());
      node.put("side", o.getSide().name());
      node.put("quantity", o.getQuantity());
      node.put("limit_price", o.getLimitPrice() == null ? null : o.getLimitPrice().toPlainString());
      node.put("stop_price", o.getStopPrice() == null ? null : o.getStopPrice().toPlainString());
      node.put("time_in_force", o.getTimeInForce().name());
      node.put("reserved", Micros.format(open.reserved()));
      node.put("ingest_ts", java.time.Instant.ofEpochMilli(open.receivedMs()).toString());
      node.put("placed_ts", java.time.Instant.ofEpochMilli(open.placedMs()).toString());
      node.put(
          "expires_ts",
          open.expiresMs() == 0
              ? null
              : java.time.Instant.ofEpochMilli(open.expiresMs()).toString());
    }
    send(call, 200, body);
  }

  // --- results
  // -------------------------------------------------------------------------------------
  private void result(HttpCall call, String member, String orderId) {
    // Another member's order and one that does not exist look the same: the key includes the
    // member.
    String key = Topics.resultKey(member, orderId);
    KeyQueryMetadata where = queries.locate(StoreNames.ORDER_RESULTS, member);
    if (!queries.isLocal(where)) {
      // GET /orders/{id} there, also for a cancel: the cancel itself is already written (ids need
      // no escaping)
      forward(
          call,
          where.activeHost(),
          "/orders/" + orderId + (call.rawQuery() == null ? "" : "?" + call.rawQuery()));
      return;
    }
    long wait = RequestInput.queryLong(call, "wait_ms", defaultWaitMs, 0, maxWaitMs);
    // A waiting poll holds a connection and a waiter: bounded per member and in all. The store is
    // read once per poll (after the waiter is registered, so no result slips between), except when
    // no slot is free: a result that is already there is still answered rather than refused.
    if (wait == 0) {
      answerNow(
          call, where, key, new HttpError(404, "no result for order " + orderId + " (unknown)"));
      return;
    }
    try {
      awaitResult(
          call,
          member,
          key,
          wait,
          where,
          () -> {
            PendingOrders.Status<OrderResult> now =
                pending.status(key, () -> queries.result(where, key));
            if (now.result() != null) {
              handle(call, () -> respondResult(call, now.result()));
            } else if (now.pending()) {
              send(call, 202, pendingBody(orderId));
            } else {
              error(
                  call,
                  new HttpError(
                      404, "no result for order " + orderId + " after " + wait + " ms (unknown)"));
            }
          });
    } catch (HttpError full) {
      if (full.status != 429) {
        throw full;
      }
      answerNow(call, where, key, full);
    }
  }

  /** Waits up to {@code wait} ms for a local result: answered when it is there, else timedOut. */
  private void awaitResult(
      HttpCall call,
      String member,
      String key,
      long wait,
      KeyQueryMetadata where,
      Runnable timedOut) {
    resultPolls.await(
        call,
        member,
        key,
        wait,
        () -> pending.isPending(key),
        () -> queries.result(where, key),
        r -> handle(call, () -> respondResult(call, r)),
        timedOut);
  }

  /** The stored result, or `otherwise` when there is none yet. */
  private void answerNow(HttpCall call, KeyQueryMetadata where, String key, HttpError otherwise) {
    PendingOrders.Status<OrderResult> now = pending.status(key, () -> queries.result(where, key));
    if (now.result() != null) {
      respondResult(call, now.result());
    } else if (now.pending() && otherwise.status == 404) {
      send(call, 202, pendingBody(key.substring(key.indexOf('|') + 1)));
    } else {
      throw otherwise;
    }
  }

  /** An order this gateway wrote to Kafka whose result is not there yet: accepted, not unknown. */
  private ObjectNode pendingBody(String orderId) {
    ObjectNode node = json.createObjectNode();
    node.put("order_id", orderId);
    node.put("status", "PENDING");
    node.put("result", "/orders/" + orderId);
    return node;
  }

  private void respondResult(HttpCall call, OrderResult r) {
    ObjectNode node = json.createObjectNode();
    node.put("order_id", r.getOrderId());
    node.put("status", r.getStatus().name());
    node.put("reason", r.getReason() == null ? null : r.getReason().name());
    node.put("reason_detail", r.getReasonDetail());
    node.put("member_id", r.getMemberId());
    node.put("account_id", r.getAccountId());
    node.put("instrument_id", r.getInstrumentId());
    node.put("side", r.getSide().name());
    node.put("quantity", r.getQuantity());
    node.put("fill_price", r.getFillPrice() == null ? null : r.getFillPrice().toPlainString());
    node.put(
        "realized_pnl", r.getRealizedPnl() == null ? null : r.getRealizedPnl().toPlainString());
    node.put("client_ts", r.getClientTs().toString());
    node.put("ingest_ts", r.getIngestTs().toString());
    node.put("processed_ts", r.getProcessedTs().toString());
    node.put("trace_id", r.getTraceId());
    node.put("limit_price", r.getLimitPrice() == null ? null : r.getLimitPrice().toPlainString());
    node.put("short_sale", r.getShortSale());
    node.put("closed_quantity", r.getClosedQuantity());
    node.put(
        "closed_avg_cost",
        r.getClosedAvgCost() == null ? null : r.getClosedAvgCost().toPlainString());
    if (r.getPositionVersion() == null) {
      node.putNull("position_version");
    } else {
      node.put("position_version", r.getPositionVersion());
    }
    send(call, 200, node);
  }

  // --- positions and risk
  // --------------------------------------------------------------------------
  private void positions(HttpCall call, String member, String accountId) {
    AccountEntry account = queries.account(accountId);
    if (account == null) {
      throw new HttpError(404, "no account " + accountId);
    }
    if (!account.memberId().equals(member)) {
      throw new HttpError(403, "account " + accountId + " is not one of your accounts");
    }
    KeyQueryMetadata where = queries.locate(StoreNames.POSITIONS, member);
    if (!queries.isLocal(where)) {
      forward(call, where.activeHost());
      return;
    }
    ObjectNode body = json.createObjectNode();
    body.put("account_id", accountId);
    body.put("member_id", member);
    List<KeyValue<String, BookedPosition>> positions = queries.positions(where, accountId);
    body.put("cash", Micros.format(account.cashMicros() + Queries.cashOf(positions)));
    ArrayNode list = body.putArray("positions");
    for (KeyValue<String, BookedPosition> kv : positions) {
      PositionState state = kv.value.state();
      ObjectNode p = list.addObject();
      p.put("instrument_id", kv.key);
      p.put("quantity", state.quantity());
      p.put("avg_cost", Micros.format(state.avgCost()));
      p.put("cost_basis", Micros.format(state.costBasis()));
      p.put("realized_pnl", Micros.format(state.realized()));
      p.put("version", state.version());
    }
    send(call, 200, body);
  }

  private void risk(HttpCall call, String member, String memberId) {
    if (!memberId.equals(member)) {
      throw new HttpError(403, "you may read only your own risk (member " + member + ")");
    }
    Member m = queries.member(memberId);
    if (m == null) {
      throw new HttpError(404, "no member " + memberId);
    }
    KeyQueryMetadata where = queries.locate(StoreNames.MEMBER_RISK, memberId);
    if (!queries.isLocal(where)) {
      forward(call, where.activeHost());
      return;
    }
    RiskState risk = queries.risk(where, memberId);
    long deposited = 0;
    long cash = 0;
    ObjectNode body = json.createObjectNode();
    ArrayNode accounts = json.createArrayNode();
    for (AccountEntry a : queries.accountsOf(memberId)) {
      long accountCash = a.cashMicros() + queries.cashDelta(where, a.accountId());
      deposited += a.cashMicros();
      cash += accountCash;
      ObjectNode node = accounts.addObject();
      node.put("account_id", a.accountId());
      node.put("status", a.status());
      node.put("deposited_cash", Micros.format(a.cashMicros()));
      node.put("cash", Micros.format(accountCash));
    }
    long credit = Micros.of(m.getCreditLimit());
    long reserved = queries.reserved(where, memberId);
    // the decision's own rule: what it would check an order against, reservations included
    UnrealizedPnl marks = queries.memberMarks(memberId);
    long loss = marks == null ? 0 : Math.min(0, Micros.of(marks.getUnrealizedLoss()));
    BuyingPower power = new BuyingPower(deposited, credit, risk.realized(), loss);
    body.put("member_id", memberId);
    body.put("status", m.getStatus());
    body.put("trading_state", m.getTradingState());
    if (m.getMaxOrderQuantity() != null) {
      body.put("max_order_quantity", m.getMaxOrderQuantity());
    }
    if (m.getMaxOrderNotional() != null) {
      body.put("max_order_notional", m.getMaxOrderNotional().toPlainString());
    }
    body.put("max_orders_per_second", rates.limitOf(m));
    body.put("credit_limit", Micros.format(credit));
    body.put("deposited_cash", Micros.format(deposited));
    body.put("cash", Micros.format(cash));
    body.put("realized_pnl", Micros.format(risk.realized()));
    body.put("unrealized_loss", Micros.format(power.unrealizedLoss()));
    body.put("marks_as_of", marks == null ? null : marks.getComputedTs().toString());
    body.put("committed", Micros.format(risk.committed()));
    body.put("reserved", Micros.format(reserved));
    body.put("buying_power", Micros.format(power.total()));
    body.put("available", Micros.format(power.available(risk.committed(), reserved)));
    body.set("accounts", accounts);
    send(call, 200, body);
  }

  /**
   * Whether an instrument trades: an option trades when its equity does. Any member may ask: a halt
   * is what every member needs to know.
   */
  private void instrumentStatus(HttpCall call, String instrumentId) {
    Instrument instrument = queries.instrument(instrumentId);
    if (instrument == null) {
      throw new HttpError(404, "no instrument " + instrumentId);
    }
    String equity =
        instrument.getUnderlyingId() == null ? instrumentId : instrument.getUnderlyingId();
    InstrumentStatus status = queries.status(equity);
    ObjectNode body = json.createObjectNode();
    body.put("instrument_id", instrumentId);
    body.put("equity_id", equity);
    boolean halted = status != null && "HALTED".equals(status.getState());
    body.put("state", halted ? "HALTED" : "TRADING");
    if (status != null) {
      body.put("reason", status.getReason());
      body.put("detail", status.getDetail());
      body.put("changed_by", status.getChangedBy());
      body.put("since", status.getSinceTs().toString());
      body.put(
          "reference_price",
          status.getReferencePrice() == null ? null : status.getReferencePrice().toPlainString());
    }
    send(call, 200, body);
  }

  // --- plumbing
  // ------------------------------------------------------------------------------------
  private void health(HttpCall call) {
    KafkaStreams.State state = streams.state();
    ObjectNode node = json.createObjectNode();
    node.put("state", state.name());
    node.put("instance", queries.self().host() + ":" + queries.self().port());
    node.put("waiting_long_polls", polls.waiting());
    node.put("result_waiters", waiters.waitingCount());
    node.put("open_connections", edge.openConnections());
    boolean running = state == KafkaStreams.State.RUNNING;
    send(call, running ? 200 : 503, node, running ? Map.of() : Map.of("Retry-After", "1"));
  }

  private void openApi(HttpCall call) {
    try (InputStream in = Gateway.class.getResourceAsStream("/openapi.yaml")) {
      call.respond(200, "application/yaml", in.readAllBytes(), Map.of());
    } catch (IOException e) {
      throw new IllegalStateException("openapi.yaml is missing from the jar", e);
    }
  }

  /**
   * Answers with what the instance holding the key answers (once: a forwarded request never
   * forwards).
   */
  private void forward(HttpCall call, HostInfo owner) {
    forward(call, owner, call.rawTarget());
  }

  /** The same, as GET {@code pathAndQuery} on the owner. */
  private void forward(HttpCall call, HostInfo owner, String pathAndQuery) {
    if (call.header(FORWARDED) != null) {
      throw new HttpError(503, "the key moved between instances; try again shortly");
    }
    URI target = URI.create("http://" + owner.host() + ":" + owner.port() + pathAndQuery);
    HttpRequest.Builder req =
        HttpRequest.newBuilder(target)
            .timeout(Duration.ofMillis(maxWaitMs + 5000))
            .header(FORWARDED, queries.self().toString())
            .GET();
    for (String header : List.of("X-Api-Key", "Authorization")) {
      String value = call.header(header);
      if (value != null) {
        req.header(header, value);
      }
    }
    peers
        .sendAsync(req.build(), HttpResponse.BodyHandlers.ofByteArray())
        .whenCompleteAsync(
            (resp, err) -> {
              if (err != null) {
                error(
                    call,
                    new HttpError(
                        502,
                        "instance "
                            + owner
                            + " holding this key did not answer: "
                            + err.getMessage()));
                return;
              }
              Map<String, String> headers = new LinkedHashMap<>();
              resp.headers()
                  .firstValue("Retry-After")
                  .ifPresent(v -> headers.put("Retry-After", v));
              call.respond(
                  resp.statusCode(),
                  resp.headers().firstValue("Content-Type").orElse(JSON),
                  resp.body(),
                  headers);
            },
            workers);
  }

  /**
   * Runs a step of a request (its first, or one after a Kafka write), answering any refusal of it.
   */
  private void handle(HttpCall call, Runnable step) {
    try {
      step.run();
    } catch (HttpError e) {
      error(call, e);
    } catch (InvalidStateStoreException e) {
      error(
          call,
          new HttpError(
              503, "the order flow's state is being restored or moved; try again shortly"));
    } catch (RuntimeException e) {
      log.error("gateway error on {} {}", call.method(), Texts.printable(call.rawPath(), 200), e);
      error(call, new HttpError(500, "internal error: " + e.getClass().getSimpleName()));
    }
  }

  private void error(HttpCall call, HttpError e) {
    ObjectNode node = json.createObjectNode();
    node.put("error", Texts.printable(e.getMessage(), 1000));
    if (e.field != null) {
      node.put("field", Texts.printable(e.field, 100));
    }
    Map<String, String> headers = new LinkedHashMap<>(e.headers);
    if (e.status == 503 || e.status == 429) {
      headers.putIfAbsent("Retry-After", "1");
    }
    send(call, e.status, node, headers);
  }

  private void send(HttpCall call, int status, ObjectNode body) {
    send(call, status, body, Map.of());
  }

  private void send(HttpCall call, int status, ObjectNode body, Map<String, String> headers) {
    byte[] bytes;
    try {
      bytes = json.writeValueAsBytes(body);
    } catch (IOException e) {
      log.error("cannot encode a response", e);
      bytes = Texts.errorJson("internal error: cannot encode the response");
      status = 500;
    }
    call.respond(status, JSON, bytes, headers);
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
