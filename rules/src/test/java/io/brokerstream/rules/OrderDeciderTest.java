package io.brokerstream.rules;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.Member;
import io.brokerstream.avro.Order;
import io.brokerstream.avro.ReasonCode;
import io.brokerstream.avro.Side;
import io.brokerstream.avro.TimeInForce;
import io.brokerstream.money.Micros;
import io.brokerstream.pricing.OptionPricer;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every reason code the decider gives, each at its edge beside the case just inside it; the first
 * failed check is the reason. The decision alone, without a topology: reference data is a table.
 *
 * <p>Member M1 has deposited 10,000 and no credit; EQ1 trades at 100, so 100 shares commit exactly
 * its buying power.
 */
class OrderDeciderTest {
  private static final Instant RECEIVED = Instant.parse("2026-11-25T15:00:00Z");
  private static final LocalDate TODAY = LocalDate.parse("2026-11-25");
  private static final long MAX_QUANTITY = 1_000_000;
  private final OrderDecider decider =
      new OrderDecider(new OptionPricer(0.03, 3.0, 365.0), Micros.parse("1000000"), MAX_QUANTITY);

  private static final Map<String, AccountEntry> ACCOUNTS =
      Map.of(
          "A1", new AccountEntry("A1", "M1", "ACTIVE", 0, false),
          "A2", new AccountEntry("A2", "M1", "CLOSED", 0, false),
          "A3", new AccountEntry("A3", "M9", "ACTIVE", 0, false),
          "A4", new AccountEntry("A4", "M2", "ACTIVE", 0, false),
          "A5", new AccountEntry("A5", "M1", "ACTIVE", 0, true));
  private static final Map<String, Member> MEMBERS =
      Map.of("M1", member("M1", "ACTIVE"), "M2", member("M2", "SUSPENDED"));
  private static final Map<String, Instrument> INSTRUMENTS =
      Map.of(
          "EQ1", equity("EQ1", "ACTIVE", 1),
          "EQ2", equity("EQ2", "DELISTED", 1),
          "EQ3", equity("EQ3", "ACTIVE", 1),
          "BIG", equity("BIG", "ACTIVE", 1_000_000),
          "C100", option("C100", "EQ1", "CALL", "100", TODAY.plusDays(30), 100),
          "C_OLD", option("C_OLD", "EQ1", "CALL", "100", TODAY.minusDays(1)),
          "C_LAST", option("C_LAST", "EQ1", "CALL", "100", TODAY),
          "C_FAR", option("C_FAR", "EQ1", "CALL", "1000", TODAY),
          "C_NOVOL", option("C_NOVOL", "BIG", "CALL", "100", TODAY.plusDays(30)));
  private static final Map<String, Long> PRICES =
      Map.of("EQ1", Micros.parse("100"), "EQ2", Micros.parse("100"), "BIG", Micros.parse("100"));
  private static final Map<String, Double> VOLATILITIES = Map.of("EQ1", 0.25);

