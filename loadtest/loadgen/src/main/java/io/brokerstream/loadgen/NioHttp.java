package io.brokerstream.loadgen;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A small HTTP/1.1 client on one selector thread: keep-alive connections to one server, one request
 * at a time per connection, at most {@code maxConnections} open (requests beyond that queue for the
 * next free connection). The JDK's client spent about a millisecond of CPU per request here, too
 * much for a load generator that shares two cores with the system it measures. Callbacks run on the
 * selector thread and must be short; they may submit further requests.
 */
final class NioHttp implements AutoCloseable {
  interface Callback {
    /** status -1 with an error when there was no answer. */
    void done(int status, byte[] body, Throwable error);
  }

  private record Request(byte[] bytes, Callback callback, long timeoutNanos, boolean retried) {}

  private final class Conn {
    final SocketChannel channel;
    final SelectionKey key;
    Request request;
    ByteBuffer out;
    ByteBuffer in = ByteBuffer.allocate(4096);
    long deadline;
    boolean connected;

    /** Served a request before: the server may have closed it while it sat idle. */
    boolean reused;

    Conn(SocketChannel channel) throws IOException {
      this.channel = channel;
      this.key = channel.register(selector, SelectionKey.OP_CONNECT, this);
    }
  }

  private final InetSocketAddress address;
  private final int maxConnections;
  private final Selector selector;
  private final Thread thread;
  private final ConcurrentLinkedQueue<Request> incoming = new ConcurrentLinkedQueue<>();
  private final ArrayDeque<Request> waiting = new ArrayDeque<>();
  private final ArrayDeque<Conn> idle = new ArrayDeque<>();
  private final Set<Conn> busy = new HashSet<>();
  private final AtomicBoolean selecting = new AtomicBoolean();
  private volatile boolean running = true;
  private int open;

  NioHttp(String host, int port, int maxConnections) throws IOException {
    this.address = new InetSocketAddress(host, port);
    this.maxConnections = maxConnections;
    this.selector = Selector.open();
    this.thread = new Thread(this::loop, "nio-http");
    thread.setDaemon(true);
    thread.start();
  }

  static byte[] request(String method, String path, String host, String[] headers, String body) {
    StringBuilder sb =
        new StringBuilder(256)
            .append(method)
            .append(' ')
            .append(path)
            .append(" HTTP/1.1\r\nHost: ")
            .append(host)
            .append("\r\n");
    for (String h : headers) {
      sb.append(h).append("\r\n");
    }
    byte[] payload = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
    if (body != null) {
      sb.append("Content-Length: ").append(payload.length).append("\r\n");
    }
    sb.append("\r\n");
    byte[] head = sb.toString().getBytes(StandardCharsets.ISO_8859_1);
    byte[] all = new byte[head.length + payload.length];
    System.arraycopy(head, 0, all, 0, head.length);
    System.arraycopy(payload, 0, all, head.length, payload.length);
    return all;
  }

  void submit(byte[] request, long timeoutMs, Callback callback) {
    Request r = new Request(request, callback, timeoutMs * 1_000_000L, false);
    if (Thread.currentThread() == thread) {
      waiting.add(r);
      return;
    }
    incoming.add(r);
    if (selecting.get()) {
      selector.wakeup();
    }
  }

  private void loop() {
    long nextSweep = System.nanoTime() + 1_000_000_000L;
    while (running) {
      try {
        for (Request r; (r = incoming.poll()) != null; ) {
          waiting.add(r);
        }
        assign();
        selecting.set(true);
        if (incoming.isEmpty()) {
          selector.select(100);
        } else {
          selector.selectNow();
        }
        selecting.set(false);
        for (SelectionKey k : selector.selectedKeys()) {
          Conn c = (Conn) k.attachment();
          try {
            if (k.isValid() && k.isConnectable()) {
              connected(c);
            } else if (k.isValid() && k.isWritable()) {
              write(c);
            } else if (k.isValid() && k.isReadable()) {
              if (c.request == null) {
                idleRead(c);
              } else {
                read(c);
              }
            }
          } catch (IOException | RuntimeException e) {
            fail(c, e);
          }
        }
        selector.selectedKeys().clear();
        if (System.nanoTime() > nextSweep) {
          sweep();
          nextSweep = System.nanoTime() + 1_000_000_000L;
        }
      } catch (IOException e) {
        // the selector itself failed: nothing more can be sent
        running = false;
      }
    }
  }

  /** Gives waiting requests to idle connections, opening new ones while under the limit. */
  private void assign() throws IOException {
    while (!waiting.isEmpty()) {
      Conn c = idle.poll();
      if (c == null) {
        if (open >= maxConnections) {
          return;
        }
        SocketChannel ch = SocketChannel.open();
        ch.configureBlocking(false);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        c = new Conn(ch);
        open++;
        ch.connect(address);
      }
      start(c, waiting.poll());
    }
  }

  private void start(Conn c, Request r) {
    c.request = r;
    c.out = ByteBuffer.wrap(r.bytes());
    c.in.clear();
    c.deadline = System.nanoTime() + r.timeoutNanos();
    busy.add(c);
    c.key.interestOps(c.connected ? SelectionKey.OP_WRITE : SelectionKey.OP_CONNECT);
  }

  private void connected(Conn c) throws IOException {
    c.channel.finishConnect();
    c.connected = true;
    c.key.interestOps(c.request != null ? SelectionKey.OP_WRITE : 0);
  }

  private void write(Conn c) throws IOException {
    c.channel.write(c.out);
    if (!c.out.hasRemaining()) {
      c.key.interestOps(SelectionKey.OP_READ);
    }
  }

