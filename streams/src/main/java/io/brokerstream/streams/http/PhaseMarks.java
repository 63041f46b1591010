package io.brokerstream.streams.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * Tells the connection's clock where a request stands: raw bytes arriving (before the codec), the
 * request line and headers read, the last of the body read (between the codec and the aggregator).
 */
final class PhaseMarks {
  private PhaseMarks() {}

  /** Before the codec: the first bytes of a request start its header deadline. */
  static final class Bytes extends ChannelInboundHandlerAdapter {
    private final RequestClock clock;

    Bytes(RequestClock clock) {
      this.clock = clock;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof ByteBuf buf && buf.isReadable()) {
        clock.bytesArrived();
      }
      ctx.fireChannelRead(msg);
    }
  }

  /** After the codec: headers read start the body deadline, the last content ends it. */
  static final class Parts extends ChannelInboundHandlerAdapter {
    private final RequestClock clock;

    Parts(RequestClock clock) {
      this.clock = clock;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof HttpRequest) {
        clock.headersDone();
      }
      if (msg instanceof LastHttpContent) {
        clock.bodyDone();
      }
      ctx.fireChannelRead(msg);
    }
  }
}
