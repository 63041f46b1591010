package io.brokerstream.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ScheduleTest {
  @Test
  void ordersAreDueOneByOneAtTheRate() {
    Schedule s = new Schedule(1000);
    assertThat(s.dueMicros(1000) - s.dueMicros(0)).isEqualTo(1_000_000);
    assertThat(s.dueMicros(1) - s.dueMicros(0)).isEqualTo(1000);
  }

  @Test
  void aCallerBehindScheduleIsToldHowLateItIs() throws InterruptedException {
    Schedule s = new Schedule(100);
    Thread.sleep(60);
    // order 1 was due after 10 ms: about 50 ms ago
    assertThat(s.awaitDue(1)).isGreaterThanOrEqualTo(45_000);
    // order 100 is due in about a second: waiting for it is not lateness
    assertThat(s.awaitDue(7)).isGreaterThanOrEqualTo(0);
  }

  @Test
  void aRateMustBePositive() {
    assertThatThrownBy(() -> new Schedule(0)).isInstanceOf(IllegalArgumentException.class);
  }
}
