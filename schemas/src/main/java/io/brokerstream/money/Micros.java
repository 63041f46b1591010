package io.brokerstream.money;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * Money and prices as scaled longs: 1 unit = 1,000,000 micros, the scale (6) of every decimal(18,6)
 * field of our schemas. Accounting adds and multiplies these exactly, failing on overflow rather
 * than wrapping; the only rounding is where a quotient is needed (average cost), half-even to the
 * micro. Binary floating point never touches them; model values (option prices) enter through
 * {@link #ofModel(double)}.
 */
public final class Micros {
  public static final int SCALE = 6;
  public static final long ONE = 1_000_000L;

  private Micros() {}

  /** Exact: fails if the decimal has more than 6 decimal places or does not fit. */
  public static long of(BigDecimal value) {
    return value.movePointRight(SCALE).setScale(0, RoundingMode.UNNECESSARY).longValueExact();
  }

  public static long parse(String text) {
    return of(new BigDecimal(text));
  }

  /** The decimal(18,6) value Avro writes. */
  public static BigDecimal toDecimal(long micros) {
    return BigDecimal.valueOf(micros, SCALE);
  }

  public static String format(long micros) {
    return toDecimal(micros).toPlainString();
  }

  /** A model result (an option's value) rounded half-even to the micro. */
  public static long ofModel(double value) {
    if (!Double.isFinite(value)) {
      throw new ArithmeticException("not a finite price: " + value);
    }
    return new BigDecimal(value)
        .setScale(SCALE, RoundingMode.HALF_EVEN)
        .movePointRight(SCALE)
        .longValueExact();
  }

  /** A price in micros as a double, for model inputs only. */
  public static double toModel(long micros) {
    return micros / (double) ONE;
  }

  /** price x quantity (an integer count), exact. */
  public static long times(long priceMicros, long quantity) {
    return Math.multiplyExact(priceMicros, quantity);
  }

  /** total / quantity rounded half-even to the micro: an average price. */
  public static long divide(long totalMicros, long quantity) {
    return BigDecimal.valueOf(totalMicros)
        .divide(BigDecimal.valueOf(quantity), 0, RoundingMode.HALF_EVEN)
        .longValueExact();
  }

  /**
   * {@code part} of {@code whole} units' share of {@code totalMicros}, rounded half-even to the
   * micro (the cost of the units a fill closes out of an open position's cost basis). Exact for
   * every long input: the product is taken in BigDecimal.
   */
  public static long share(long totalMicros, long part, long whole) {
    if (whole <= 0 || part < 0 || part > whole) {
      throw new IllegalArgumentException("a share of " + part + " in " + whole);
    }
    if (part == whole) {
      return totalMicros;
    }
    return BigDecimal.valueOf(totalMicros)
        .multiply(BigDecimal.valueOf(part))
        .divide(BigDecimal.valueOf(whole), 0, RoundingMode.HALF_EVEN)
        .longValueExact();
  }
}
