package io.brokerstream.streams.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brokerstream.avro.Member;
import java.math.BigDecimal;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** A member's orders per second, at the edge of its bucket. */
class MemberRatesTest {
  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final MemberRates rates = new MemberRates(10, now::get);

  private static Member member(Integer perSecond) {
    return Member.newBuilder()
        .setMemberId("M1")
        .setName("M1")
        .setStatus("ACTIVE")
        .setCreditLimit(BigDecimal.ZERO.setScale(6))
        .setMaxOrdersPerSecond(perSecond)
        .build();
  }

  private void advanceMs(long ms) {
    now.addAndGet(ms * 1_000_000L);
  }

  @Test
  void aSecondsWorthPassesAndTheNextIsRefusedWithWhenToComeBack() {
    for (int i = 0; i < 10; i++) {
      rates.take("M1", 1, member(null));
    }
    assertThatThrownBy(() -> rates.take("M1", 1, member(null)))
        .isInstanceOfSatisfying(
            HttpError.class,
            e -> {
              assertThat(e.status).isEqualTo(429);
              assertThat(e.headers).containsEntry("Retry-After", "1");
              assertThat(e.getMessage()).contains("10 orders, cancels and amends a second");
            });
    advanceMs(100); // a tenth of a second refills one
    rates.take("M1", 1, member(null));
    assertThatThrownBy(() -> rates.take("M1", 1, member(null))).isInstanceOf(HttpError.class);
  }

  @Test
  void aMembersOwnLimitIsItsRateAndOneMemberDoesNotSpendAnothers() {
    for (int i = 0; i < 3; i++) {
      rates.take("M1", 1, member(3));
    }
    assertThatThrownBy(() -> rates.take("M1", 1, member(3))).isInstanceOf(HttpError.class);
    rates.take("M2", 10, member(null)); // M2 has its own bucket, at the default
    assertThat(rates.limitOf(member(3))).isEqualTo(3);
    assertThat(rates.limitOf(member(null))).isEqualTo(10);
  }

  @Test
  void aBatchTakesOnePerOrderAndOneBeyondASecondsWorthNeverFits() {
    rates.take("M1", 10, member(null));
    assertThatThrownBy(() -> rates.take("M1", 1, member(null))).isInstanceOf(HttpError.class);
    advanceMs(10_000);
    assertThatThrownBy(() -> rates.take("M1", 11, member(null)))
        .isInstanceOfSatisfying(
            HttpError.class,
            e -> {
              assertThat(e.status).as("waiting would not help").isEqualTo(400);
              assertThat(e.getMessage()).contains("a batch of 11");
            });
    rates.take("M1", 10, member(null)); // the refused batch took nothing
  }

  @Test
  void aClockReadOutOfOrderByAnotherThreadRefillsNothing() {
    rates.take("M1", 10, member(null));
    now.addAndGet(-5_000_000_000L); // a thread that read the clock earlier takes the lock later
    assertThatThrownBy(() -> rates.take("M1", 1, member(null))).isInstanceOf(HttpError.class);
    now.addAndGet(5_000_000_000L);
    assertThatThrownBy(() -> rates.take("M1", 1, member(null))).isInstanceOf(HttpError.class);
  }

  @Test
  void idleTimeRefillsNoMoreThanASecondsWorth() {
    advanceMs(3_600_000);
    rates.take("M1", 10, member(null));
    assertThatThrownBy(() -> rates.take("M1", 1, member(null))).isInstanceOf(HttpError.class);
  }
}
