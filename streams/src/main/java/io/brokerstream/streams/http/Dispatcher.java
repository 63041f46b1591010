package io.brokerstream.streams.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands a connection's complete requests to the handler one at a time, in the order they came, and
 * writes each answer in that order (HTTP/1.1 pipelining): the next request is handed over once the
 * previous answer is written. Requests read ahead are queued up to the edge's limit, then reading
 * stops until it drains. A request the codec could not read (bad line, headers or chunking) is
 * answered 400, 414 or 431 and the connection closed: nothing after it on that connection can be
 * trusted to be framed right.
 */
final class Dispatcher extends ChannelInboundHandlerAdapter {
  private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);

  private final RequestClock clock;
  private final EdgeLimits limits;
  private final Executor handlers;
  private final HttpHandler handler;
  private final ArrayDeque<FullHttpRequest> queued = new ArrayDeque<>();
  private ChannelHandlerContext ctx;
  private boolean busy;
  private boolean closing;

  Dispatcher(RequestClock clock, EdgeLimits limits, Executor handlers, HttpHandler handler) {
    this.clock = clock;
    this.limits = limits;
    this.handlers = handlers;
    this.handler = handler;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    clock.onExpiry(this::expired);
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    clock.opened();
    ctx.fireChannelActive();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof BodyBudget.Refused refused) {
      refuse(refused.status(), refused.message());
      return;
    }
    if (!(msg instanceof FullHttpRequest request)) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (closing) {
      request.release();
      return;
    }
    if (!request.decoderResult().isSuccess()) {
      Throwable cause = request.decoderResult().cause();
      request.release();
      refuse(cause);
      return;
    }
    queued.add(request);
    if (queued.size() >= limits.maxQueuedPerConnection() && ctx.channel().config().isAutoRead()) {
      ctx.channel().config().setAutoRead(false);
      clock.pause();
    }
    next();
  }

  private void next() {
    if (busy || closing || queued.isEmpty()) {
      return;
    }
    FullHttpRequest request = queued.poll();
    if (!ctx.channel().config().isAutoRead() && queued.size() < limits.maxQueuedPerConnection()) {
      ctx.channel().config().setAutoRead(true);
      clock.resume();
    }
    busy = true;
    clock.dispatched();
    Call call;
    try {
      call = new Call(request);
    } finally {
      request.release();
    }
    Runnable run =
        () -> {
          try {
            handler.handle(call);
          } catch (RuntimeException | Error e) {
            log.error(
                "handler failed on {} {}", call.method(), Texts.printable(call.rawPath(), 200), e);
            call.respond(500, "application/json", Texts.errorJson("internal error"), Map.of());
          }
        };
    if (handler.onEventLoop(call)) {
      run.run();
      return;
    }
    try {
      handlers.execute(run);
    } catch (RejectedExecutionException e) {
      call.respond(
          503,
          "application/json",
          Texts.errorJson("the gateway is shutting down"),
          Map.of("Retry-After", "1"));
    }
  }

  /**
   * A request the codec could not read: answered if it is the only one pending, and the connection
   * closed.
   */
  private void refuse(Throwable cause) {
    int status =
        cause instanceof TooLongHttpLineException
            ? 414
            : cause instanceof TooLongHttpHeaderException ? 431 : 400;
    String what =
        status == 414
            ? "request line longer than " + limits.maxLineBytes() + " bytes"
            : status == 431
                ? "headers larger than " + limits.maxHeaderBytes() + " bytes"
                : cause instanceof TooLongFrameException
                    ? "a part of the request is too long"
                    : "malformed request: "
                        + Texts.printable(String.valueOf(cause.getMessage()), 120);
    refuse(status, what);
  }

  /**
   * Answers a refused request if it is the only one pending (else just closes), and closes the
   * connection.
   */
  private void refuse(int status, String what) {
    closing = true;
    if (busy || !queued.isEmpty()) {
      ctx.close();
      return;
    }
    writeAndClose(status, Texts.errorJson(what), Map.of());
  }

  /** A deadline of the clock passed. */
  private void expired(String late) {
    if (closing) {
      return;
    }
    closing = true;
    if (late == null || busy || !queued.isEmpty()) {
      ctx.close(); // idle, or an answer is still owed first: nothing to say in order
      return;
    }
    long ms =
        late.startsWith("the request body") ? limits.bodyTimeoutMs() : limits.headerTimeoutMs();
    writeAndClose(408, Texts.errorJson(late + " did not arrive within " + ms + " ms"), Map.of());
  }

  private void writeAndClose(int status, byte[] body, Map<String, String> headers) {
    clock.stop();
    ctx.channel().config().setAutoRead(false);
    ctx.writeAndFlush(
            response(status, "application/json", body, headers, false, HttpVersion.HTTP_1_1))
        .addListener(ChannelFutureListener.CLOSE);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    closing = true;
    clock.stop();
    FullHttpRequest r;
    while ((r = queued.poll()) != null) {
      r.release();
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    log.debug("connection error from {}", ctx.channel().remoteAddress(), cause);
    ctx.close();
  }

  private static FullHttpResponse response(
      int status,
      String contentType,
      byte[] body,
      Map<String, String> headers,
      boolean keepAlive,
      HttpVersion version) {
    ByteBuf content = body.length == 0 ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body);
    FullHttpResponse response =
        new DefaultFullHttpResponse(version, HttpResponseStatus.valueOf(status), content);
    if (body.length > 0) {
      response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
    }
    response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
    headers.forEach((k, v) -> response.headers().set(k, v));
    if (!keepAlive) {
      response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    } else if (version.equals(HttpVersion.HTTP_1_0)) {
      response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
    }
    return response;
  }

  /** One request, copied out of Netty's buffers so the handler may keep it on any thread. */
  private final class Call implements HttpCall {
    private final String method;
    private final String target;
    private final String path;
    private final String query;
    private final io.netty.handler.codec.http.HttpHeaders headers;
    private final byte[] body;
    private final boolean keepAlive;
    private final HttpVersion version;
    private final AtomicBoolean answered = new AtomicBoolean();
    private volatile GenericFutureListener<Future<? super Void>> hangUp;

    Call(FullHttpRequest request) {
      this.method = request.method().name();
      this.target = request.uri();
      int q = target.indexOf('?');
      this.path = q < 0 ? target : target.substring(0, q);
      this.query = q < 0 ? null : target.substring(q + 1);
      this.headers = request.headers(); // plain objects: releasing the request frees only its body
      this.body = new byte[request.content().readableBytes()];
      request.content().getBytes(request.content().readerIndex(), body);
      this.keepAlive = HttpUtil.isKeepAlive(request);
      this.version = request.protocolVersion();
    }

    @Override
    public String method() {
      return method;
    }

    @Override
    public String rawPath() {
      return path;
    }

    @Override
    public String rawQuery() {
      return query;
    }

    @Override
    public String rawTarget() {
      return target;
    }

    @Override
    public String header(String name) {
      return headers.get(name);
    }

    @Override
    public byte[] body() {
      return body;
    }

    @Override
    public InetAddress client() {
      return ((InetSocketAddress) ctx.channel().remoteAddress()).getAddress();
    }

    @Override
    public void respond(
        int status, String contentType, byte[] responseBody, Map<String, String> extra) {
      if (!answered.compareAndSet(false, true)) {
        return;
      }
      if (hangUp != null) {
        ctx.channel().closeFuture().removeListener(hangUp);
      }
      if (ctx.executor().inEventLoop()) {
        write(status, contentType, responseBody, extra);
        return;
      }
      try {
        ctx.executor().execute(() -> write(status, contentType, responseBody, extra));
      } catch (RejectedExecutionException e) {
        log.debug("the edge is closing; answer {} dropped", status);
      }
    }

    private void write(
        int status, String contentType, byte[] responseBody, Map<String, String> extra) {
      boolean keep = keepAlive && !closing;
      ctx.writeAndFlush(response(status, contentType, responseBody, extra, keep, version))
          .addListener(
              f -> {
                if (!keep || !f.isSuccess()) {
                  closing = true;
                  ctx.close();
                  return;
                }
                busy = false;
                clock.responded();
                next();
              });
    }

    @Override
    public void onHangUp(Runnable action) {
      GenericFutureListener<Future<? super Void>> listener =
          f -> {
            if (!answered.get()) {
              action.run();
            }
          };
      hangUp = listener;
      ctx.channel().closeFuture().addListener(listener);
      if (answered.get()) {
        ctx.channel()
            .closeFuture()
            .removeListener(listener); // answered meanwhile: nothing to give back
      }
    }
  }
}
