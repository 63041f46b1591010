package io.brokerstream.streams.http;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.util.Locale;

/**
 * How the edge's event loops wait on sockets. Linux's epoll through Netty's native transport does
 * per wake-up what the JDK's selector does with a selected-key set, a lock and a copy of every
 * ready key; the JDK's works wherever the native library does not load.
 */
public enum Transport {
  EPOLL,
  NIO;

  /** {@code epoll}, {@code nio} or {@code auto} (epoll where it is available, else nio). */
  public static Transport of(String setting) {
    String name = setting == null ? "auto" : setting.trim().toLowerCase(Locale.ROOT);
    return switch (name) {
      case "auto" -> Epoll.isAvailable() ? EPOLL : NIO;
      case "nio" -> NIO;
      case "epoll" -> {
        if (!Epoll.isAvailable()) {
          throw new IllegalArgumentException(
              "gateway.transport=epoll, but epoll is not available here: "
                  + Epoll.unavailabilityCause());
        }
        yield EPOLL;
      }
      default ->
          throw new IllegalArgumentException(
              "gateway.transport must be auto, epoll or nio, not '" + setting + "'");
    };
  }

  IoHandlerFactory ioHandlers() {
    return this == EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
  }

  Class<? extends ServerChannel> serverChannel() {
    return this == EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
  }
}
