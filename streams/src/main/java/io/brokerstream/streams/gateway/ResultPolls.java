package io.brokerstream.streams.gateway;

import io.brokerstream.avro.OrderResult;
import io.brokerstream.streams.http.HttpCall;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A long poll for one order's result: it holds a slot of {@link PollLimits} and a waiter of {@link
 * ResultWaiters} until exactly one of these ends it, and each gives both back exactly once: the
 * result arriving, the result already in the store, the wait running out, the client hanging up, or
 * the store refusing the read (restoring or moving: the caller answers 503, and nothing is left
 * held).
 *
 * <p>A poll for an order whose result is on its way (written here, not yet decided) does not read
 * the store when it starts: nearly every such read misses, and a miss costs RocksDB a look in every
 * table file (a fifth of the gateway's event loops at a thousand polls a second). The result is
 * announced to the waiter instead; one read after {@code recheckMs} answers the few whose result is
 * stored without an announcement here (an id used again, a result restored while its task was
 * elsewhere), and the wait's end answers as every poll's does.
 *
 * <p>A poll that ends takes its timer out of the queue (the gateway's timer executor removes
 * cancelled tasks): otherwise every poll's timer would still wake the timer thread when it fell
 * due, long after its poll was answered, a thousand wake-ups a second at a thousand polls.
 */
final class ResultPolls {
  private final PollLimits limits;
  private final ResultWaiters waiters;
  private final ScheduledExecutorService timers;
  private final Executor workers;
  private final long recheckMs;

  ResultPolls(
      PollLimits limits,
      ResultWaiters waiters,
      ScheduledExecutorService timers,
      Executor workers,
      long recheckMs) {
    this.limits = limits;
    this.waiters = waiters;
    this.timers = timers;
    this.workers = workers;
    this.recheckMs = recheckMs;
  }

  /**
   * Waits up to {@code waitMs} for the result under {@code key}: {@code answer} gets it (on the
   * thread that found it: the caller's, the stream thread that materialized it, or a worker's), or
   * {@code timedOut} runs on a worker thread. {@code read} is the store read, done once after the
   * waiter is registered so no result slips between; whatever it throws is thrown here once the
   * slot and the waiter are given back. 429 (as an HttpError) when no slot is free. {@code
   * onItsWay}, asked once the waiter is registered, says whether the result is certain to be
   * announced to it (then the store is first read after the recheck delay, on a worker thread).
   */
  void await(
      HttpCall call,
      String member,
      String key,
      long waitMs,
      BooleanSupplier onItsWay,
      Supplier<OrderResult> read,
      Consumer<OrderResult> answer,
      Runnable timedOut) {
    Poll poll = new Poll(limits.acquire(member));
    boolean deferred;
    try {
      // The results table announces on a stream thread, and the answer is written from there: it
      // encodes a small JSON body and queues it on the connection's event loop, less work than
      // waking a worker thread to do the same. `answer` must not throw (the stream thread's task
      // would fail): the gateway wraps it in its error handling.
      poll.forget =
          waiters.await(
              key,
              r -> {
                if (poll.end(false)) {
                  answer.accept(r);
                }
              });
      deferred = onItsWay.getAsBoolean() && recheckMs < waitMs;
      OrderResult stored = deferred ? null : read.get();
      if (stored != null) {
        if (poll.end(true)) {
          answer.accept(stored);
        }
        return;
      }
    } catch (RuntimeException e) {
      poll.end(true);
      throw e;
    }
    // A client that hangs up gives its slot back at once, not when its wait ends.
    call.onHangUp(() -> poll.end(true));
    Runnable runOut =
        () -> {
          if (poll.end(true)) {
            workers.execute(timedOut);
          }
        };
    if (!deferred) {
      poll.timer(timers.schedule(runOut, waitMs, TimeUnit.MILLISECONDS));
      return;
    }
    // One timer per poll at a time: the recheck, then the rest of the wait.
    Runnable recheck =
        () -> {
          if (poll.ended()) {
            return;
          }
          OrderResult late = null;
          try {
            late = read.get();
          } catch (RuntimeException notNow) {
            // restoring or moving: the rest of the wait goes on as any poll's
          }
          if (late != null) {
            if (poll.end(true)) {
              answer.accept(late);
            }
            return;
          }
          poll.timer(timers.schedule(runOut, waitMs - recheckMs, TimeUnit.MILLISECONDS));
        };
    poll.timer(timers.schedule(() -> workers.execute(recheck), recheckMs, TimeUnit.MILLISECONDS));
  }

  /**
   * The gateway's timers: one thread, and a cancelled timer leaves the queue at once (see the class
   * comment).
   */
  static ScheduledExecutorService timers(ThreadFactory threads) {
    ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1, threads);
    timers.setRemoveOnCancelPolicy(true);
    return timers;
  }

  /** One poll's hold on a slot and a waiter, and its timer: given back exactly once. */
  private static final class Poll {
    private final AtomicBoolean ended = new AtomicBoolean();
    private final Runnable release;
    private volatile Runnable forget = () -> {};
    private volatile ScheduledFuture<?> timer;

    Poll(Runnable release) {
      this.release = release;
    }

    boolean ended() {
      return ended.get();
    }

    /**
     * Ends the poll if nothing has yet: gives the slot back, cancels the timer and, unless the
     * result's announcement ended it (which took the waiter already), forgets the waiter. True for
     * the one caller that ended it, who answers.
     */
    boolean end(boolean forgetWaiter) {
      if (!ended.compareAndSet(false, true)) {
        return false;
      }
      if (forgetWaiter) {
        forget.run();
      }
      release.run();
      ScheduledFuture<?> t = timer;
      if (t != null) {
        t.cancel(false);
      }
      return true;
    }

    /** The poll's timer now; cancelled at once if the poll ended meanwhile. */
    void timer(ScheduledFuture<?> next) {
      timer = next;
      if (ended.get()) {
        next.cancel(false);
      }
    }
  }
}
