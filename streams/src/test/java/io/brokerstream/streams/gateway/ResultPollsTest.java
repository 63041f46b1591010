package io.brokerstream.streams.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brokerstream.avro.OrderResult;
import io.brokerstream.streams.http.HttpCall;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** However a long poll ends, its slot and its waiter are given back exactly once. */
class ResultPollsTest {
  private static final long RECHECK_MS = 100;
  private final PollLimits limits = new PollLimits(10, 2);
  private final ResultWaiters waiters = new ResultWaiters();
  private final ScheduledExecutorService timers =
      ResultPolls.timers(
          r -> {
            Thread t = new Thread(r, "test-timer");
            t.setDaemon(true);
            return t;
          });
  private final ResultPolls polls =
      new ResultPolls(limits, waiters, timers, Runnable::run, RECHECK_MS);
  private final List<Object> answers = new CopyOnWriteArrayList<>();
  private final Call call = new Call();

  @AfterEach
  void stop() {
    timers.shutdownNow();
  }

  private void await(long waitMs, Supplier<OrderResult> read) {
    await(waitMs, false, read);
  }

  private void await(long waitMs, boolean onItsWay, Supplier<OrderResult> read) {
    polls.await(
        call,
        "M1",
        "M1|o-1",
        waitMs,
        () -> onItsWay,
        read,
        r -> answers.add("result"),
        () -> answers.add("timed out"));
  }

  private void nothingHeld() {
    assertThat(limits.waiting()).isZero();
    assertThat(waiters.waitingCount()).isZero();
  }

  @Test
  void aStoreThatCannotBeReadGivesTheSlotAndTheWaiterBack() {
    for (int i = 0; i < 5; i++) { // more than the member's 2 slots: none leaks, so none runs out
      assertThatThrownBy(
              () ->
                  await(
                      10_000,
                      () -> {
                        throw new InvalidStateStoreException("restoring");
                      }))
          .isInstanceOf(InvalidStateStoreException.class);
      nothingHeld();
    }
    assertThatThrownBy(
            () ->
                await(
                    10_000,
                    () -> {
                      throw new HttpError(503, "store not ready");
                    }))
        .isInstanceOf(HttpError.class);
    nothingHeld();
  }

  @Test
  void aResultAlreadyStoredIsAnsweredAtOnce() {
    await(10_000, ResultPollsTest::sample);
    assertThat(answers).containsExactly("result");
    nothingHeld();
  }

  @Test
  void aResultArrivingIsAnsweredOnceAndTheTimerFindsNothingLeft() throws InterruptedException {
    await(200, () -> null);
    assertThat(limits.waiting()).isEqualTo(1);
    waiters.complete("M1|o-1", sample());
    waiters.complete("M1|o-1", sample());
    TimeUnit.MILLISECONDS.sleep(400);
    assertThat(answers).containsExactly("result");
    nothingHeld();
  }

  @Test
  void aWaitThatRunsOutAnswersOnceAndGivesBack() throws InterruptedException {
    await(50, () -> null);
    TimeUnit.MILLISECONDS.sleep(300);
    assertThat(answers).containsExactly("timed out");
    nothingHeld();
  }

  @Test
  void aClientHangingUpGivesBackAtOnce() {
    await(60_000, () -> null);
    call.hangUp();
    nothingHeld();
    waiters.complete("M1|o-1", sample());
    assertThat(answers).isEmpty();
  }

  @Test
  void aMemberBeyondItsSlotsIsRefused429AndHoldsNothingMore() {
    await(60_000, () -> null);
    polls.await(call, "M1", "M1|o-2", 60_000, () -> false, () -> null, r -> {}, () -> {});
    assertThatThrownBy(
            () ->
                polls.await(
                    call, "M1", "M1|o-3", 60_000, () -> false, () -> null, r -> {}, () -> {}))
        .isInstanceOfSatisfying(HttpError.class, e -> assertThat(e.status).isEqualTo(429));
    assertThat(limits.waiting()).isEqualTo(2);
  }

  /** A store read that counts itself and answers what {@code stored} holds then. */
  private static final class CountingRead implements Supplier<OrderResult> {
    final AtomicInteger reads = new AtomicInteger();
    volatile OrderResult stored;

    @Override
    public OrderResult get() {
      reads.incrementAndGet();
      return stored;
    }
  }

  private int timersQueued() {
    return ((ScheduledThreadPoolExecutor) timers).getQueue().size();
  }

