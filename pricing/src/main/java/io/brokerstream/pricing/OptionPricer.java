package io.brokerstream.pricing;

/**
 * The broker's option model: Black-Scholes for European options and American calls (without
 * dividends an American call is never exercised early, so it is worth exactly its European value),
 * the early-exercise premium along the put's exercise boundary for American puts ({@link
 * AmericanPuts}).
 */
public final class OptionPricer implements java.io.Serializable {
  private static final long serialVersionUID = 3L;
  private static final long MILLIS_PER_DAY = 24L * 3600 * 1000;
  private final double rate;
  private final double putHorizonYears;
  private final double millisPerYear;
  // boundaries are a cache, rebuilt where a job's functions are deserialized
  private transient volatile AmericanPuts americanPuts;

  public OptionPricer(double rate, double putHorizonYears, double daysPerYear) {
    this.rate = rate;
    this.putHorizonYears = putHorizonYears;
    this.millisPerYear = daysPerYear * MILLIS_PER_DAY;
    this.americanPuts = new AmericanPuts(rate, putHorizonYears);
  }

  public double rate() {
    return rate;
  }

  /**
   * The model's time to maturity: from {@code atMillis} (the broker's clock) to the end of the
   * maturity day, UTC, in years of the model's days (actual/365 fixed by default); 0 once that day
   * is over.
   */
  public double yearsToExpiry(long maturityEpochDay, long atMillis) {
    long expiry = (maturityEpochDay + 1) * MILLIS_PER_DAY;
    return Math.max(0.0, (expiry - atMillis) / millisPerYear);
  }

  public double price(
      OptionType type,
      ExerciseStyle style,
      double spot,
      double strike,
      double years,
      double sigma) {
    if (style == ExerciseStyle.EUROPEAN || type == OptionType.CALL) {
      return BlackScholes.price(type, spot, strike, years, rate, sigma);
    }
    AmericanPuts puts = americanPuts;
    if (puts == null) {
      puts = new AmericanPuts(rate, putHorizonYears); // a race builds two caches, each correct
      americanPuts = puts;
    }
    return puts.price(spot, strike, years, sigma);
  }
}