  private void read(Conn c) throws IOException {
    if (!c.in.hasRemaining()) {
      ByteBuffer bigger = ByteBuffer.allocate(c.in.capacity() * 2);
      c.in.flip();
      bigger.put(c.in);
      c.in = bigger;
    }
    if (c.channel.read(c.in) < 0) {
      throw new IOException("the server closed the connection");
    }
    Response resp = Response.parse(c.in.array(), c.in.position());
    if (resp == null) {
      return;
    }
    Request r = c.request;
    c.request = null;
    busy.remove(c);
    if (resp.close) {
      close(c);
    } else {
      // an idle connection watches for the server closing it
      c.key.interestOps(SelectionKey.OP_READ);
      c.reused = true;
      idle.add(c);
    }
    r.callback().done(resp.status, resp.body, null);
  }

  /** Bytes or EOF on a connection with no request: the server closed it (or spoke out of turn). */
  private void idleRead(Conn c) throws IOException {
    c.in.clear();
    if (c.channel.read(c.in) != 0) {
      close(c);
    }
  }

  private void fail(Conn c, Throwable e) {
    Request r = c.request;
    boolean unanswered = c.in.position() == 0;
    boolean reused = c.reused;
    c.request = null;
    busy.remove(c);
    close(c);
    if (r == null) {
      return;
    }
    // A kept-alive connection the server closed while it was idle never delivered the request: send
    // it once more on a fresh connection.
    if (reused && unanswered && !r.retried() && !(e instanceof TimeoutException)) {
      waiting.addFirst(new Request(r.bytes(), r.callback(), r.timeoutNanos(), true));
      return;
    }
    r.callback().done(-1, null, e);
  }

  /** A request that got no answer within its timeout. */
  static final class TimeoutException extends IOException {
    TimeoutException() {
      super("no answer in time");
    }
  }

  private void close(Conn c) {
    c.key.cancel();
    try {
      c.channel.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    idle.remove(c);
    open--;
  }

  private void sweep() {
    long now = System.nanoTime();
    List<Conn> late = new ArrayList<>();
    for (Conn c : busy) {
      if (now > c.deadline) {
        late.add(c);
      }
    }
    late.forEach(c -> fail(c, new TimeoutException()));
  }

  int openConnections() {
    return open;
  }

  @Override
  public void close() {
    running = false;
    selector.wakeup();
    try {
      thread.join(2000);
      selector.close();
    } catch (IOException | InterruptedException ignored) {
      // closing anyway
    }
  }

  /** A complete HTTP/1.1 response in a buffer, or null while more bytes are needed. */
  record Response(int status, byte[] body, boolean close) {
    static Response parse(byte[] buf, int len) {
      int headEnd = indexOf(buf, len, 0);
      if (headEnd < 0) {
        return null;
      }
      String head = new String(buf, 0, headEnd, StandardCharsets.ISO_8859_1);
      String[] lines = head.split("\r\n");
      String[] statusLine = lines[0].split(" ", 3);
      if (statusLine.length < 2 || !statusLine[0].startsWith("HTTP/1.")) {
        throw new IllegalStateException("not an HTTP/1.x response: " + lines[0]);
      }
      int status = Integer.parseInt(statusLine[1]);
      long length = -1;
      boolean chunked = false;
      boolean close = statusLine[0].equals("HTTP/1.0");
      for (int i = 1; i < lines.length; i++) {
        int colon = lines[i].indexOf(':');
        if (colon < 0) {
          continue;
        }
        String name = lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT);
        String value = lines[i].substring(colon + 1).trim();
        switch (name) {
          case "content-length" -> length = Long.parseLong(value);
          case "transfer-encoding" -> chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
          case "connection" -> close = value.equalsIgnoreCase("close");
          default -> {}
        }
      }
      int bodyStart = headEnd + 4;
      if (chunked) {
        return chunked(buf, len, bodyStart, status, close);
      }
      if (length < 0) {
        length = 0; // no length and not chunked: our server sends none only for empty bodies
      }
      if (len - bodyStart < length) {
        return null;
      }
      byte[] body = new byte[(int) length];
      System.arraycopy(buf, bodyStart, body, 0, body.length);
      return new Response(status, body, close);
    }

    private static Response chunked(byte[] buf, int len, int at, int status, boolean close) {
      java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
      while (true) {
        int lineEnd = indexOfCrlf(buf, len, at);
        if (lineEnd < 0) {
          return null;
        }
        String size = new String(buf, at, lineEnd - at, StandardCharsets.ISO_8859_1);
        int semi = size.indexOf(';');
        int n = Integer.parseInt((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
        at = lineEnd + 2;
        if (n == 0) {
          // trailers end with an empty line
          int end = indexOf(buf, len, at - 2);
          return end < 0 ? null : new Response(status, body.toByteArray(), close);
        }
        if (len < at + n + 2) {
          return null;
        }
        body.write(buf, at, n);
        at += n + 2;
      }
    }

    private static int indexOf(byte[] b, int len, int from) {
      for (int i = from; i + 3 < len; i++) {
        if (b[i] == '\r' && b[i + 1] == '\n' && b[i + 2] == '\r' && b[i + 3] == '\n') {
          return i;
        }
      }
      return -1;
    }

    private static int indexOfCrlf(byte[] b, int len, int from) {
      for (int i = from; i + 1 < len; i++) {
        if (b[i] == '\r' && b[i + 1] == '\n') {
          return i;
        }
      }
      return -1;
    }
  }
}
