package io.brokerstream.pricing;

/**
 * The early-exercise boundary of an American put on a stock without dividends, as a fraction of the
 * strike, B(tau)/K for tau (years to expiry) in [0, horizon]. It depends on the rate and the
 * volatility only, never on spot or strike, so one boundary serves every put on an underlying.
 *
 * <p>Solved as the fixed point of Kim's integral equation for the boundary, B(tau) = K e^{-r tau}
 * [N(d-(tau, B/K)) + r int_0^tau e^{r u} N(d-(tau-u, B(tau)/B(u))) du] / N(d+(tau, B/K)), by
 * collocation at Chebyshev nodes in sqrt(tau) of H = ln(B/K)^2, the transform of Andersen, Lake and
 * Offengenden (2016): the boundary falls from K like sqrt(tau ln(1/tau)) near expiry, which no
 * polynomial follows, while H in sqrt(tau) is smooth. The integrals are Gauss-Legendre after u =
 * tau - tau (1+y)^2/4, which takes the square root near u = tau out of the integrand.
 */
final class ExerciseBoundary {
  static final int NODES = 12;
  static final int ITERATIONS = 8;

  /** The quadrature of both integrals, the boundary's and the price's ({@link AmericanPuts}). */
  static final GaussLegendre RULE = GaussLegendre.of(16);

  private final double horizon;
  private final double[] chebyshev;

  private ExerciseBoundary(double horizon, double[] chebyshev) {
    this.horizon = horizon;
    this.chebyshev = chebyshev;
  }

  /** Requires {@code rate > 0} (otherwise a put is never exercised early) and {@code sigma > 0}. */
  static ExerciseBoundary solve(double rate, double sigma, double horizon) {
    int n = NODES;
    double[] tau = new double[n + 1];
    double[] ratio = new double[n + 1];
    // Start from an exponential between K (at expiry) and the perpetual put's boundary K
    // 2r/(2r+sigma^2) (Bjerksund and Stensland's shape); the iteration does the rest.
    double perpetual = 2 * rate / (2 * rate + sigma * sigma);
    for (int i = 0; i <= n; i++) {
      double x = Math.sqrt(horizon) * (1 - Math.cos(i * Math.PI / n)) / 2;
      tau[i] = x * x;
      double h = -(rate * tau[i] + 2 * sigma * Math.sqrt(tau[i])) * perpetual / (1 - perpetual);
      ratio[i] = perpetual + (1 - perpetual) * Math.exp(h);
    }
    ExerciseBoundary boundary = interpolate(ratio, horizon);
    double[] xs = RULE.nodes();
    double[] ws = RULE.weights();
    for (int iteration = 0; iteration < ITERATIONS; iteration++) {
      double[] next = new double[n + 1];
      next[0] = 1.0; // at expiry the boundary is the strike
      for (int i = 1; i <= n; i++) {
        double t = tau[i];
        double lnB = Math.log(ratio[i]);
        double integral = 0;
        for (int j = 0; j < xs.length; j++) {
          double half = (1 + xs[j]) / 2;
          double s = t * half * half; // tau - u
          double u = t - s;
          integral +=
              ws[j]
                  * t
                  * half
                  * Math.exp(rate * u)
                  * Normal.cdf(dMinus(s, lnB - boundary.lnRatio(u), rate, sigma));
        }
        double dMinus = dMinus(t, lnB, rate, sigma);
        double dPlus = dMinus + sigma * Math.sqrt(t);
        next[i] =
            Math.min(
                1.0,
                Math.exp(-rate * t) * (Normal.cdf(dMinus) + rate * integral) / Normal.cdf(dPlus));
      }
      ratio = next;
      boundary = interpolate(ratio, horizon);
    }
    return boundary;
  }

  /** d- of Black-Scholes over {@code years} for log-moneyness {@code lnZ}. */
  static double dMinus(double years, double lnZ, double rate, double sigma) {
    double v = sigma * Math.sqrt(years);
    return (lnZ + rate * years) / v - 0.5 * v;
  }

  /** Chebyshev-Lobatto coefficients of H = ln(ratio)^2 at the nodes z_i = -cos(i pi / n). */
  private static ExerciseBoundary interpolate(double[] ratio, double horizon) {
    int n = ratio.length - 1;
    double[] h = new double[n + 1];
    for (int i = 0; i <= n; i++) {
      double ln = Math.log(ratio[i]);
      h[i] = ln * ln;
    }
    double[] a = new double[n + 1];
    for (int k = 0; k <= n; k++) {
      double sum = 0;
      for (int i = 0; i <= n; i++) {
        double w = i == 0 || i == n ? 0.5 : 1.0;
        sum += w * h[i] * Math.cos(k * Math.PI * (n - i) / n); // -cos(i pi/n) = cos((n-i) pi/n)
      }
      a[k] = sum * 2 / n * (k == 0 || k == n ? 0.5 : 1.0);
    }
    return new ExerciseBoundary(horizon, a);
  }

  /** B(tau)/K, 1 at expiry; tau within [0, horizon]. */
  double ratio(double tau) {
    return Math.exp(lnRatio(tau));
  }

  /** ln(B(tau)/K) = -sqrt(H), what the integrands need: no exp to undo with a log. */
  double lnRatio(double tau) {
    if (tau <= 0) {
      return 0.0;
    }
    double z = 2 * Math.sqrt(tau / horizon) - 1;
    double b1 = 0;
    double b2 = 0;
    for (int k = chebyshev.length - 1; k >= 1; k--) { // Clenshaw
      double t = 2 * z * b1 - b2 + chebyshev[k];
      b2 = b1;
      b1 = t;
    }
    double h = z * b1 - b2 + chebyshev[0];
    return -Math.sqrt(h > 0 ? h : 0);
  }
}
