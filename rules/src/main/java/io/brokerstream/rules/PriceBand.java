package io.brokerstream.rules;

import io.brokerstream.money.Micros;

/**
 * When an instrument's price is in doubt, trading in it halts instead of going on at a price the
 * feed has left behind. Pure: the caller keeps the last accepted price and the halt, if any.
 *
 * <ul>
 *   <li>Trading: a tick within a factor of the last accepted price ({@code bandFactor}, the band)
 *       is accepted. A tick outside it halts the instrument (PRICE_BAND): it is held, not accepted,
 *       so nothing fills, triggers or is marked at it, and the last accepted price stays the
 *       reference.
 *   <li>Halted by the band: ticks keep coming and are held. The feed confirms a level when {@code
 *       confirmTicks} consecutive ticks each lie within {@code confirmFraction} of the one before
 *       (a crash to a new level, a reverse split, or a spike that reverted to the old level alike);
 *       the last of them is accepted as the new reference and trading resumes. No single tick, and
 *       no tick stamped ahead of the others, can lock an instrument out for good.
 *   <li>Halted by an operator: ticks are held the same way, but only an operator resumes it; the
 *       last held tick then becomes the reference. An operator's halt of a band halt keeps it
 *       halted until the operator resumes it.
 * </ul>
 */
public final class PriceBand {
  public enum Verdict {
    /** The tick is the new price. */
    ACCEPT,
    /** The tick is held: the instrument halts with it (a transition, to be announced). */
    HALT,
    /** The tick is held: the instrument was halted and stays so. */
    HOLD,
    /** The tick is the new price and ends the halt (a transition, to be announced). */
    RESUME
  }

  public static final String BAND = "PRICE_BAND";
  public static final String OPERATOR = "OPERATOR";

  /**
   * A halt: why (BAND or OPERATOR), since when (broker time), who (the feed, or the operator's
   * name), what was said, the last tick held (price 0: none yet) and how many consecutive held
   * ticks agree with it.
   */
  public record Halt(
      String reason,
      long sinceMs,
      String by,
      String detail,
      long heldPrice,
      long heldEventMs,
      long heldSequence,
      int confirmations) {
    public boolean byOperator() {
      return OPERATOR.equals(reason);
    }

    Halt holding(long price, long eventMs, long sequence, int agreeing) {
      return new Halt(reason, sinceMs, by, detail, price, eventMs, sequence, agreeing);
    }
  }

  /** What a tick or a command did: the verdict, and the halt after it (null: trading). */
  public record Step(Verdict verdict, Halt halt) {}

  private final double bandFactor;
  private final double confirmFraction;
  private final int confirmTicks;

  public PriceBand(double bandFactor, double confirmFraction, int confirmTicks) {
    if (!(bandFactor > 1)) {
      throw new IllegalArgumentException("the band factor must be above 1, got " + bandFactor);
    }
    if (!(confirmFraction >= 0 && confirmFraction < 1)) {
      throw new IllegalArgumentException(
          "the confirming fraction is in [0, 1), got " + confirmFraction);
    }
    if (confirmTicks < 2) {
      // the halting tick counts as the first: one alone would accept any jump
      throw new IllegalArgumentException("at least two confirming ticks, got " + confirmTicks);
    }
    this.bandFactor = bandFactor;
    this.confirmFraction = confirmFraction;
    this.confirmTicks = confirmTicks;
  }

  public int confirmTicks() {
    return confirmTicks;
  }

  /**
   * A tick that passed {@link TickRules} at {@code price} (micros), against the last accepted price
   * ({@code reference}, null when none) and the instrument's halt (null when trading).
   */
  public Step onTick(
      long price, long eventMs, long sequence, Long reference, Halt halt, long nowMs) {
    if (halt == null) {
      if (reference == null || reference <= 0 || within(price, reference, bandFactor)) {
        return new Step(Verdict.ACCEPT, null);
      }
      String detail =
          "price "
              + Micros.format(price)
              + " is more than "
              + bandFactor
              + "x away from the last accepted "
              + Micros.format(reference)
              + ": halted until "
              + confirmTicks
              + " consecutive ticks agree within "
              + percent()
              + " or an operator resumes it";
      return new Step(
          Verdict.HALT, new Halt(BAND, nowMs, "feed", detail, price, eventMs, sequence, 1));
    }
    int agreeing =
        halt.heldPrice() > 0 && agrees(price, halt.heldPrice()) ? halt.confirmations() + 1 : 1;
    if (!halt.byOperator() && agreeing >= confirmTicks) {
      return new Step(Verdict.RESUME, null);
    }
    return new Step(Verdict.HOLD, halt.holding(price, eventMs, sequence, agreeing));
  }

  /** An operator halts the instrument (already halted: the operator's halt takes it over). */
  public static Halt operatorHalt(Halt current, String operator, String reason, long nowMs) {
    return new Halt(
        OPERATOR,
        current == null ? nowMs : current.sinceMs(),
        operator,
        reason,
        current == null ? 0 : current.heldPrice(),
        current == null ? 0 : current.heldEventMs(),
        current == null ? 0 : current.heldSequence(),
        current == null ? 0 : current.confirmations());
  }

  /** Whether two prices agree: within the confirming fraction of the earlier. */
  boolean agrees(long price, long earlier) {
    return Math.abs((double) price - earlier) <= confirmFraction * earlier;
  }

  /** Whether a price lies within the band of a reference price. */
  public boolean within(long price, long reference) {
    return within(price, reference, bandFactor);
  }

  private static boolean within(long price, long reference, double factor) {
    return !(price > reference * factor || price * factor < reference);
  }

  private String percent() {
    return String.format(java.util.Locale.ROOT, "%.4g %%", confirmFraction * 100);
  }
}
