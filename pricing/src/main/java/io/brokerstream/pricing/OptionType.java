package io.brokerstream.pricing;

public enum OptionType {
  CALL,
  PUT;

  public static OptionType of(String text) {
    return valueOf(text);
  }

  double intrinsic(double spot, double strike) {
    return this == CALL ? Math.max(spot - strike, 0.0) : Math.max(strike - spot, 0.0);
  }
}
