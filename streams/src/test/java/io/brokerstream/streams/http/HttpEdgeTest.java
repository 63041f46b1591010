package io.brokerstream.streams.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The edge against raw sockets, as a hostile client would talk to it: half requests, promised
 * bodies that never come, bytes dripped, absurd chunk sizes, too many sockets from one address.
 * Each must cost the client its own connection and nobody else anything. Deadlines are set short
 * here so the tests are quick. They run on Linux's epoll (the default where it loads); {@link
 * HttpEdgeNioTest} runs them all again on the JDK's selector.
 */
class HttpEdgeTest {
  private static final EdgeLimits LIMITS =
      new EdgeLimits(50, 8, 400, 400, 1500, 256, 1024, 16_384, 4);

  private final ExecutorService handlers =
      Executors.newFixedThreadPool(4, r -> new Thread(r, "handler"));
  private final CountDownLatch hungUp = new CountDownLatch(1);
  private HttpEdge edge;
  private InetSocketAddress address;

  @BeforeEach
  void start() throws InterruptedException {
    startWith(LIMITS);
  }

  /** The transport every edge of these tests runs on. */
  Transport transport() {
    return Transport.of("epoll");
  }

  private void startWith(EdgeLimits limits) throws InterruptedException {
    if (edge != null) {
      edge.close();
    }
    edge =
        new HttpEdge(
            "127.0.0.1",
            0,
            limits,
            (method, path) -> limits.maxBodyBytes(),
            transport(),
            2,
            handlers,
            new HttpHandler() {
              @Override
              public void handle(HttpCall call) {
                answer(call);
              }

              @Override
              public boolean onEventLoop(HttpCall call) {
                return call.rawPath().startsWith("/loop/");
              }
            });
    address = edge.start();
  }

  private void answer(HttpCall call) {
    switch (call.rawPath()) {
      case "/slow" -> {
        sleep(300);
        call.respond(200, "text/plain", "slow".getBytes(StandardCharsets.US_ASCII), Map.of());
      }
      case "/hold" ->
          call.onHangUp(hungUp::countDown); // never answered: a long poll whose client leaves
      case "/boom", "/loop/boom" -> throw new IllegalStateException("boom");
      case "/loop/thread" ->
          call.respond(
              200,
              "text/plain",
              Thread.currentThread().getName().getBytes(StandardCharsets.US_ASCII),
              Map.of());
      default ->
          call.respond(
              200,
              "text/plain",
              (call.method() + " " + call.rawTarget() + " " + call.body().length)
                  .getBytes(StandardCharsets.US_ASCII),
              Map.of("X-Seen", "yes"));
    }
  }

  @AfterEach
  void stop() {
    edge.close();
    handlers.shutdownNow();
  }

  @Test
  void answersARequestAndKeepsTheConnectionForTheNext() throws IOException {
    try (Socket s = connect("127.0.0.1")) {
      send(s, "GET /a?x=1 HTTP/1.1\r\nHost: t\r\n\r\n");
      Response first = read(s);
      send(s, "POST /b HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc");
      Response second = read(s);
      assertThat(first.status).isEqualTo(200);
      assertThat(first.body).isEqualTo("GET /a?x=1 0");
      assertThat(first.head).containsIgnoringCase("x-seen: yes");
      assertThat(second.body).isEqualTo("POST /b 3");
    }
  }

  @Test
  void answersPipelinedRequestsInTheOrderTheyCame() throws IOException {
    try (Socket s = connect("127.0.0.1")) {
      send(s, "GET /slow HTTP/1.1\r\nHost: t\r\n\r\nGET /fast HTTP/1.1\r\nHost: t\r\n\r\n");
      assertThat(read(s).body).isEqualTo("slow");
      assertThat(read(s).body).isEqualTo("GET /fast 0");
    }
  }

