package io.brokerstream.rules;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.Member;
import io.brokerstream.avro.Order;
import io.brokerstream.avro.ReasonCode;
import io.brokerstream.avro.Side;
import io.brokerstream.money.Micros;
import io.brokerstream.pricing.OptionPricer;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The broker's pre-trade controls, each at its edge beside the case just inside it: the member's
 * trading state and its limits per order, an erroneous limit, a halted or stale price, margin from
 * the marks and their age.
 *
 * <p>Every member has deposited 10,000 and no credit. EQ1 trades at 100, priced 60 s before the
 * order; HALT is halted; OLD was priced 901 s before it (the bound is 900 s); C1 is a call on HALT.
 * The price band is 5x; marks may be 30 s old.
 */
class PreTradeControlsTest {
  private static final Instant RECEIVED = Instant.parse("2026-11-25T15:00:00Z");
  private static final long T = RECEIVED.toEpochMilli();
  private final OrderDecider decider =
      new OrderDecider(
          new OptionPricer(0.03, 3.0, 365.0),
          new DecisionLimits(Micros.parse("1000000"), 1_000_000, 900_000, 30_000, 5));

  private static final Map<String, Member> MEMBERS =
      Map.of(
          "M1", member("M1", "ACTIVE", null, null),
          "M2", member("M2", "REDUCING", null, null),
          "M3", member("M3", "HALTED", null, null),
          "M4", member("M4", "ACTIVE", 50L, "2500"),
          "M8", member("M8", "REDUCE", null, null));

  /** Member -> what the P&L flow last said: loss, open positions, age (ms). */
  private static final Map<String, long[]> MARKS =
      Map.of(
          "M1", new long[] {Micros.parse("-4000"), 2, 30_000},
          "M2", new long[] {0, 1, 31_000},
          "M4", new long[] {0, 0, 3_600_000});

