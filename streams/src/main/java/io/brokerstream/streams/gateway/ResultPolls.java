package io.brokerstream.streams.gateway;

import io.brokerstream.avro.OrderResult;
import io.brokerstream.streams.http.HttpCall;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A long poll for one order's result: it holds a slot of {@link PollLimits} and a waiter of {@link
 * ResultWaiters} until exactly one of these ends it, and each gives both back exactly once: the
 * result arriving, the result already in the store, the wait running out, the client hanging up, or
 * the store refusing the read (restoring or moving: the caller answers 503, and nothing is left
 * held).
 */
final class ResultPolls {
  private final PollLimits limits;
  private final ResultWaiters waiters;
  private final ScheduledExecutorService timers;
  private final Executor workers;

  ResultPolls(
      PollLimits limits, ResultWaiters waiters, ScheduledExecutorService timers, Executor workers) {
    this.limits = limits;
    this.waiters = waiters;
    this.timers = timers;
    this.workers = workers;
  }

  /**
   * Waits up to {@code waitMs} for the result under {@code key}: {@code answer} gets it (on the
   * thread that found it: the caller's, or the stream thread that materialized it), or {@code
   * timedOut} runs on a worker thread. {@code read} is the store read, done once after the waiter
   * is registered so no result slips between; whatever it throws is thrown here once the slot and
   * the waiter are given back. 429 (as an HttpError) when no slot is free.
   */
  void await(
      HttpCall call,
      String member,
      String key,
      long waitMs,
      Supplier<OrderResult> read,
      Consumer<OrderResult> answer,
      Runnable timedOut) {
    Runnable release = limits.acquire(member);
    AtomicBoolean ended = new AtomicBoolean();
    Runnable[] forget = {() -> {}};
    Runnable giveBack =
        () -> {
          forget[0].run();
          release.run();
        };
    try {
      // The results table announces on a stream thread, and the answer is written from there: it
      // encodes a small JSON body and queues it on the connection's event loop, less work than
      // waking a worker thread to do the same. `answer` must not throw (the stream thread's task
      // would fail): the gateway wraps it in its error handling.
      forget[0] =
          waiters.await(
              key,
              r -> {
                if (ended.compareAndSet(false, true)) {
                  release.run();
                  answer.accept(r);
                }
              });
      OrderResult stored = read.get();
      if (stored != null) {
        if (ended.compareAndSet(false, true)) {
          giveBack.run();
          answer.accept(stored);
        }
        return;
      }
    } catch (RuntimeException e) {
      if (ended.compareAndSet(false, true)) {
        giveBack.run();
      }
      throw e;
    }
    // A client that hangs up gives its slot back at once, not when its wait ends.
    call.onHangUp(
        () -> {
          if (ended.compareAndSet(false, true)) {
            giveBack.run();
          }
        });
    timers.schedule(
        () -> {
          if (ended.compareAndSet(false, true)) {
            giveBack.run();
            workers.execute(timedOut);
          }
        },
        waitMs,
        TimeUnit.MILLISECONDS);
  }
}
