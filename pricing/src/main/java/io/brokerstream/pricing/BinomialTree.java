package io.brokerstream.pricing;

/**
 * Cox-Ross-Rubinstein binomial tree, European or American exercise. The tree is rolled back in one
 * array, O(steps^2) time and O(steps) memory; {@code steps} trades accuracy (error ~ 1/steps) for
 * speed. The flows price with {@link OptionPricer}; this tree is the reference its American puts
 * are checked against (thousands of steps) and the 100-step model they replaced (`bench pricing`).
 */
public final class BinomialTree {
  private BinomialTree() {}

  /**
   * One CRR lattice: n steps of dt, up/down factors, one step's growth and discounted
   * probabilities.
   */
  private record Lattice(double dt, double up, double down, double growth, double pu, double pd) {
    static Lattice of(double years, double rate, double sigma, int n) {
      double dt = years / n;
      double up = Math.exp(sigma * Math.sqrt(dt));
      double down = 1.0 / up;
      double growth = Math.exp(rate * dt);
      double p = (growth - down) / (up - down);
      double disc = 1.0 / growth;
      return new Lattice(dt, up, down, growth, disc * p, disc * (1.0 - p));
    }
  }

  public static double price(
      OptionType type,
      ExerciseStyle style,
      double spot,
      double strike,
      double years,
      double rate,
      double sigma,
      int steps) {
    if (years <= 0.0) {
      return type.intrinsic(spot, strike);
    }
    if (sigma * Math.sqrt(years) < 1e-12) {
      double european = type.intrinsic(spot, strike * Math.exp(-rate * years));
      return style == ExerciseStyle.AMERICAN
          ? Math.max(european, type.intrinsic(spot, strike))
          : european;
    }
    int n = Math.max(1, steps);
    Lattice lattice = Lattice.of(years, rate, sigma, n);
    double up = lattice.up();
    double down = lattice.down();
    double pu = lattice.pu();
    double pd = lattice.pd();
    boolean american = style == ExerciseStyle.AMERICAN;
    // +1 for a call, -1 for a put: a payoff is sign x (spot - strike), exactly (negation is exact)
    double sign = type == OptionType.CALL ? 1.0 : -1.0;

    // The hot loop of a fine reference tree: no enum dispatch, no Math.max (its NaN and -0.0
    // handling costs branches that prices never need), and each step's lowest node from the one
    // before (x up) instead of a pow per step.
    double[] values = new double[n + 1];
    double upOverDown = up * up;
    double low = spot * Math.pow(down, n);
    double s = low;
    for (int i = 0; i <= n; i++) {
      double payoff = sign * (s - strike);
      values[i] = payoff > 0.0 ? payoff : 0.0;
      s *= upOverDown;
    }
    for (int step = n - 1; step >= 0; step--) {
      low *= up;
      if (!american) {
        for (int i = 0; i <= step; i++) {
          values[i] = pd * values[i] + pu * values[i + 1];
        }
      } else {
        double node = low;
        for (int i = 0; i <= step; i++) {
          double held = pd * values[i] + pu * values[i + 1];
          double exercised = sign * (node - strike);
          values[i] = held > exercised ? held : exercised;
          node *= upOverDown;
        }
      }
    }
    return values[0];
  }
}