  @Test
  void quickRequestsRunOnTheEventLoopAndKeepTheirPlaceAmongPipelinedOnes() throws IOException {
    try (Socket s = connect("127.0.0.1")) {
      send(
          s,
          "GET /slow HTTP/1.1\r\nHost: t\r\n\r\n"
              + "GET /loop/thread HTTP/1.1\r\nHost: t\r\n\r\n"
              + "GET /loop/boom HTTP/1.1\r\nHost: t\r\n\r\n"
              + "GET /fast HTTP/1.1\r\nHost: t\r\n\r\n"
              + "GET /loop/thread HTTP/1.1\r\nHost: t\r\n\r\n");
      assertThat(read(s).body).isEqualTo("slow");
      Response inline = read(s);
      assertThat(inline.status).isEqualTo(200);
      assertThat(inline.body).isNotEqualTo("handler"); // the event loop's own thread
      assertThat(read(s).status).isEqualTo(500); // a throwing inline handler: 500, connection kept
      assertThat(read(s).body).isEqualTo("GET /fast 0");
      assertThat(read(s).body).isEqualTo(inline.body);
    }
  }

  @Test
  void refusesChunkSizesThatDoNotFitAndBodiesThatGrowPastTheLimit() throws IOException {
    for (String size : List.of("FFFFFFFF", "80000000", "FFFFFFFFFFFFFFFFFF", "zz")) {
      try (Socket s = connect("127.0.0.1")) {
        send(
            s,
            "POST /c HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                + size
                + "\r\nabc\r\n0\r\n\r\n");
        Response r = read(s);
        assertThat(r.status).as("chunk size %s", size).isIn(400, 413);
        assertThat(r.head).containsIgnoringCase("connection: close");
        assertClosed(s);
      }
    }
    try (Socket s = connect("127.0.0.1")) {
      send(
          s,
          "POST /c HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n7fffffff\r\n"
              + "x".repeat(20_000));
      Response r = read(s);
      assertThat(r.status).isEqualTo(413);
      assertThat(r.body).contains("16384");
    }
  }

  @Test
  void eachRouteIsHeldToItsOwnBodyLimitAsSoonAsItIsPassed()
      throws IOException, InterruptedException {
    edge.close();
    edge =
        new HttpEdge(
            "127.0.0.1",
            0,
            LIMITS,
            (method, path) -> path.equals("/small") ? 100 : 16_384,
            transport(),
            2,
            handlers,
            call -> call.respond(200, "text/plain", new byte[0], Map.of()));
    address = edge.start();
    try (Socket s = connect("127.0.0.1")) {
      // a chunk that claims 2 GB: refused once 100 bytes are past, not when 2 GB would have come
      send(
          s,
          "POST /small HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n7fffffff\r\n"
              + "x".repeat(300));
      Response r = read(s);
      assertThat(r.status).isEqualTo(413);
      assertThat(r.body).contains("larger than 100 bytes");
      assertClosed(s);
    }
    try (Socket s = connect("127.0.0.1")) {
      send(s, "POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 101\r\n\r\n");
      assertThat(read(s).status).isEqualTo(413);
    }
    try (Socket s = connect("127.0.0.1")) {
      send(s, "POST /other HTTP/1.1\r\nHost: t\r\nContent-Length: 300\r\n\r\n" + "y".repeat(300));
      assertThat(read(s).status).isEqualTo(200);
    }
  }

  @Test
  void aRequestLineOrHeadersThatNeverFinishAre408AndClosed() throws IOException {
    try (Socket half = connect("127.0.0.1");
        Socket noBody = connect("127.0.0.1")) {
      send(half, "GET /orders/1 HT");
      send(noBody, "POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nonly part");
      // meanwhile another client is served at once
      try (Socket other = connect("127.0.0.1")) {
        send(other, "GET /ok HTTP/1.1\r\nHost: t\r\n\r\n");
        assertThat(read(other).status).isEqualTo(200);
      }
      Response late = read(half);
      assertThat(late.status).isEqualTo(408);
      assertThat(late.body).contains("request line and headers");
      assertThat(read(noBody).body).contains("request body");
      assertClosed(half);
    }
  }

