package io.brokerstream.pricing;

/**
 * Black-Scholes value of a European option on a non-dividend-paying underlying.
 *
 * <p>At or past expiry, or with no volatility left, the value is the (discounted) intrinsic value:
 * the limits of the formula, taken explicitly so that near-expiry and deep in/out of the money
 * inputs never produce NaN.
 */
public final class BlackScholes {
  private BlackScholes() {}

  /**
   * @param spot underlying price
   * @param strike strike price
   * @param years time to expiry in years (values &le; 0 mean expired)
   * @param rate continuously compounded risk-free rate
   * @param sigma annualised volatility
   */
  public static double price(
      OptionType type, double spot, double strike, double years, double rate, double sigma) {
    if (years <= 0.0) {
      return type.intrinsic(spot, strike);
    }
    double discount = Math.exp(-rate * years);
    double volSqrtT = sigma * Math.sqrt(years);
    if (volSqrtT < 1e-12) {
      return type.intrinsic(spot, strike * discount);
    }
    double d1 = (Math.log(spot / strike) + (rate + 0.5 * sigma * sigma) * years) / volSqrtT;
    double d2 = d1 - volSqrtT;
    double value =
        type == OptionType.CALL
            ? spot * Normal.cdf(d1) - strike * discount * Normal.cdf(d2)
            : strike * discount * Normal.cdf(-d2) - spot * Normal.cdf(-d1);
    return Math.max(value, 0.0); // rounding in the far tails must not give a negative value
  }
}
