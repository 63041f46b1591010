package io.brokerstream.baseline;

import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.Member;
import io.brokerstream.money.Micros;
import io.brokerstream.rules.AccountEntry;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.Date;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * An order's reference data, read from the Postgres tables the moment it is decided: its account,
 * the member the order came under, and its instrument with the underlying's latest price and
 * volatility. The thesis runs the three lookups at once, each on its own connection from the pool,
 * on virtual threads (they only wait on the database); {@code orders.parallel-lookups=false} runs
 * them in turn.
 */
public final class ReferenceLookups implements AutoCloseable {
  private static final String ACCOUNT =
      "SELECT account_id, member_id, status, cash_balance, short_allowed "
          + "FROM accounts WHERE account_id = ?";
  private static final String MEMBER =
      "SELECT member_id, name, status, credit_limit, trading_state, max_order_quantity, "
          + "max_order_notional FROM members WHERE member_id = ?";
  private static final String INSTRUMENT =
      "SELECT i.instrument_id, i.symbol, i.currency, i.exchange, i.name, "
          + "i.instrument_type, i.status, i.underlying_id, i.underlying_symbol, i.maturity, i.option_type, i.strike, "
          + "i.multiplier, i.exercise_style, p.price, e.volatility, p.event_ts FROM instruments i "
          + "LEFT JOIN %s.mono_latest_prices p ON p.instrument_id = coalesce(i.underlying_id, i.instrument_id) "
          + "LEFT JOIN equity_starts e ON e.instrument_id = coalesce(i.underlying_id, i.instrument_id) "
          + "WHERE i.instrument_id = ?";

  /**
   * What one instrument lookup found: the instrument, and its underlying's price and volatility.
   */
  public record Priced(
      Instrument instrument, Long priceMicros, Double volatility, Long priceTimeMs) {}

  /** The three lookups' answers; null where the thing does not exist. */
  public record Found(AccountEntry account, Member member, Priced instrument) {}

  private final Database db;
  private final boolean parallel;
  private final String instrumentSql;
  private final ExecutorService virtualThreads = Executors.newVirtualThreadPerTaskExecutor();

  public ReferenceLookups(Database db, boolean parallel) {
    this.db = db;
    this.parallel = parallel;
    this.instrumentSql = INSTRUMENT.formatted(db.schema());
  }

  public Found find(String accountId, String memberId, String instrumentId) throws SQLException {
    if (!parallel) {
      try (Connection c = db.connection()) {
        return new Found(account(c, accountId), member(c, memberId), instrument(c, instrumentId));
      }
    }
    Future<AccountEntry> account =
        virtualThreads.submit(() -> withConnection(c -> account(c, accountId)));
    Future<Member> member = virtualThreads.submit(() -> withConnection(c -> member(c, memberId)));
    Future<Priced> instrument =
        virtualThreads.submit(() -> withConnection(c -> instrument(c, instrumentId)));
    try {
      return new Found(account.get(), member.get(), instrument.get());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SQLException("interrupted while looking up reference data", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof SQLException sql) {
        throw sql;
      }
      throw new IllegalStateException(e.getCause());
    }
  }

  private interface Query<T> {
    T run(Connection c) throws SQLException;
  }

  private <T> T withConnection(Query<T> query) throws SQLException {
    try (Connection c = db.connection()) {
      return query.run(c);
    }
  }

  static AccountEntry account(Connection c, String accountId) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(ACCOUNT)) {
      s.setString(1, accountId);
      try (ResultSet r = s.executeQuery()) {
        return r.next()
            ? new AccountEntry(
                r.getString(1),
                r.getString(2),
                r.getString(3),
                Micros.of(r.getBigDecimal(4)),
                r.getBoolean(5))
            : null;
      }
    }
  }

  static Member member(Connection c, String memberId) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(MEMBER)) {
      s.setString(1, memberId);
      try (ResultSet r = s.executeQuery()) {
        return r.next()
            ? Member.newBuilder()
                .setMemberId(r.getString(1))
                .setName(r.getString(2))
                .setStatus(r.getString(3))
                .setCreditLimit(r.getBigDecimal(4))
                .setTradingState(r.getString(5))
                .setMaxOrderQuantity(r.getObject(6) == null ? null : r.getLong(6))
                .setMaxOrderNotional(r.getBigDecimal(7))
                .build()
            : null;
      }
    }
  }

  Priced instrument(Connection c, String instrumentId) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(instrumentSql)) {
      s.setString(1, instrumentId);
      try (ResultSet r = s.executeQuery()) {
        if (!r.next()) {
          return null;
        }
        Date maturity = r.getDate(10);
        Instrument instrument =
            Instrument.newBuilder()
                .setInstrumentId(r.getString(1))
                .setSymbol(r.getString(2))
                .setCurrency(r.getString(3))
                .setExchange(r.getString(4))
                .setName(r.getString(5))
                .setInstrumentType(r.getString(6))
                .setStatus(r.getString(7))
                .setUnderlyingId(r.getString(8))
                .setUnderlyingSymbol(r.getString(9))
                .setMaturity(maturity == null ? null : maturity.toLocalDate())
                .setOptionType(r.getString(11))
                .setStrike(r.getBigDecimal(12))
                .setMultiplier(r.getInt(13))
                .setExerciseStyle(r.getString(14))
                .build();
        BigDecimal price = r.getBigDecimal(15);
        double vol = r.getDouble(16);
        Double volatility = r.wasNull() ? null : vol;
        java.sql.Timestamp at = r.getTimestamp(17);
        return new Priced(
            instrument,
            price == null ? null : Micros.of(price),
            volatility,
            at == null ? null : at.getTime());
      }
    }
  }

  @Override
  public void close() {
    virtualThreads.close();
  }
}
