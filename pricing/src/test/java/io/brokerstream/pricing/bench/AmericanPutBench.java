package io.brokerstream.pricing.bench;

import io.brokerstream.pricing.AmericanPuts;
import io.brokerstream.pricing.BinomialTree;
import io.brokerstream.pricing.ExerciseStyle;
import io.brokerstream.pricing.MarketModel;
import io.brokerstream.pricing.OptionType;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * American puts, accuracy and speed (pricing alone, one thread): random contracts (spot/strike
 * 0.5-2, volatility 0.05-1, one day to three years, strike 100) against a fine reference, a
 * 4,000-step CRR tree; before (the 100-step CRR tree the flows used) and after (the market model's
 * exercise-boundary integral). The boundary is solved once per volatility, so its speed is measured
 * twice: every valuation with a volatility never seen (the worst case) and with the volatilities of
 * 100 underlyings (the flows: one volatility per underlying). Run by `./brokerstream bench
 * pricing`.
 *
 * <p>Arguments: [contracts (1000)] [seed (7)].
 */
public final class AmericanPutBench {
  static final int REFERENCE_STEPS = 4000;
  static final int UNDERLYINGS = 100;

  interface Method {
    double price(double spot, double strike, double years, double sigma);
  }

  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    long seed = args.length > 1 ? Long.parseLong(args[1]) : 7;
    MarketModel model = MarketModel.load();
    double rate = model.rate();
    double horizon = model.americanPutHorizonYears();
    SplittableRandom rnd = new SplittableRandom(seed);
    double[][] c = new double[n][];
    for (int i = 0; i < n; i++) {
      double strike = 100;
      double spot = strike * (0.5 + 1.5 * rnd.nextDouble());
      double sigma = 0.05 + 0.95 * rnd.nextDouble();
      double years = 1.0 / 365 + (3.0 - 1.0 / 365) * rnd.nextDouble();
      c[i] = new double[] {spot, strike, years, sigma};
    }
    long t0 = System.nanoTime();
    double[] ref = new double[n];
    for (int i = 0; i < n; i++) {
      ref[i] =
          BinomialTree.price(
              OptionType.PUT,
              ExerciseStyle.AMERICAN,
              c[i][0],
              c[i][1],
              c[i][2],
              rate,
              c[i][3],
              REFERENCE_STEPS);
    }
    System.out.printf(
        Locale.ROOT,
        "american puts: %,d random contracts, rate %.4f, reference CRR %,d steps (%.1f s)%n",
        n,
        rate,
        REFERENCE_STEPS,
        (System.nanoTime() - t0) / 1e9);
    Method tree =
        (s, k, t, v) ->
            BinomialTree.price(OptionType.PUT, ExerciseStyle.AMERICAN, s, k, t, rate, v, 100);
    accuracy("before: CRR 100 steps", c, ref, tree);
    speed("  valuations/s", c, tree);
    AmericanPuts shared = new AmericanPuts(rate, horizon);
    accuracy("after: exercise-boundary integral", c, ref, shared::price);
    speed(
        "  valuations/s, a new volatility each time",
        c,
        (s, k, t, v) -> new AmericanPuts(rate, horizon).price(s, k, t, v));
    double[][] pooled = new double[n][];
    double[] volatilities = new double[UNDERLYINGS];
    for (int u = 0; u < UNDERLYINGS; u++) {
      volatilities[u] = 0.05 + 0.95 * rnd.nextDouble();
    }
    for (int i = 0; i < n; i++) {
      pooled[i] = new double[] {c[i][0], c[i][1], c[i][2], volatilities[i % UNDERLYINGS]};
    }
    speed("  valuations/s, " + UNDERLYINGS + " underlyings' volatilities", pooled, shared::price);
    speed("  (the CRR tree on those)", pooled, tree);
  }

  static void accuracy(String name, double[][] c, double[] ref, Method m) {
    double maxAbs = 0;
    double maxRel = 0;
    int outside = 0;
    String worst = "";
    for (int i = 0; i < c.length; i++) {
      double v = m.price(c[i][0], c[i][1], c[i][2], c[i][3]);
      double err = Math.abs(v - ref[i]);
      double tolerance = Math.max(0.001 * ref[i], 0.01);
      if (err > tolerance) {
        outside++;
      }
      if (err > maxAbs) {
        maxAbs = err;
        worst =
            String.format(
                Locale.ROOT,
                "S=%.2f K=%.0f T=%.3f sigma=%.2f: %.6f vs %.6f",
                c[i][0],
                c[i][1],
                c[i][2],
                c[i][3],
                v,
                ref[i]);
      }
      if (ref[i] > 0.01) {
        maxRel = Math.max(maxRel, err / ref[i]);
      }
    }
    System.out.printf(
        Locale.ROOT,
        "%-46s max error %.6f (%.4f %% of price), outside max(0.1 %%, 0.01): %d of %,d%n",
        name,
        maxAbs,
        100 * maxRel,
        outside,
        c.length);
    System.out.println("    worst: " + worst);
  }

  /** Warm up, then price the contracts until a second has passed. */
  static void speed(String name, double[][] c, Method m) {
    double sink = 0;
    for (int r = 0; r < 3; r++) {
      for (double[] x : c) {
        sink += m.price(x[0], x[1], x[2], x[3]);
      }
    }
    long done = 0;
    long t0 = System.nanoTime();
    while (System.nanoTime() - t0 < 1_000_000_000L) {
      for (double[] x : c) {
        sink += m.price(x[0], x[1], x[2], x[3]);
      }
      done += c.length;
    }
    double perSecond = done / ((System.nanoTime() - t0) / 1e9);
    System.out.printf(Locale.ROOT, "%-46s %,.0f%s%n", name, perSecond, sink == 42 ? " " : "");
  }
}
