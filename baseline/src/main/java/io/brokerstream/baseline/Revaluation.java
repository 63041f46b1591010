package io.brokerstream.baseline;

import io.brokerstream.money.Micros;
import io.brokerstream.pricing.ExerciseStyle;
import io.brokerstream.pricing.OptionPricer;
import io.brokerstream.pricing.OptionType;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The unrealized P&L of every position in an equity and in the options on it, at the equity's new
 * price, in SQL: one statement marks the equity's positions (positions by instrument id, the
 * thesis's index), then the options held on it (instruments by underlying id) are each valued once
 * by the model and marked with one batch. Marks go to their own table, which only price threads
 * write. Money is numeric in Postgres; the model's value is rounded to the micro once, as in the
 * P&L job, and an expired option is worth its intrinsic value.
 */
final class Revaluation implements AutoCloseable {
  private static final String MARK =
      "INSERT INTO %1$s.mono_marks AS m (account_id, instrument_id, mark_price, "
          + "market_value, unrealized_pnl, priced_at) SELECT account_id, instrument_id, ?, quantity * multiplier * ?, "
          + "quantity * multiplier * (? - avg_cost), ? FROM %1$s.mono_positions WHERE instrument_id = ? "
          + "ON CONFLICT (account_id, instrument_id) DO UPDATE SET mark_price = excluded.mark_price, "
          + "market_value = excluded.market_value, unrealized_pnl = excluded.unrealized_pnl, priced_at = excluded.priced_at";
  private static final String OPTIONS_HELD =
      "SELECT i.instrument_id, i.option_type, i.exercise_style, i.strike, "
          + "i.maturity FROM instruments i WHERE i.underlying_id = ? "
          + "AND EXISTS (SELECT 1 FROM %s.mono_positions p WHERE p.instrument_id = i.instrument_id)";

  private final OptionPricer pricer;
  private final PreparedStatement equity;
  private final PreparedStatement optionsHeld;
  private final PreparedStatement option;

  Revaluation(Connection tx, String schema, OptionPricer pricer) throws SQLException {
    this.pricer = pricer;
    equity = tx.prepareStatement(MARK.formatted(schema));
    optionsHeld = tx.prepareStatement(OPTIONS_HELD.formatted(schema));
    option = tx.prepareStatement(MARK.formatted(schema));
  }

  /**
   * Revalues an equity's positions and its options' positions; returns how many positions moved.
   */
  long revalue(String equityId, long priceMicros, Double volatility, Instant now)
      throws SQLException {
    long revalued = mark(equity, equityId, priceMicros, now);
    record Held(String id, OptionType type, ExerciseStyle style, long strike, long maturityDay) {}
    List<Held> held = new ArrayList<>();
    optionsHeld.setString(1, equityId);
    try (ResultSet r = optionsHeld.executeQuery()) {
      while (r.next()) {
        held.add(
            new Held(
                r.getString(1),
                OptionType.valueOf(r.getString(2)),
                ExerciseStyle.valueOf(r.getString(3)),
                Micros.of(r.getBigDecimal(4)),
                r.getDate(5).toLocalDate().toEpochDay()));
      }
    }
    if (held.isEmpty()) {
      return revalued;
    }
    for (Held h : held) {
      long mark =
          optionMark(
              pricer,
              h.type(),
              h.style(),
              h.strike(),
              h.maturityDay(),
              priceMicros,
              volatility,
              now.toEpochMilli());
      if (mark < 0) {
        continue; // no volatility: the option cannot be valued, its last mark stands
      }
      setMark(option, h.id(), mark, now);
      option.addBatch();
    }
    for (int n : option.executeBatch()) {
      revalued += Math.max(n, 0);
    }
    return revalued;
  }

  /** The model's value in micros (intrinsic once expired), or -1 without a volatility. */
  static long optionMark(
      OptionPricer pricer,
      OptionType type,
      ExerciseStyle style,
      long strike,
      long maturityDay,
      long spot,
      Double volatility,
      long atMillis) {
    double years = pricer.yearsToExpiry(maturityDay, atMillis);
    if (years <= 0.0) {
      return Math.max(0L, type == OptionType.CALL ? spot - strike : strike - spot);
    }
    if (volatility == null) {
      return -1;
    }
    return Micros.ofModel(
        pricer.price(type, style, Micros.toModel(spot), Micros.toModel(strike), years, volatility));
  }

  private static long mark(PreparedStatement s, String instrumentId, long mark, Instant now)
      throws SQLException {
    setMark(s, instrumentId, mark, now);
    return s.executeUpdate();
  }

  private static void setMark(PreparedStatement s, String instrumentId, long mark, Instant now)
      throws SQLException {
    s.setBigDecimal(1, Micros.toDecimal(mark));
    s.setBigDecimal(2, Micros.toDecimal(mark));
    s.setBigDecimal(3, Micros.toDecimal(mark));
    s.setTimestamp(4, Timestamp.from(now));
    s.setString(5, instrumentId);
  }

  @Override
  public void close() throws SQLException {
    equity.close();
    optionsHeld.close();
    option.close();
  }
}
