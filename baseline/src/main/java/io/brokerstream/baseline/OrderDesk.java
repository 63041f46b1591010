package io.brokerstream.baseline;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.avro.ReasonCode;
import io.brokerstream.money.Micros;
import io.brokerstream.rules.Decision;
import io.brokerstream.rules.OrderDecider;
import io.brokerstream.rules.PositionState;
import io.brokerstream.rules.RiskState;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * One order at a time, inside the calling thread's open transaction: is it new, what does the
 * reference data say, what does the member hold (one aggregate over its positions), decide with the
 * shared rules, and on a fill book position, cash and realized P&L. The caller commits the batch.
 *
 * <p>Orders of one member are all in one partition, so one thread books them in the order they were
 * written, as the streams app's task does.
 */
final class OrderDesk implements AutoCloseable {
  private static final String SEEN =
      "SELECT source_partition, source_offset, status, reason, reason_detail, "
          + "fill_price, realized_pnl, processed_ts, closed_quantity, closed_avg_cost FROM %s.mono_orders "
          + "WHERE member_id = ? AND order_id = ?";
  private static final String POSITION =
      "SELECT quantity, avg_cost, realized_pnl, version, multiplier, cost_basis FROM %s.mono_positions "
          + "WHERE account_id = ? AND instrument_id = ?";

  /**
   * The risk check's one query: what the member has committed at cost, realized, and deposited, and
   * the losses its open positions carry at the price threads' marks (each losing position's, no
   * gain netted: the same margin the order flow takes from its P&L job).
   */
  private static final String RISK =
      "SELECT coalesce(sum(coalesce(cost_basis, abs(quantity) * avg_cost) * multiplier), 0), "
          + "coalesce(sum(realized_pnl), 0), (SELECT coalesce(sum(cash_balance), 0) FROM accounts WHERE member_id = ?), "
          + "(SELECT coalesce(sum(least(m.unrealized_pnl, 0)), 0) FROM %1$s.mono_marks m "
          + "JOIN %1$s.mono_positions q USING (account_id, instrument_id) WHERE q.member_id = ? AND q.quantity <> 0) "
          + "FROM %1$s.mono_positions WHERE member_id = ?";

  private static final String BOOK_POSITION =
      "INSERT INTO %s.mono_positions AS p (account_id, instrument_id, member_id, "
          + "underlying_id, multiplier, quantity, avg_cost, realized_pnl, version, cost_basis) "
          + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (account_id, instrument_id) DO UPDATE SET "
          + "multiplier = excluded.multiplier, quantity = excluded.quantity, avg_cost = excluded.avg_cost, "
          + "realized_pnl = excluded.realized_pnl, version = excluded.version, cost_basis = excluded.cost_basis";
  private static final String BOOK_CASH =
      "INSERT INTO %s.mono_cash AS c (account_id, moved) VALUES (?, ?) "
          + "ON CONFLICT (account_id) DO UPDATE SET moved = c.moved + excluded.moved";
  private static final String RECORD =
      "INSERT INTO %s.mono_orders (member_id, order_id, account_id, instrument_id, "
          + "status, reason, reason_detail, fill_price, realized_pnl, ingest_ts, processed_ts, source_partition, "
          + "source_offset, closed_quantity, closed_avg_cost) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

  /** What became of one order record. */
  sealed interface Outcome {}

  /** Decided now, or decided before from this very record (a replay): emit this result. */
  record Decided(OrderResult result, boolean replay) implements Outcome {}

  /**
   * Another record of an order already decided (a retry): the first result stands, emit nothing.
   */
  record Duplicate() implements Outcome {}

  private final Connection tx;
  private final ReferenceLookups lookups;
  private final OrderDecider decider;
  private final PreparedStatement seen;
  private final PreparedStatement position;
  private final PreparedStatement risk;
  private final PreparedStatement bookPosition;
  private final PreparedStatement bookCash;
  private final PreparedStatement record;

  /**
   * Orders of the open batch, not yet in the table (their rows are written in one batch at the
   * end).
   */
  private final Map<String, OrderResult> batch = new HashMap<>();

  private int pendingRows;

