package io.brokerstream.streams.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.AttributeKey;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Admits a connection while the edge holds fewer than its limit in all and from the client's
 * address; otherwise answers 503 at once and closes it, before a byte of it is read. Counts are
 * given back when a connection closes, however it closes.
 */
@Sharable
final class Admission extends ChannelInboundHandlerAdapter {
  private static final AttributeKey<InetAddress> COUNTED =
      AttributeKey.valueOf("brokerstream.admitted-address");

  private final int maxTotal;
  private final int maxPerAddress;
  private final AtomicInteger total = new AtomicInteger();
  private final ConcurrentHashMap<InetAddress, Integer> byAddress = new ConcurrentHashMap<>();

  Admission(int maxTotal, int maxPerAddress) {
    this.maxTotal = maxTotal;
    this.maxPerAddress = maxPerAddress;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    InetAddress address = ((InetSocketAddress) ctx.channel().remoteAddress()).getAddress();
    int all = total.incrementAndGet();
    int mine = byAddress.merge(address, 1, Integer::sum);
    ctx.channel().attr(COUNTED).set(address);
    if (all > maxTotal || mine > maxPerAddress) {
      ctx.channel().config().setAutoRead(false);
      String why =
          all > maxTotal
              ? "the gateway holds its limit of " + maxTotal + " connections"
              : "your address holds its limit of " + maxPerAddress + " connections";
      byte[] body =
          ("{\"error\":\"" + why + "; close one or try again shortly\"}")
              .getBytes(StandardCharsets.US_ASCII);
      String head =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: "
              + body.length
              + "\r\nRetry-After: 1\r\nConnection: close\r\n\r\n";
      // Straight to the socket: this handler sits before the HTTP codec.
      ctx.writeAndFlush(Unpooled.wrappedBuffer(head.getBytes(StandardCharsets.US_ASCII), body))
          .addListener(ChannelFutureListener.CLOSE);
      return;
    }
    ctx.fireChannelActive();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    InetAddress address = ctx.channel().attr(COUNTED).getAndSet(null);
    if (address != null) {
      total.decrementAndGet();
      byAddress.computeIfPresent(address, (a, n) -> n <= 1 ? null : n - 1);
    }
    ctx.fireChannelInactive();
  }

  int open() {
    return total.get();
  }
}