  @Test
  void aPollThatEndsTakesItsTimerOutOfTheQueue() {
    await(60_000, () -> null);
    await(60_000, true, () -> null);
    assertThat(timersQueued()).isEqualTo(2); // a wait, a recheck
    waiters.complete("M1|o-1", sample()); // both polls wait for the same order
    assertThat(answers).containsExactly("result", "result");
    assertThat(timersQueued()).isZero();
    await(60_000, () -> null);
    call.hangUp();
    assertThat(timersQueued()).isZero();
    nothingHeld();
  }

  @Test
  void aResultOnItsWayIsNotLookedForInTheStoreButAnnounced() throws InterruptedException {
    CountingRead read = new CountingRead();
    await(10_000, true, read);
    assertThat(read.reads).hasValue(0);
    waiters.complete("M1|o-1", sample());
    TimeUnit.MILLISECONDS.sleep(RECHECK_MS * 3); // the recheck finds the poll ended: no read
    assertThat(answers).containsExactly("result");
    assertThat(read.reads).hasValue(0);
    nothingHeld();
  }

  @Test
  void aResultOnItsWayButStoredWithoutAnAnnouncementIsFoundByTheRecheck()
      throws InterruptedException {
    CountingRead read = new CountingRead();
    read.stored = sample(); // an order id used again: its first result stands, none is announced
    await(10_000, true, read);
    assertThat(answers).isEmpty();
    TimeUnit.MILLISECONDS.sleep(RECHECK_MS * 4);
    assertThat(answers).containsExactly("result");
    assertThat(read.reads).hasValue(1);
    nothingHeld();
  }

  @Test
  void aResultOnItsWayThatNeverComesIsReadOnceThenTheWaitRunsOut() throws InterruptedException {
    CountingRead read = new CountingRead();
    await(RECHECK_MS * 3, true, read);
    TimeUnit.MILLISECONDS.sleep(RECHECK_MS * 2);
    assertThat(read.reads).hasValue(1);
    assertThat(answers).isEmpty();
    assertThat(limits.waiting()).isEqualTo(1);
    TimeUnit.MILLISECONDS.sleep(RECHECK_MS * 3);
    assertThat(answers).containsExactly("timed out");
    assertThat(read.reads).hasValue(1);
    nothingHeld();
  }

  @Test
  void aRecheckThatCannotReadTheStoreLeavesTheWaitToRunOut() throws InterruptedException {
    await(
        RECHECK_MS * 2,
        true,
        () -> {
          throw new InvalidStateStoreException("moving");
        });
    TimeUnit.MILLISECONDS.sleep(RECHECK_MS * 5);
    assertThat(answers).containsExactly("timed out");
    nothingHeld();
  }

  @Test
  void aWaitNoLongerThanTheRecheckReadsTheStoreAtOnce() {
    CountingRead read = new CountingRead();
    read.stored = sample();
    await(RECHECK_MS, true, read);
    assertThat(answers).containsExactly("result");
    assertThat(read.reads).hasValue(1);
    nothingHeld();
  }

  private static OrderResult sample() {
    return OrderResult.newBuilder()
        .setOrderId("o-1")
        .setMemberId("M1")
        .setAccountId("A1")
        .setInstrumentId("EQ1")
        .setSide(io.brokerstream.avro.Side.BUY)
        .setQuantity(1)
        .setStatus(io.brokerstream.avro.OrderStatus.REJECTED)
        .setClientTs(java.time.Instant.EPOCH)
        .setIngestTs(java.time.Instant.EPOCH)
        .setProcessedTs(java.time.Instant.EPOCH)
        .build();
  }

  /** A call whose client can be made to hang up. */
  private static final class Call implements HttpCall {
    private final List<Runnable> onHangUp = new CopyOnWriteArrayList<>();

    void hangUp() {
      onHangUp.forEach(Runnable::run);
    }

    @Override
    public void onHangUp(Runnable action) {
      onHangUp.add(action);
    }

    @Override
    public String method() {
      return "GET";
    }

    @Override
    public String rawPath() {
      return "/orders/o-1";
    }

    @Override
    public String rawQuery() {
      return null;
    }

    @Override
    public String rawTarget() {
      return rawPath();
    }

    @Override
    public String header(String name) {
      return null;
    }

    @Override
    public byte[] body() {
      return new byte[0];
    }

    @Override
    public InetAddress client() {
      return InetAddress.getLoopbackAddress();
    }

    @Override
    public void respond(int status, String contentType, byte[] body, Map<String, String> headers) {}
  }
}