  private static final ReferenceData REF =
      new ReferenceData() {
        public AccountEntry account(String id) {
          return new AccountEntry(id, "M" + id.substring(1), "ACTIVE", 0, true);
        }

        public Member member(String id) {
          return MEMBERS.get(id);
        }

        public Instrument instrument(String id) {
          return switch (id) {
            case "C1" -> option("C1", "HALT");
            case "C2" -> option("C2", "EQ1");
            default -> equity(id);
          };
        }

        public Double volatility(String id) {
          return 0.25;
        }

        public Long priceMicros(String id) {
          return Micros.parse("100");
        }

        public Long priceTimeMs(String id) {
          return "OLD".equals(id) ? T - 901_000 : "EDGE".equals(id) ? T - 900_000 : T - 60_000;
        }

        public String halt(String id) {
          return "HALT".equals(id) ? "since 2026-11-25T14:59:00Z (PRICE_BAND: 2623.55)" : null;
        }

        public MemberMarks marks(String id) {
          long[] m = MARKS.get(id);
          return m == null ? null : new MemberMarks(m[0], (int) m[1], T - m[2]);
        }

        public long depositedCash(String memberId) {
          return Micros.parse("10000");
        }
      };

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '#',
      nullValues = "-",
      value = {
        // what                                              # acct# instr# side # qty # limit  #
        // held # reason
        "an order within every control                        # A1  # EQ1  # BUY  # 10  # -      # 0    # FILLED",
        "a halted member may not trade                        # A3  # EQ1  # BUY  # 1   # -      # 0    # MEMBER_HALTED",
        "a halted member may not even reduce                  # A3  # EQ1  # SELL # 1   # -      # 5    # MEMBER_HALTED",
        "a reducing member may reduce                         # A2  # EQ1  # SELL # 5   # -      # 5    # FILLED",
        "a reducing member may not open                       # A2  # EQ1  # BUY  # 1   # -      # 0    # REDUCE_ONLY",
        "a reducing member may not flip                       # A2  # EQ1  # SELL # 6   # -      # 5    # REDUCE_ONLY",
        "the member's largest order                           # A4  # EQ1  # BUY  # 25  # -      # 0    # FILLED",
        "a unit more than the member's most per order         # A4  # EQ1  # BUY  # 51  # -      # 0    # ORDER_TOO_LARGE",
        "the member's most notional per order                 # A4  # EQ1  # BUY  # 25  # -      # 0    # FILLED",
        "a unit beyond the member's notional                  # A4  # EQ1  # BUY  # 26  # -      # 0    # ORDER_TOO_LARGE",
        "a limit 5x above the price                           # A1  # EQ1  # BUY  # 1   # 500    # 0    # FILLED",
        "a limit a micro further                              # A1  # EQ1  # BUY  # 1   # 500.000001 # 0 # PRICE_OUT_OF_BAND",
        "a limit 5x below the price                           # A1  # EQ1  # SELL # 1   # 20     # 1    # FILLED",
        "a limit a micro further below                        # A1  # EQ1  # SELL # 1   # 19.999999 # 1 # PRICE_OUT_OF_BAND",
        "an option's limit is not banded (its price is a model's) # A1 # C2 # BUY # 1   # 5000   # 0    # FILLED",
        "a halted equity                                      # A1  # HALT # BUY  # 1   # -      # 0    # INSTRUMENT_HALTED",
        "a halted equity, closing too                         # A1  # HALT # SELL # 1   # -      # 1    # INSTRUMENT_HALTED",
        "an option on a halted equity                         # A1  # C1   # BUY  # 1   # -      # 0    # INSTRUMENT_HALTED",
        "a price as old as the bound                          # A1  # EDGE # BUY  # 1   # -      # 0    # FILLED",
        "a price a second older                               # A1  # OLD  # BUY  # 1   # -      # 0    # STALE_PRICE",
        "a limit a stale price does not meet may still rest   # A1  # OLD  # BUY  # 1   # 90     # 0    # LIMIT_NOT_MET",
        "an unknown trading state trades nothing              # A8  # EQ1  # BUY  # 1   # -      # 0    # MEMBER_HALTED",
        "a loss at the marks takes buying power               # A1  # EQ1  # BUY  # 60  # -      # 0    # FILLED",
        "a share beyond what the loss leaves                  # A1  # EQ1  # BUY  # 61  # -      # 0    # INSUFFICIENT_BUYING_POWER",
        "marks an hour old with nothing open do not matter    # A4  # EQ1  # BUY  # 1   # -      # 0    # FILLED",
      })
  void controls(
      String what,
      String account,
      String instrument,
      Side side,
      long quantity,
      String limit,
      long held,
      String expected) {
    String member = "M" + account.substring(1);
    PositionState position = PositionState.atAverage(held, Micros.parse("100"), 0, 1, 1);
    Order order =
        Order.newBuilder()
            .setOrderId("o-1")
            .setAccountId(account)
            .setInstrumentId(instrument)
            .setSide(side)
            .setQuantity(quantity)
            .setLimitPrice(limit == null ? null : new BigDecimal(limit).setScale(6))
            .setClientTs(RECEIVED)
            .build();

    Decision decision =
        decider.decide(
            order,
            member,
            RECEIVED,
            REF,
            position,
            new RiskState(PositionMath.exposure(position), 0));

    if ("FILLED".equals(expected)) {
      assertThat(decision).as(what + ": " + decision).isInstanceOf(Decision.Filled.class);
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
        // what                                          # marks age ms # reason
        "marks as old as the bound                        # 30000        # FILLED",
        "marks a millisecond older                        # 30001        # STALE_MARKS",
      })
  void marksOlderThanTheBoundRefuseWhatAddsExposure(String what, long ageMs, String expected) {
    ReferenceData ref =
        new ReferenceData() {
          public AccountEntry account(String id) {
            return REF.account(id);
          }

          public Member member(String id) {
            return REF.member(id);
          }

          public Instrument instrument(String id) {
            return REF.instrument(id);
          }

          public Double volatility(String id) {
            return 0.25;
          }

          public Long priceMicros(String id) {
            return Micros.parse("100");
          }

          public MemberMarks marks(String id) {
            return new MemberMarks(0, 3, T - ageMs);
          }

          public long depositedCash(String memberId) {
            return Micros.parse("10000");
          }
        };
    Order buy =
        Order.newBuilder()
            .setOrderId("o-1")
            .setAccountId("A1")
            .setInstrumentId("EQ1")
            .setSide(Side.BUY)
            .setQuantity(1)
            .setClientTs(RECEIVED)
            .build();
    Decision decision =
        decider.decide(buy, "M1", RECEIVED, ref, PositionState.FLAT, RiskState.NONE);
    assertThat(decision instanceof Decision.Rejected r ? r.reason().name() : "FILLED")
        .as(what)
        .isEqualTo(expected);
    // a sell that only reduces is never refused for the age of the marks
    Order sell = Order.newBuilder(buy).setSide(Side.SELL).build();
    PositionState held = PositionState.atAverage(5, Micros.parse("100"), 0, 1, 1);
    assertThat(
            decider.decide(
                sell, "M1", RECEIVED, ref, held, new RiskState(PositionMath.exposure(held), 0)))
        .as(what)
        .isInstanceOf(Decision.Filled.class);
  }

  private static Member member(String id, String state, Long maxQuantity, String maxNotional) {
    return Member.newBuilder()
        .setMemberId(id)
        .setName(id)
        .setStatus("ACTIVE")
        .setCreditLimit(BigDecimal.ZERO.setScale(6))
        .setTradingState(state)
        .setMaxOrderQuantity(maxQuantity)
        .setMaxOrderNotional(maxNotional == null ? null : new BigDecimal(maxNotional).setScale(6))
        .build();
  }

  private static Instrument equity(String id) {
    return Instrument.newBuilder()
        .setInstrumentId(id)
        .setSymbol(id)
        .setCurrency("USD")
        .setExchange("XNYS")
        .setName(id)
        .setInstrumentType("EQUITY")
        .setStatus("ACTIVE")
        .setMultiplier(1)
        .build();
  }

  private static Instrument option(String id, String underlying) {
    return Instrument.newBuilder(equity(id))
        .setInstrumentType("OPTION")
        .setUnderlyingId(underlying)
        .setUnderlyingSymbol(underlying)
        .setOptionType("CALL")
        .setStrike(new BigDecimal("100").setScale(6))
        .setMaturity(LocalDate.parse("2026-12-18"))
        .setExerciseStyle("EUROPEAN")
        .setMultiplier(100)
        .build();
  }
}
