package io.brokerstream.streams.http;

import io.netty.channel.Channel;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The deadlines of one connection, on its event loop: a request's line and headers must arrive
 * within the header timeout of its first byte, its body within the body timeout of its headers, and
 * a connection with nothing in flight and nothing arriving is closed after the idle timeout. A slow
 * client therefore holds its socket for a bounded time, whatever pace it sends at. While the edge
 * has stopped reading the connection (its pipelined requests queued), nothing it has not read can
 * be late: the read deadlines pause and start again when reading does.
 */
final class RequestClock {
  /**
   * Called when a deadline passes: what was late ("the request body"), or null when the connection
   * idled out.
   */
  interface Expiry {
    void expired(String late);
  }

  private enum Reading {
    IDLE,
    HEAD,
    BODY
  }

  private final Channel channel;
  private final EdgeLimits limits;
  private Expiry expiry;
  private Reading reading = Reading.IDLE;
  private int inFlight;
  private boolean paused;
  private ScheduledFuture<?> timer;

  RequestClock(Channel channel, EdgeLimits limits) {
    this.channel = channel;
    this.limits = limits;
  }

  void onExpiry(Expiry expiry) {
    this.expiry = expiry;
  }

  /** The connection opened: it must send a request before it idles out. */
  void opened() {
    rearm();
  }

  /** Bytes arrived: the first ones of a request start its header deadline. */
  void bytesArrived() {
    if (reading == Reading.IDLE) {
      reading = Reading.HEAD;
      rearm();
    }
  }

  void headersDone() {
    reading = Reading.BODY;
    rearm();
  }

  /**
   * The request is whole; the dispatcher takes it next ({@link #dispatched}), so no idle timer is
   * armed here.
   */
  void bodyDone() {
    reading = Reading.IDLE;
    cancel();
  }

  void dispatched() {
    inFlight++;
    rearm();
  }

  void responded() {
    inFlight--;
    rearm();
  }

  void pause() {
    paused = true;
    rearm();
  }

  void resume() {
    paused = false;
    rearm();
  }

  void stop() {
    cancel();
    reading = Reading.IDLE;
    inFlight = Integer.MAX_VALUE / 2;
  }

  private void rearm() {
    cancel();
    if (reading == Reading.HEAD && !paused) {
      schedule(limits.headerTimeoutMs(), "the request line and headers");
    } else if (reading == Reading.BODY && !paused) {
      schedule(limits.bodyTimeoutMs(), "the request body");
    } else if (reading == Reading.IDLE && inFlight == 0) {
      schedule(limits.idleTimeoutMs(), null);
    }
  }

  private void schedule(long ms, String late) {
    timer =
        channel
            .eventLoop()
            .schedule(
                () -> {
                  timer = null;
                  if (expiry != null) {
                    expiry.expired(late);
                  }
                },
                ms,
                TimeUnit.MILLISECONDS);
  }

  private void cancel() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }
}