  private static final ReferenceData REF =
      new ReferenceData() {
        public AccountEntry account(String id) {
          return ACCOUNTS.get(id);
        }

        public Member member(String id) {
          return MEMBERS.get(id);
        }

        public Instrument instrument(String id) {
          return INSTRUMENTS.get(id);
        }

        public Double volatility(String id) {
          return VOLATILITIES.get(id);
        }

        public Long priceMicros(String id) {
          return PRICES.get(id);
        }

        public long depositedCash(String memberId) {
          return "M1".equals(memberId) ? Micros.parse("10000") : 0;
        }
      };

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '#',
      nullValues = "-",
      value = {
        // what                                  # acct# member# instr  # side# qty    # limit
        // # stop# tif# held# reserved# reason
        "a market buy within buying power        # A1 # M1 # EQ1    # BUY # 10     # -          # -   # IOC# 0   # 0       # FILLED",
        "quantity 0                              # A1 # M1 # EQ1    # BUY # 0      # -          # -   # IOC# 0   # 0       # INVALID_QUANTITY",
        "quantity -1                             # A1 # M1 # EQ1    # SELL# -1     # -          # -   # IOC# 0   # 0       # INVALID_QUANTITY",
        "quantity one above the maximum          # A1 # M1 # EQ1    # BUY # 1000001# -          # -   # IOC# 0   # 0       # INVALID_QUANTITY",
        "quantity at the maximum is checked on   # A1 # M1 # EQ1    # BUY # 1000000# -          # -   # IOC# 0   # 0       # INSUFFICIENT_BUYING_POWER",
        "limit 0                                 # A1 # M1 # EQ1    # BUY # 1      # 0          # -   # IOC# 0   # 0       # INVALID_PRICE",
        "limit one micro above the maximum       # A1 # M1 # EQ1    # BUY # 1      # 1000000.000001# - # IOC# 0   # 0       # INVALID_PRICE",
        "limit at the maximum                    # A1 # M1 # EQ1    # BUY # 1      # 1000000    # -   # IOC# 0   # 0       # FILLED",
        "stop 0                                  # A1 # M1 # EQ1    # BUY # 1      # -          # 0   # GTC# 0   # 0       # INVALID_PRICE",
        "stop with a limit                       # A1 # M1 # EQ1    # BUY # 1      # 101        # 101 # GTC# 0   # 0       # INVALID_PRICE",
        "stop with IOC                           # A1 # M1 # EQ1    # BUY # 1      # -          # 101 # IOC# 0   # 0       # INVALID_PRICE",
        "unknown account                         # A0 # M1 # EQ1    # BUY # 1      # -          # -   # IOC# 0   # 0       # UNKNOWN_ACCOUNT",
        "another member's account                # A4 # M1 # EQ1    # BUY # 1      # -          # -   # IOC# 0   # 0       # MEMBER_MISMATCH",
        "closed account                          # A2 # M1 # EQ1    # BUY # 1      # -          # -   # IOC# 0   # 0       # ACCOUNT_INACTIVE",
        "account of an unknown member            # A3 # M9 # EQ1    # BUY # 1      # -          # -   # IOC# 0   # 0       # UNKNOWN_MEMBER",
        "account of a suspended member           # A4 # M2 # EQ1    # BUY # 1      # -          # -   # IOC# 0   # 0       # MEMBER_INACTIVE",
        "unknown instrument                      # A1 # M1 # EQ0    # BUY # 1      # -          # -   # IOC# 0   # 0       # UNKNOWN_INSTRUMENT",
        "delisted instrument                     # A1 # M1 # EQ2    # BUY # 1      # -          # -   # IOC# 0   # 0       # INSTRUMENT_INACTIVE",
        "option past its maturity day            # A1 # M1 # C_OLD  # BUY # 1      # -          # -   # IOC# 0   # 0       # OPTION_EXPIRED",
        "option on its maturity day              # A1 # M1 # C_LAST # BUY # 1      # -          # -   # IOC# 0   # 0       # FILLED",
        "equity without a price yet              # A1 # M1 # EQ3    # BUY # 1      # -          # -   # IOC# 0   # 0       # NO_PRICE",
        "option without a volatility             # A1 # M1 # C_NOVOL# BUY # 1      # -          # -   # IOC# 0   # 0       # NO_PRICE",
        "option whose price rounds to 0          # A1 # M1 # C_FAR  # BUY # 1      # -          # -   # IOC# 0   # 0       # NO_PRICE",
        "buy limit one micro under the price     # A1 # M1 # EQ1    # BUY # 1      # 99.999999  # -   # IOC# 0   # 0       # LIMIT_NOT_MET",
        "buy limit at the price                  # A1 # M1 # EQ1    # BUY # 1      # 100        # -   # IOC# 0   # 0       # FILLED",
        "sell limit one micro over the price     # A1 # M1 # EQ1    # SELL# 1      # 100.000001 # -   # IOC# 1   # 0       # LIMIT_NOT_MET",
        "sell limit at the price                 # A1 # M1 # EQ1    # SELL# 1      # 100        # -   # IOC# 1   # 0       # FILLED",
        "selling what is held                    # A1 # M1 # EQ1    # SELL# 5      # -          # -   # IOC# 5   # 0       # FILLED",
        "selling one more than held              # A1 # M1 # EQ1    # SELL# 6      # -          # -   # IOC# 5   # 0       # SHORT_NOT_ALLOWED",
        "selling short where allowed             # A5 # M1 # EQ1    # SELL# 6      # -          # -   # IOC# 5   # 0       # FILLED",
        "committing exactly the buying power     # A1 # M1 # EQ1    # BUY # 100    # -          # -   # IOC# 0   # 0       # FILLED",
        "committing one share more               # A1 # M1 # EQ1    # BUY # 101    # -          # -   # IOC# 0   # 0       # INSUFFICIENT_BUYING_POWER",
        "the last micro held for working orders  # A1 # M1 # EQ1    # BUY # 100    # -          # -   # IOC# 0   # 0.000001# INSUFFICIENT_BUYING_POWER",
        "reducing a position beyond the power    # A1 # M1 # EQ1    # SELL# 50     # -          # -   # IOC# 200 # 0       # FILLED",
        "adding to a position beyond the power   # A1 # M1 # EQ1    # BUY # 1      # -          # -   # IOC# 200 # 0       # INSUFFICIENT_BUYING_POWER",
        "a value no long can hold                # A1 # M1 # BIG    # BUY # 1000000# -          # -   # IOC# 0   # 0       # INSUFFICIENT_BUYING_POWER",
      })
  void decides(
      String what,
      String account,
      String memberKey,
      String instrument,
      Side side,
      long quantity,
      String limit,
      String stop,
      TimeInForce tif,
      long held,
      String reserved,
      String expected) {
    PositionState position = heldAt100(held);
    Order order =
        order(account, instrument, side, quantity)
            .setLimitPrice(limit == null ? null : new BigDecimal(limit).setScale(6))
            .setStopPrice(stop == null ? null : new BigDecimal(stop).setScale(6))
            .setTimeInForce(tif)
            .build();

    Decision decision =
        decider.decide(
            order,
            memberKey,
            RECEIVED,
            REF,
            position,
            riskOf(position),
            null,
            Micros.parse(reserved));

    if ("FILLED".equals(expected)) {
      assertThat(decision).as(what).isInstanceOf(Decision.Filled.class);
    } else {
      assertThat(decision).as(what).isInstanceOf(Decision.Rejected.class);
      assertThat(((Decision.Rejected) decision).reason())
          .as(what + ": " + ((Decision.Rejected) decision).detail())
          .isEqualTo(ReasonCode.valueOf(expected));
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '#',
      value = {
        // what                              # side # qty # held # fill  # cash delta  # committed
        "a buy pays price x quantity         # BUY  # 10  # 0    # 100   # -1000       # 1000",
        "a sell of a long receives and frees # SELL # 4   # 10   # 100   # 400         # 600",
        "a short sale receives and commits   # SELL # 3   # 0    # 100   # 300         # 300",
      })
  void aFillMovesCashAndCommittedValue(
      String what,
      Side side,
      long quantity,
      long held,
      String fill,
      String cashDelta,
      String committedAfter) {
    PositionState position = heldAt100(held);
    Order order = order("A5", "EQ1", side, quantity).build();

    Decision.Filled filled =
        (Decision.Filled)
            decider.decide(
                order, "M1", RECEIVED, REF, position, riskOf(position), Micros.parse(fill), 0);

    assertThat(filled.fillPrice()).as(what).isEqualTo(Micros.parse(fill));
    assertThat(filled.cashDelta()).as(what).isEqualTo(Micros.parse(cashDelta));
    assertThat(filled.risk().committed()).as(what).isEqualTo(Micros.parse(committedAfter));
  }

  /**
   * The one risk rule at every fill a member can choose: M1 has 10,000 of buying power. A fill
   * whose opening leg adds exposure is checked against what is left after the P&L it realizes; one
   * that only reduces is never refused.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '#',
      nullValues = "-",
      value = {
        // what                                                  # held # avg  # price # side # qty
        // # reserved # expected                  # committed after
        "a flip after a loss pays for the loss first             # 90   # 100  # 50    # SELL # 250 # 0        # INSUFFICIENT_BUYING_POWER # -",
        "a flip after a loss within what the loss leaves          # 90   # 100  # 50    # SELL # 200 # 0        # FILLED                    # 5500",
        "the last micro a flip after a loss may open              # 90   # 100  # 50    # SELL # 201 # 0        # INSUFFICIENT_BUYING_POWER # -",
        "a flip after a gain may use the gain                     # 90   # 100  # 150   # SELL # 186 # 0        # FILLED                    # 14400",
        "a flip after a gain beyond it                            # 90   # 100  # 150   # SELL # 187 # 0        # INSUFFICIENT_BUYING_POWER # -",
        "a flip counts what working orders hold                   # 90   # 100  # 50    # SELL # 200 # 0.000001 # INSUFFICIENT_BUYING_POWER # -",
        "a partial close at a loss is never refused               # 90   # 100  # 1     # SELL # 50  # 0        # FILLED                    # 4000",
        "closing at a loss is never refused, whatever is reserved # 90   # 100  # 1     # SELL # 90  # 9999     # FILLED                    # 0",
        "covering a short at a loss is never refused              # -90  # 100  # 200   # BUY  # 90  # 0        # FILLED                    # 0",
        "adding to a short up to the buying power                 # -50  # 100  # 100   # SELL # 50  # 0        # FILLED                    # 10000",
        "a short flipped long pays for its loss first             # -90  # 100  # 120   # BUY  # 159 # 0        # INSUFFICIENT_BUYING_POWER # -",
        "a short flipped long within what the loss leaves         # -90  # 100  # 120   # BUY  # 158 # 0        # FILLED                    # 8160",
      })
  void buyingPowerIsCheckedAfterTheFillsOwnPnl(
      String what,
      long held,
      String avg,
      String price,
      Side side,
      long quantity,
      String reserved,
      String expected,
      String committedAfter) {
    PositionState position = PositionState.atAverage(held, Micros.parse(avg), 0, 1, 1);
    Order order = order("A5", "EQ1", side, quantity).build();

    Decision decision =
        decider.decide(
            order,
            "M1",
            RECEIVED,
            REF,
            position,
            riskOf(position),
            Micros.parse(price),
            Micros.parse(reserved));

    if ("FILLED".equals(expected)) {
      assertThat(decision).as(what).isInstanceOf(Decision.Filled.class);
      assertThat(((Decision.Filled) decision).risk().committed())
          .as(what)
          .isEqualTo(Micros.parse(committedAfter));
    } else {
      assertThat(decision).as(what).isInstanceOf(Decision.Rejected.class);
      assertThat(((Decision.Rejected) decision).reason())
          .as(what + ": " + ((Decision.Rejected) decision).detail())
          .isEqualTo(ReasonCode.valueOf(expected));
    }
  }

  /**
   * An option commits its premium x multiplier; a position open at one multiplier keeps it, in the
   * decision as in the totals, whatever the instrument says now.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '#',
      value = {
        // what                                                   # held # booked mult # qty #
        // expected  # committed after
        "a contract commits price x 100                            # 0    # 0           # 1   # FILLED    # 500",
        "twenty contracts are the whole buying power               # 0    # 0           # 20  # FILLED    # 10000",
        "one more is beyond it                                     # 0    # 0           # 21  # INSUFFICIENT_BUYING_POWER # 0",
        "a position booked at 10 adds at 10                        # 10   # 10          # 10  # FILLED    # 1000",
        "a position booked at 10 sells out at 10 and frees it all  # 10   # 10          # -10 # FILLED    # 0",
      })
  void optionsCommitTheirMultiplier(
      String what,
      long held,
      int bookedMultiplier,
      long quantity,
      String expected,
      String committedAfter) {
    long premium = Micros.parse("5");
    PositionState position = PositionState.atAverage(held, premium, 0, 1, bookedMultiplier);
    Order order =
        order("A5", "C100", quantity > 0 ? Side.BUY : Side.SELL, Math.abs(quantity)).build();

    Decision decision =
        decider.decide(
            order,
            "M1",
            RECEIVED,
            REF,
            position,
            new RiskState(PositionMath.exposure(position), 0),
            premium,
            0);

    if ("FILLED".equals(expected)) {
      Decision.Filled fill = (Decision.Filled) decision;
      assertThat(fill.risk().committed()).as(what).isEqualTo(Micros.parse(committedAfter));
      assertThat(fill.multiplier()).as(what).isEqualTo(held == 0 ? 100 : bookedMultiplier);
      assertThat(fill.position().multiplier()).as(what).isEqualTo(fill.multiplier());
    } else {
      assertThat(((Decision.Rejected) decision).reason())
          .as(what)
          .isEqualTo(ReasonCode.valueOf(expected));
    }
  }

  /** A position of {@code held} bought at 100: it commits held x 100 of the member's power. */
  private static PositionState heldAt100(long held) {
    return PositionState.atAverage(held, held == 0 ? 0 : Micros.parse("100"), 0, 1, 1);
  }

  private static RiskState riskOf(PositionState position) {
    return new RiskState(PositionMath.exposure(position, 1), 0);
  }

  private static Order.Builder order(String account, String instrument, Side side, long quantity) {
    return Order.newBuilder()
        .setOrderId("o-1")
        .setAccountId(account)
        .setInstrumentId(instrument)
        .setSide(side)
        .setQuantity(quantity)
        .setClientTs(RECEIVED);
  }

  private static Member member(String id, String status) {
    return Member.newBuilder()
        .setMemberId(id)
        .setName(id)
        .setStatus(status)
        .setCreditLimit(BigDecimal.ZERO.setScale(6))
        .build();
  }

  private static Instrument equity(String id, String status, int multiplier) {
    return Instrument.newBuilder()
        .setInstrumentId(id)
        .setSymbol(id)
        .setCurrency("USD")
        .setExchange("XNYS")
        .setName(id)
        .setInstrumentType("EQUITY")
        .setStatus(status)
        .setMultiplier(multiplier)
        .build();
  }

  private static Instrument option(
      String id, String underlying, String type, String strike, LocalDate maturity) {
    return option(id, underlying, type, strike, maturity, 1);
  }

  private static Instrument option(
      String id,
      String underlying,
      String type,
      String strike,
      LocalDate maturity,
      int multiplier) {
    return Instrument.newBuilder(equity(id, "ACTIVE", multiplier))
        .setInstrumentType("OPTION")
        .setUnderlyingId(underlying)
        .setUnderlyingSymbol(underlying)
        .setOptionType(type)
        .setStrike(new BigDecimal(strike).setScale(6))
        .setMaturity(maturity)
        .setExerciseStyle("EUROPEAN")
        .build();
  }
}