  OrderDesk(Connection tx, String schema, ReferenceLookups lookups, OrderDecider decider)
      throws SQLException {
    this.tx = tx;
    this.lookups = lookups;
    this.decider = decider;
    seen = tx.prepareStatement(SEEN.formatted(schema));
    position = tx.prepareStatement(POSITION.formatted(schema));
    risk = tx.prepareStatement(RISK.formatted(schema));
    bookPosition = tx.prepareStatement(BOOK_POSITION.formatted(schema));
    bookCash = tx.prepareStatement(BOOK_CASH.formatted(schema));
    record = tx.prepareStatement(RECORD.formatted(schema));
  }

  Outcome handle(Order order, String member, Instant received, int partition, long offset)
      throws SQLException {
    String key = member + "|" + order.getOrderId();
    if (batch.containsKey(key)) {
      return new Duplicate();
    }
    Outcome before = decidedBefore(order, member, received, partition, offset);
    if (before != null) {
      return before;
    }

    ReferenceLookups.Found found =
        lookups.find(order.getAccountId(), member, order.getInstrumentId());
    PositionState held = position(order.getAccountId(), order.getInstrumentId());
    long[] exposure = riskOf(member);
    SqlReferenceData ref = new SqlReferenceData(found, member, exposure[2], exposure[3]);
    Decision decision =
        decider.decide(order, member, received, ref, held, new RiskState(exposure[0], exposure[1]));

    Instant now = Instant.now();
    OrderResult.Builder result =
        OrderResult.newBuilder()
            .setOrderId(order.getOrderId())
            .setMemberId(member)
            .setAccountId(order.getAccountId())
            .setInstrumentId(order.getInstrumentId())
            .setSide(order.getSide())
            .setQuantity(order.getQuantity())
            .setClientTs(order.getClientTs())
            .setIngestTs(received)
            .setProcessedTs(now)
            .setTraceId(order.getTraceId())
            .setLimitPrice(order.getLimitPrice())
            .setShortSale(order.getShortSale());
    if (decision instanceof Decision.Rejected rejected) {
      result
          .setStatus(OrderStatus.REJECTED)
          .setReason(rejected.reason())
          .setReasonDetail(rejected.detail());
    } else {
      Decision.Filled fill = (Decision.Filled) decision;
      book(order, member, fill);
      result
          .setStatus(OrderStatus.ACCEPTED)
          .setFillPrice(Micros.toDecimal(fill.fillPrice()))
          .setRealizedPnl(Micros.toDecimal(fill.realized()));
      if (fill.closedQuantity() > 0) {
        result
            .setClosedQuantity(fill.closedQuantity())
            .setClosedAvgCost(Micros.toDecimal(fill.closedAvgCost()));
      }
    }
    OrderResult built = result.build();
    remember(built, partition, offset);
    batch.put(key, built);
    return new Decided(built, false);
  }

  /**
   * Null for a new order; its stored result if this very record was decided before; else a
   * duplicate.
   */
  private Outcome decidedBefore(
      Order order, String member, Instant received, int partition, long offset)
      throws SQLException {
    seen.setString(1, member);
    seen.setString(2, order.getOrderId());
    try (ResultSet r = seen.executeQuery()) {
      if (!r.next()) {
        return null;
      }
      if (r.getInt(1) != partition || r.getLong(2) != offset) {
        return new Duplicate();
      }
      String reason = r.getString(4);
      return new Decided(
          OrderResult.newBuilder()
              .setOrderId(order.getOrderId())
              .setMemberId(member)
              .setAccountId(order.getAccountId())
              .setInstrumentId(order.getInstrumentId())
              .setSide(order.getSide())
              .setQuantity(order.getQuantity())
              .setClientTs(order.getClientTs())
              .setIngestTs(received)
              .setProcessedTs(r.getTimestamp(8).toInstant())
              .setTraceId(order.getTraceId())
              .setLimitPrice(order.getLimitPrice())
              .setShortSale(order.getShortSale())
              .setStatus(OrderStatus.valueOf(r.getString(3)))
              .setReason(reason == null ? null : ReasonCode.valueOf(reason))
              .setReasonDetail(r.getString(5))
              .setFillPrice(r.getBigDecimal(6))
              .setRealizedPnl(r.getBigDecimal(7))
              .setClosedQuantity(r.getLong(9))
              .setClosedAvgCost(r.getBigDecimal(10))
              .build(),
          true);
    }
  }

