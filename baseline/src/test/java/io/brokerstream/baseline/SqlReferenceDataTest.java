package io.brokerstream.baseline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.Member;
import io.brokerstream.rules.AccountEntry;
import java.math.BigDecimal;
import org.junit.jupiter.api.Test;

class SqlReferenceDataTest {
  private final AccountEntry account =
      new AccountEntry("A1", "M1", "ACTIVE", 5_000_000_000L, false);
  private final Member member =
      Member.newBuilder()
          .setMemberId("M1")
          .setName("m")
          .setStatus("ACTIVE")
          .setCreditLimit(new BigDecimal("0.000000"))
          .build();
  private final Instrument equity =
      Instrument.newBuilder()
          .setInstrumentId("E1")
          .setSymbol("E")
          .setCurrency("USD")
          .setExchange("X")
          .setName("e")
          .setInstrumentType("EQUITY")
          .setStatus("ACTIVE")
          .setMultiplier(1)
          .build();

  @Test
  void itAnswersForTheOrdersOwnAccountInstrumentAndUnderlying() {
    SqlReferenceData ref =
        new SqlReferenceData(
            new ReferenceLookups.Found(
                account, member, new ReferenceLookups.Priced(equity, 12_000_000L, 0.25, null)),
            "M1",
            7L);
    assertThat(ref.account("A1")).isSameAs(account);
    assertThat(ref.account("A2")).isNull();
    assertThat(ref.member("M1")).isSameAs(member);
    assertThat(ref.instrument("E1")).isSameAs(equity);
    assertThat(ref.instrument("E2")).isNull();
    assertThat(ref.priceMicros("E1")).isEqualTo(12_000_000L);
    assertThat(ref.volatility("E1")).isEqualTo(0.25);
    assertThat(ref.depositedCash("M1")).isEqualTo(7L);
  }

  @Test
  void whatTheLookupsDidNotFindIsUnknown() {
    SqlReferenceData ref =
        new SqlReferenceData(new ReferenceLookups.Found(null, null, null), "M1", 0L);
    assertThat(ref.account("A1")).isNull();
    assertThat(ref.member("M1")).isNull();
    assertThat(ref.instrument("E1")).isNull();
    assertThat(ref.priceMicros("E1")).isNull();
    assertThat(ref.volatility("E1")).isNull();
  }

  @Test
  void anotherMembersDataIsNeverAnsweredFromThisOrdersLookups() {
    SqlReferenceData ref =
        new SqlReferenceData(new ReferenceLookups.Found(account, member, null), "M1", 0L);
    assertThatThrownBy(() -> ref.member("M2")).isInstanceOf(IllegalStateException.class);
  }
}
