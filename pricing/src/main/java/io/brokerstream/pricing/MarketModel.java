package io.brokerstream.pricing;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The market model both dataflows price options with, read from market-model.properties in this
 * module: one definition, so the order flow and the P&L job cannot disagree on a rate.
 */
public record MarketModel(double rate, double americanPutHorizonYears, double daysPerYear)
    implements java.io.Serializable {
  public static final String RESOURCE = "/market-model.properties";

  public MarketModel {
    if (!Double.isFinite(rate) || rate < -1 || rate > 1) {
      throw new IllegalArgumentException(
          "market model: rate must be a yearly fraction in [-1, 1], got " + rate);
    }
    if (!(americanPutHorizonYears >= 0.1 && americanPutHorizonYears <= 100)) {
      throw new IllegalArgumentException(
          "market model: american-put-horizon-years must be 0.1..100, got "
              + americanPutHorizonYears);
    }
    if (!(daysPerYear >= 360 && daysPerYear <= 366)) {
      throw new IllegalArgumentException(
          "market model: days-per-year must be 360..366, got " + daysPerYear);
    }
  }

  /** The model of market-model.properties. */
  public static MarketModel load() {
    Properties p = new Properties();
    try (InputStream in = MarketModel.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(RESOURCE + " is missing from the pricing jar");
      }
      p.load(in);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + RESOURCE, e);
    }
    return new MarketModel(
        Double.parseDouble(required(p, "rate")),
        Double.parseDouble(required(p, "american-put-horizon-years")),
        Double.parseDouble(required(p, "days-per-year")));
  }

  private static String required(Properties p, String key) {
    String v = p.getProperty(key);
    if (v == null || v.isBlank()) {
      throw new IllegalStateException(RESOURCE + " has no " + key);
    }
    return v.trim();
  }

  public OptionPricer pricer() {
    return new OptionPricer(rate, americanPutHorizonYears, daysPerYear);
  }
}