  private PositionState position(String accountId, String instrumentId) throws SQLException {
    position.setString(1, accountId);
    position.setString(2, instrumentId);
    try (ResultSet r = position.executeQuery()) {
      if (!r.next()) {
        return PositionState.FLAT;
      }
      long quantity = r.getLong(1);
      long realized = Micros.of(r.getBigDecimal(3));
      // rows booked before the cost basis was kept are taken at their average cost
      return r.getBigDecimal(6) == null
          ? PositionState.atAverage(
              quantity, Micros.of(r.getBigDecimal(2)), realized, r.getLong(4), r.getInt(5))
          : new PositionState(
              quantity, Micros.of(r.getBigDecimal(6)), realized, r.getLong(4), r.getInt(5));
    }
  }

  /** committed at cost, realized P&L, deposited cash, unrealized loss at the marks: micros. */
  private long[] riskOf(String member) throws SQLException {
    risk.setString(1, member);
    risk.setString(2, member);
    risk.setString(3, member);
    try (ResultSet r = risk.executeQuery()) {
      r.next();
      return new long[] {
        Micros.of(r.getBigDecimal(1)),
        Micros.of(r.getBigDecimal(2)),
        Micros.of(r.getBigDecimal(3)),
        Micros.of(r.getBigDecimal(4).setScale(6, java.math.RoundingMode.HALF_EVEN))
      };
    }
  }

  /** The position and the cash; its mark is the price threads' (at the underlying's next tick). */
  private void book(Order order, String member, Decision.Filled fill) throws SQLException {
    PositionState p = fill.position();
    bookPosition.setString(1, order.getAccountId());
    bookPosition.setString(2, order.getInstrumentId());
    bookPosition.setString(3, member);
    bookPosition.setString(4, fill.underlyingId());
    bookPosition.setInt(5, fill.multiplier());
    bookPosition.setLong(6, p.quantity());
    bookPosition.setBigDecimal(7, Micros.toDecimal(p.avgCost()));
    bookPosition.setBigDecimal(8, Micros.toDecimal(p.realized()));
    bookPosition.setLong(9, p.version());
    bookPosition.setBigDecimal(10, Micros.toDecimal(p.costBasis()));
    bookPosition.executeUpdate();
    bookCash.setString(1, order.getAccountId());
    bookCash.setBigDecimal(2, Micros.toDecimal(fill.cashDelta()));
    bookCash.executeUpdate();
  }

  private void remember(OrderResult r, int partition, long offset) throws SQLException {
    record.setString(1, r.getMemberId());
    record.setString(2, r.getOrderId());
    record.setString(3, r.getAccountId());
    record.setString(4, r.getInstrumentId());
    record.setString(5, r.getStatus().name());
    record.setString(6, r.getReason() == null ? null : r.getReason().name());
    record.setString(7, r.getReasonDetail());
    record.setBigDecimal(8, r.getFillPrice());
    record.setBigDecimal(9, r.getRealizedPnl());
    record.setTimestamp(10, Timestamp.from(r.getIngestTs()));
    record.setTimestamp(11, Timestamp.from(r.getProcessedTs()));
    record.setInt(12, partition);
    record.setLong(13, offset);
    record.setLong(14, r.getClosedQuantity());
    record.setBigDecimal(15, r.getClosedAvgCost());
    record.addBatch();
    pendingRows++;
  }

  /** Writes the batch's order rows; the caller commits. */
  void flush() throws SQLException {
    if (pendingRows > 0) {
      record.executeBatch();
      pendingRows = 0;
    }
    batch.clear();
  }

  /** Forgets the batch after a rollback. */
  void discard() throws SQLException {
    record.clearBatch();
    pendingRows = 0;
    batch.clear();
  }

  @Override
  public void close() throws SQLException {
    for (PreparedStatement s :
        new PreparedStatement[] {seen, position, risk, bookPosition, bookCash, record}) {
      s.close();
    }
  }
}
