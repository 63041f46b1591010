package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class OrderIdSweeperTest {
  private static final long HOUR = 3_600_000L;
  private static final long T0 = 1_795_000_000_000L;
  private KeyValueStore<String, Long> ids;

  @BeforeEach
  void store() {
    ids =
        Stores.keyValueStoreBuilder(
                Stores.inMemoryKeyValueStore("order-ids"), Serdes.String(), Serdes.Long())
            .withLoggingDisabled()
            .withCachingDisabled()
            .build();
    MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
    ids.init(context.getStateStoreContext(), ids);
  }

  private void put(int from, int to, long ts) {
    for (int i = from; i < to; i++) {
      ids.put(String.format("M1|o-%06d", i), ts);
    }
  }

  private long count() {
    long n = 0;
    try (var it = ids.all()) {
      while (it.hasNext()) {
        it.next();
        n++;
      }
    }
    return n;
  }

  @Test
  void anIdStillInUseOutlivesItsRetention() {
    put(0, 10, T0);
    var sweeper = new OrderIdSweeper(ids, HOUR, 100, id -> id.equals("M1|o-000003"));
    sweeper.sweep(T0 + HOUR + 1);
    assertThat(count()).isEqualTo(1);
    assertThat(ids.get("M1|o-000003")).isEqualTo(T0);
  }

  @Test
  void aFullPassThenNothingIsWalkedUntilTheOldestIdCanExpire() {
    put(0, 50, T0);
    var sweeper = new OrderIdSweeper(ids, 24 * HOUR, 1000);
    assertThat(sweeper.sweep(T0 + 1000)).isEqualTo(50);
    assertThat(sweeper.nextPassAt()).isEqualTo(T0 + 24 * HOUR + 1);
    // every later second until then costs nothing, however many ids arrive
    put(50, 500, T0 + 2000);
    for (long t = T0 + 2000; t < T0 + 20_000; t += 1000) {
      assertThat(sweeper.sweep(t)).isZero();
    }
    assertThat(sweeper.sweep(T0 + 24 * HOUR)).isZero();
    assertThat(count()).isEqualTo(500);
    // due: the first 50 have expired, the rest not yet
    assertThat(sweeper.sweep(T0 + 24 * HOUR + 1)).isEqualTo(500);
    assertThat(count()).isEqualTo(450);
    // the rest could expire 2 s later, but passes are at least a twenty-fourth of the retention
    // apart
    assertThat(sweeper.nextPassAt()).isEqualTo(T0 + 25 * HOUR + 1);
    assertThat(sweeper.sweep(T0 + 25 * HOUR)).isZero();
    sweeper.sweep(T0 + 25 * HOUR + 1);
    assertThat(count()).isZero();
  }

  @Test
  void anIdIsNeverForgottenBeforeItsRetention() {
    var sweeper = new OrderIdSweeper(ids, HOUR, 7);
    var written = new java.util.TreeMap<String, Long>();
    for (int step = 0; step < 200; step++) {
      long now = T0 + step * 60_000L;
      String key = String.format("M1|s-%04d", step);
      ids.put(key, now);
      written.put(key, now);
      for (int s = 0; s < 60; s++) {
        long t = now + s * 1000L;
        sweeper.sweep(t);
        written.forEach(
            (k, ts) -> {
              if (ts >= t - HOUR) {
                assertThat(ids.get(k)).as("%s written at %d, swept at %d", k, ts, t).isEqualTo(ts);
              }
            });
      }
    }
    assertThat(count()).isLessThan(200);
    // and at most a twenty-fourth of it longer: nothing older than the retention plus the slack is
    // left
    long end = T0 + 199 * 60_000L;
    for (long t = end; t <= end + HOUR + HOUR / 24 + 60_000; t += 1000) {
      sweeper.sweep(t);
    }
    assertThat(count()).isZero();
  }

  @Test
  void aPassLongerThanASliceResumesWhereItStopped() {
    put(0, 25, T0);
    put(25, 50, T0 + 10 * HOUR);
    var sweeper = new OrderIdSweeper(ids, HOUR, 10);
    long now = T0 + 2 * HOUR;
    assertThat(sweeper.sweep(now)).isEqualTo(10);
    assertThat(sweeper.sweep(now + 1)).isEqualTo(10);
    assertThat(sweeper.sweep(now + 2)).isEqualTo(10);
    assertThat(sweeper.sweep(now + 3)).isEqualTo(10);
    assertThat(sweeper.sweep(now + 4)).isEqualTo(10);
    assertThat(count()).isEqualTo(25);
    // the oldest left is ten hours in: nothing to walk before it can expire
    assertThat(sweeper.nextPassAt()).isEqualTo(T0 + 11 * HOUR + 1);
    assertThat(sweeper.sweep(T0 + 11 * HOUR)).isZero();
  }

  @Test
  void afterAPassOverAnEmptyStoreTheNextComesARetentionLater() {
    var sweeper = new OrderIdSweeper(ids, 24 * HOUR, 100);
    assertThat(sweeper.sweep(T0)).isZero();
    assertThat(sweeper.nextPassAt()).isEqualTo(T0 + 24 * HOUR + 1);
  }

  @Test
  void refusesNonsense() {
    assertThatThrownBy(() -> new OrderIdSweeper(ids, 0, 10))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new OrderIdSweeper(ids, HOUR, 0))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
