package io.brokerstream.streams.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.util.ReferenceCountUtil;

/**
 * Refuses a body past what its route takes as soon as that is known: from its Content-Length before
 * a byte of it is read, or as its chunks add up (a chunk that claims 2 GB is refused once the
 * route's limit has arrived, not when the 2 GB would have). What follows a refused request on its
 * connection is dropped, and the dispatcher answers 413 and closes it.
 */
final class BodyBudget extends ChannelInboundHandlerAdapter {
  /** A request this handler refused, passed on for the dispatcher to answer in order. */
  record Refused(int status, String message) {}

  private final BodyLimits limits;
  private long left;
  private int max;
  private boolean refused;

  BodyBudget(BodyLimits limits) {
    this.limits = limits;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (refused) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (msg instanceof HttpRequest request && request.decoderResult().isSuccess()) {
      String uri = request.uri();
      int q = uri.indexOf('?');
      max = limits.maxBodyBytes(request.method().name(), q < 0 ? uri : uri.substring(0, q));
      left = max;
      if (HttpUtil.getContentLength(request, -1L) > max) {
        refuse(ctx, msg);
        return;
      }
    }
    if (msg instanceof HttpContent content) {
      left -= content.content().readableBytes();
      if (left < 0) {
        refuse(ctx, msg);
        return;
      }
    }
    ctx.fireChannelRead(msg);
  }

  private void refuse(ChannelHandlerContext ctx, Object msg) {
    refused = true;
    ReferenceCountUtil.release(msg);
    ctx.channel().config().setAutoRead(false);
    ctx.fireChannelRead(new Refused(413, "body larger than " + max + " bytes"));
  }
}
