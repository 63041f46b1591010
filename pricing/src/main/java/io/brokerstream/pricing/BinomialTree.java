package io.brokerstream.pricing;

/**
 * Cox-Ross-Rubinstein binomial tree, European or American exercise. The tree is rolled back in one
 * array, O(steps^2) time and O(steps) memory; {@code steps} trades accuracy (error ~ 1/steps) for
 * speed.
 */
public final class BinomialTree {
  private BinomialTree() {}

  /** One CRR lattice: n steps of dt, up/down factors, one step's growth and discounted probabilities. */
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

  public static double price(OptionType type, ExerciseStyle style, double spot, double strike, double years,
      double rate, double sigma, int steps) {
    if (years <= 0.0) {
      return type.intrinsic(spot, strike);
    }
    if (sigma * Math.sqrt(years) < 1e-12) {
      double european = type.intrinsic(spot, strike * Math.exp(-rate * years));
      return style == ExerciseStyle.AMERICAN ? Math.max(european, type.intrinsic(spot, strike)) : european;
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

    // The hot loop of the P&L job's American puts: no enum dispatch, no Math.max (its NaN and -0.0
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

  /**
   * An American put by the Black-Scholes smoothed tree with Richardson extrapolation (Broadie and
   * Detemple's BBSR): the last step before expiry takes the Black-Scholes value instead of the tree's,
   * which removes CRR's odd-even oscillation, so that 2 P(n) - P(n/2) cancels the remaining 1/n error.
   * Two trees of n and n/2 steps cost 5/8 of one n-step tree.
   */
  public static double americanPut(double spot, double strike, double years, double rate, double sigma, int steps) {
    double intrinsic = strike > spot ? strike - spot : 0.0;
    if (years <= 0.0) {
      return intrinsic;
    }
    double european = BlackScholes.price(OptionType.PUT, spot, strike, years, rate, sigma);
    if (sigma * Math.sqrt(years) < 1e-12) {
      return Math.max(european, intrinsic);
    }
    int n = Math.max(4, steps + (steps & 1)); // even, so n/2 is a tree too
    double extrapolated = 2.0 * smoothedPut(spot, strike, years, rate, sigma, n)
        - smoothedPut(spot, strike, years, rate, sigma, n / 2);
    // Extrapolation may overshoot a bound by a hair on a deep in-the-money put: an American put is
    // worth at least its exercise value and its European value.
    return Math.max(extrapolated, Math.max(intrinsic, european));
  }

  /** The smoothed tree: Black-Scholes values one step before expiry, then the usual American roll-back. */
  static double smoothedPut(double spot, double strike, double years, double rate, double sigma, int n) {
    Lattice lattice = Lattice.of(years, rate, sigma, n);
    double dt = lattice.dt();
    double up = lattice.up();
    double down = lattice.down();
    double growth = lattice.growth();
    double pu = lattice.pu();
    double pd = lattice.pd();
    double upOverDown = up * up;
    double[] values = new double[n];
    double low = spot * Math.pow(down, n - 1);
    // Black-Scholes over the last step, inlined: every node shares dt, so ln(node/strike) grows by a
    // constant and only nodes near the strike need the normal distribution; beyond 8 deviations the
    // put is worth nothing (far out of the money) or less than its exercise value (far in).
    double volSqrtDt = sigma * Math.sqrt(dt);
    double strikeDisc = strike / growth;
    double d1 = (Math.log(low / strike) + (rate + 0.5 * sigma * sigma) * dt) / volSqrtDt;
    double d1Step = 2.0 * Math.log(up) / volSqrtDt;
    double node = low;
    for (int i = 0; i < n; i++) {
      double exercised = strike - node;
      double held;
      if (d1 > 8.0) {
        held = 0.0;
      } else if (d1 < -8.0) {
        held = strikeDisc - node;
      } else {
        held = strikeDisc * Normal.cdf(volSqrtDt - d1) - node * Normal.cdf(-d1);
      }
      values[i] = held > exercised ? held : exercised;
      node *= upOverDown;
      d1 += d1Step;
    }
    for (int step = n - 2; step >= 0; step--) {
      low *= up;
      node = low;
      for (int i = 0; i <= step; i++) {
        double held = pd * values[i] + pu * values[i + 1];
        double exercised = strike - node;
        values[i] = held > exercised ? held : exercised;
        node *= upOverDown;
      }
    }
    return values[0];
  }
}