  @Test
  void dripFeedingBytesDoesNotExtendTheHeaderDeadline() throws IOException, InterruptedException {
    try (Socket s = connect("127.0.0.1")) {
      long start = System.nanoTime();
      String request = "GET /drip HTTP/1.1\r\nHost: t\r\nX-Pad: " + "p".repeat(40);
      int sent = 0;
      try {
        for (; sent < request.length(); sent++) {
          s.getOutputStream().write(request.charAt(sent));
          s.getOutputStream().flush();
          Thread.sleep(50);
        }
      } catch (IOException closedOnUs) {
        // the edge gave up on the request and closed: expected
      }
      Response r = read(s);
      assertThat(r.status).isEqualTo(408);
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2_000);
      assertThat(sent).isLessThan(request.length());
    }
  }

  @Test
  void anIdleConnectionIsClosedQuietly() throws IOException {
    try (Socket s = connect("127.0.0.1")) {
      s.setSoTimeout(5_000);
      assertThat(s.getInputStream().read()).isEqualTo(-1);
    }
  }

  @Test
  void oneAddressCannotHoldMoreThanItsShareOfConnections() throws IOException {
    List<Socket> held = new ArrayList<>();
    try {
      for (int i = 0; i < LIMITS.maxConnectionsPerAddress(); i++) {
        Socket s = connect("127.0.0.2");
        send(s, "GET /x HTTP/1.1\r\nHost: t\r\n\r\n");
        assertThat(read(s).status).isEqualTo(200);
        held.add(s);
      }
      try (Socket over = connect("127.0.0.2")) {
        Response r = read(over);
        assertThat(r.status).isEqualTo(503);
        assertThat(r.body).contains("your address holds its limit of 8 connections");
        assertThat(r.head).containsIgnoringCase("retry-after: 1");
        assertClosed(over);
      }
      try (Socket other = connect("127.0.0.1")) {
        send(other, "GET /y HTTP/1.1\r\nHost: t\r\n\r\n");
        assertThat(read(other).status).isEqualTo(200);
      }
    } finally {
      for (Socket s : held) {
        s.close();
      }
    }
  }

  @Test
  void theEdgeHoldsAtMostItsConnectionsInAll() throws IOException, InterruptedException {
    startWith(new EdgeLimits(3, 3, 5_000, 5_000, 5_000, 256, 1024, 1024, 4));
    List<Socket> held = new ArrayList<>();
    try {
      for (String from : List.of("127.0.0.3", "127.0.0.4", "127.0.0.5")) {
        Socket s = connect(from);
        send(s, "GET /x HTTP/1.1\r\nHost: t\r\n\r\n");
        assertThat(read(s).status).isEqualTo(200);
        held.add(s);
      }
      try (Socket over = connect("127.0.0.6")) {
        assertThat(read(over).body).contains("the gateway holds its limit of 3 connections");
      }
      held.remove(0).close();
      waitFor(() -> edge.openConnections() == 2);
      try (Socket again = connect("127.0.0.6")) {
        send(again, "GET /x HTTP/1.1\r\nHost: t\r\n\r\n");
        assertThat(read(again).status).isEqualTo(200);
      }
    } finally {
      for (Socket s : held) {
        s.close();
      }
    }
  }

  @Test
  void overlongRequestLinesHeadersAndBodiesAreRefusedWithTheirOwnStatus() throws IOException {
    try (Socket s = connect("127.0.0.1")) {
      send(s, "GET /" + "a".repeat(400) + " HTTP/1.1\r\nHost: t\r\n\r\n");
      assertThat(read(s).status).isEqualTo(414);
    }
    try (Socket s = connect("127.0.0.1")) {
      send(s, "GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + "b".repeat(2000) + "\r\n\r\n");
      assertThat(read(s).status).isEqualTo(431);
    }
    try (Socket s = connect("127.0.0.1")) {
      send(s, "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 20000\r\n\r\n");
      Response r = read(s);
      assertThat(r.status).isEqualTo(413);
      assertThat(r.head).containsIgnoringCase("content-type: application/json");
    }
    try (Socket s = connect("127.0.0.1")) {
      send(s, "GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab");
      assertThat(read(s).status).isEqualTo(400);
    }
    try (Socket s = connect("127.0.0.1")) {
      send(s, "NOT A REQUEST\r\n\r\n");
      assertThat(read(s).status).isEqualTo(400);
    }
  }

  @Test
  void aHandlerThatThrowsAnswers500AndTheConnectionGoesOn() throws IOException {
    try (Socket s = connect("127.0.0.1")) {
      send(s, "GET /boom HTTP/1.1\r\nHost: t\r\n\r\n");
      assertThat(read(s).status).isEqualTo(500);
      send(s, "GET /after HTTP/1.1\r\nHost: t\r\n\r\n");
      assertThat(read(s).status).isEqualTo(200);
    }
  }

  @Test
  void aClientThatHangsUpOnAHeldCallIsNoticed() throws IOException, InterruptedException {
    Socket s = connect("127.0.0.1");
    send(s, "GET /hold HTTP/1.1\r\nHost: t\r\n\r\n");
    Thread.sleep(200);
    s.close();
    assertThat(hungUp.await(5, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void slowClientsHoldSocketsNotThreads() throws IOException, InterruptedException {
    startWith(new EdgeLimits(1000, 1000, 10_000, 10_000, 10_000, 256, 1024, 1024, 4));
    List<Socket> slow = new ArrayList<>();
    try {
      for (int i = 0; i < 200; i++) {
        Socket s = connect("127.0.0.7");
        send(
            s,
            i % 2 == 0
                ? "GET /never-fin"
                : "POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n");
        slow.add(s);
      }
      // Far fewer handler threads (4) than slow clients (200): every normal request is still
      // answered.
      for (int i = 0; i < 50; i++) {
        try (Socket s = connect("127.0.0.1")) {
          s.setSoTimeout(2_000);
          send(s, "GET /ok HTTP/1.1\r\nHost: t\r\n\r\n");
          assertThat(read(s).status).isEqualTo(200);
        }
      }
    } finally {
      for (Socket s : slow) {
        s.close();
      }
    }
  }

  // --- a raw client
  // ----------------------------------------------------------------------------------
  private record Response(int status, String head, String body) {}

  private Socket connect(String from) throws IOException {
    Socket s = new Socket();
    s.bind(new InetSocketAddress(from, 0));
    s.connect(address, 2_000);
    s.setSoTimeout(5_000);
    return s;
  }

  private static void send(Socket s, String text) throws IOException {
    OutputStream out = s.getOutputStream();
    out.write(text.getBytes(StandardCharsets.ISO_8859_1));
    out.flush();
  }

  /** One response: the head up to the blank line, then Content-Length bytes of body. */
  private static Response read(Socket s) throws IOException {
    InputStream in = s.getInputStream();
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    while (matched < 4) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("closed before a response; got: " + head);
      }
      head.write(b);
      matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
    }
    String text = head.toString(StandardCharsets.ISO_8859_1);
    int status = Integer.parseInt(text.substring(9, 12));
    int length = 0;
    for (String line : text.split("\r\n")) {
      if (line.toLowerCase().startsWith("content-length:")) {
        length = Integer.parseInt(line.substring(15).trim());
      }
    }
    byte[] body = in.readNBytes(length);
    return new Response(status, text, new String(body, StandardCharsets.UTF_8));
  }

  private static void assertClosed(Socket s) throws IOException {
    try {
      assertThat(s.getInputStream().read()).isEqualTo(-1);
    } catch (SocketTimeoutException e) {
      throw new AssertionError("the connection stayed open", e);
    } catch (IOException reset) {
      // reset by the peer: closed as well
    }
  }

  private static void waitFor(java.util.function.BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("condition within 5 s").isLessThan(deadline);
      Thread.sleep(20);
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
