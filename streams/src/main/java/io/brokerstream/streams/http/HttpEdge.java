package io.brokerstream.streams.http;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The HTTP/1.1 server strangers talk to. Sockets are read on a few event-loop threads, so a client
 * that is slow, idle or never finishes its request costs a socket and a deadline, not a thread;
 * only complete requests within every limit of {@link EdgeLimits} reach the handler, on the handler
 * executor. Per connection: admission (limits in all and per client address), the clock's
 * deadlines, the HTTP codec (line and header sizes, strict chunk parsing), the route's body limit,
 * the body gathered whole, then dispatch in request order.
 */
public final class HttpEdge implements AutoCloseable {
  private final String host;
  private final int port;
  private final EdgeLimits limits;
  private final Executor handlers;
  private final HttpHandler handler;
  private final BodyLimits bodyLimits;
  private final Admission admission;
  private final EventLoopGroup acceptor;
  private final EventLoopGroup io;
  private final Transport transport;
  private Channel listening;

  public HttpEdge(
      String host,
      int port,
      EdgeLimits limits,
      int ioThreads,
      Executor handlers,
      HttpHandler handler) {
    this(
        host,
        port,
        limits,
        (method, path) -> limits.maxBodyBytes(),
        Transport.of("auto"),
        ioThreads,
        handlers,
        handler);
  }

  /** With a body limit per route (at most the edge's {@link EdgeLimits#maxBodyBytes()}). */
  public HttpEdge(
      String host,
      int port,
      EdgeLimits limits,
      BodyLimits bodyLimits,
      Transport transport,
      int ioThreads,
      Executor handlers,
      HttpHandler handler) {
    this.bodyLimits =
        (method, path) -> Math.min(bodyLimits.maxBodyBytes(method, path), limits.maxBodyBytes());
    this.host = host;
    this.port = port;
    this.limits = limits;
    this.handlers = handlers;
    this.handler = handler;
    this.admission = new Admission(limits.maxConnections(), limits.maxConnectionsPerAddress());
    this.transport = transport;
    this.acceptor =
        new MultiThreadIoEventLoopGroup(1, daemons("gateway-accept"), transport.ioHandlers());
    this.io =
        new MultiThreadIoEventLoopGroup(ioThreads, daemons("gateway-io"), transport.ioHandlers());
  }

  /** How its event loops wait on sockets. */
  public Transport transport() {
    return transport;
  }

  /** Binds and starts accepting; returns the bound address (port 0 picks a free one). */
  public InetSocketAddress start() throws InterruptedException {
    ServerBootstrap bootstrap =
        new ServerBootstrap()
            .group(acceptor, io)
            .channel(transport.serverChannel())
            .option(ChannelOption.SO_BACKLOG, 1024)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    RequestClock clock = new RequestClock(ch, limits);
                    ch.pipeline()
                        .addLast("admission", admission)
                        .addLast("bytes", new PhaseMarks.Bytes(clock))
                        .addLast(
                            "codec",
                            new HttpServerCodec(
                                limits.maxLineBytes(), limits.maxHeaderBytes(), 16_384))
                        .addLast("parts", new PhaseMarks.Parts(clock))
                        .addLast("budget", new BodyBudget(bodyLimits))
                        // never past the budget above, which holds every route to at most
                        // maxBodyBytes
                        .addLast("body", new HttpObjectAggregator(limits.maxBodyBytes()))
                        .addLast("dispatch", new Dispatcher(clock, limits, handlers, handler));
                  }
                });
    listening = bootstrap.bind(host, port).sync().channel();
    return (InetSocketAddress) listening.localAddress();
  }

  /** Connections open now (admitted or being refused). */
  public int openConnections() {
    return admission.open();
  }

  @Override
  public void close() {
    if (listening != null) {
      listening.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
    }
    acceptor.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    io.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(3, TimeUnit.SECONDS);
  }

  private static ThreadFactory daemons(String name) {
    return new DefaultThreadFactory(name, true);
  }
}
