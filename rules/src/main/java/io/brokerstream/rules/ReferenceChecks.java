package io.brokerstream.rules;

import io.brokerstream.avro.EquityStart;
import io.brokerstream.avro.Instrument;
import io.brokerstream.money.Micros;

/**
 * What reference data must be before a model prices with it: the same bounds Postgres checks
 * (sql/postgres/001_reference.sql), for a record that reached the flow around Postgres. A model fed
 * NaN or infinity answers NaN, and a NaN in a decision or in the book's tick handling threw inside
 * them; an absurd multiplier makes every fill in the instrument overflow. Each check answers why
 * not, or null.
 */
public final class ReferenceChecks {
  public static final double MAX_VOLATILITY = 10;
  public static final int MAX_MULTIPLIER = 1_000_000;

  private ReferenceChecks() {}

  public static String problem(EquityStart start) {
    double v = start.getVolatility();
    if (!(v > 0 && v <= MAX_VOLATILITY)) {
      return "volatility of "
          + start.getInstrumentId()
          + " must be a number in (0, "
          + MAX_VOLATILITY
          + "], got "
          + v;
    }
    return null;
  }

  public static String problem(Instrument instrument, long maxPriceMicros) {
    int m = instrument.getMultiplier();
    if (m < 1 || m > MAX_MULTIPLIER) {
      return "multiplier of "
          + instrument.getInstrumentId()
          + " must be in [1, "
          + MAX_MULTIPLIER
          + "], got "
          + m;
    }
    if ("OPTION".equals(instrument.getInstrumentType())) {
      if (instrument.getStrike() == null
          || instrument.getMaturity() == null
          || instrument.getUnderlyingId() == null
          || instrument.getOptionType() == null
          || instrument.getExerciseStyle() == null) {
        return "option " + instrument.getInstrumentId() + " lacks one of its terms";
      }
      long strike = Micros.of(instrument.getStrike());
      if (strike <= 0 || strike > maxPriceMicros) {
        return "strike of "
            + instrument.getInstrumentId()
            + " must be in (0, "
            + Micros.format(maxPriceMicros)
            + "], got "
            + Micros.format(strike);
      }
      if (!"PUT".equals(instrument.getOptionType()) && !"CALL".equals(instrument.getOptionType())) {
        return "option type of " + instrument.getInstrumentId() + " must be PUT or CALL";
      }
      if (!"EUROPEAN".equals(instrument.getExerciseStyle())
          && !"AMERICAN".equals(instrument.getExerciseStyle())) {
        return "exercise style of "
            + instrument.getInstrumentId()
            + " must be EUROPEAN or AMERICAN";
      }
    }
    return null;
  }
}
