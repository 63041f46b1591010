-- The query catalog for Flink SQL, over the tables of tables.sql. Each query is a view named after it:
-- in the SQL client (`./brokerstream sql`) `SELECT * FROM <name>;` shows it live, and
-- `./brokerstream sql run <name>` prints its rows over what the topics hold now (batch, bounded).
-- sql/ksqldb/catalog.sql has the same queries under the same names, in the same order, with the same
-- purposes (tests/unit/test_sql_catalog.py keeps them in step).
--
-- A block is `-- name:`, `-- purpose:` (one line) and one CREATE VIEW statement.

-- name: open_orders_by_member
-- purpose: Orders placed and decided (accepted or rejected) per member; open_orders are in flight.
CREATE VIEW open_orders_by_member AS
SELECT member_id,
       SUM(placed) AS placed,
       SUM(decided) AS decided,
       SUM(placed) - SUM(decided) AS open_orders
FROM (
  SELECT member_id, CAST(1 AS BIGINT) AS placed, CAST(0 AS BIGINT) AS decided FROM orders
  UNION ALL
  SELECT member_id, CAST(0 AS BIGINT) AS placed, CAST(1 AS BIGINT) AS decided FROM order_results
)
GROUP BY member_id;

-- name: rejects_per_reason_per_minute
-- purpose: Rejected orders per reason code per minute of the broker's processing time.
CREATE VIEW rejects_per_reason_per_minute AS
SELECT window_start, window_end, reason, COUNT(*) AS rejects
FROM TABLE(TUMBLE(TABLE order_results, DESCRIPTOR(processed_ts), INTERVAL '1' MINUTE))
WHERE status = 'REJECTED'
GROUP BY window_start, window_end, reason;

-- name: top_positions_by_exposure
-- purpose: The 10 open positions with the largest exposure at cost (|quantity| x multiplier x average cost).
CREATE VIEW top_positions_by_exposure AS
SELECT account_id, instrument_id, member_id, quantity, avg_cost, exposure
FROM (
  SELECT *, ROW_NUMBER() OVER (ORDER BY exposure DESC, account_id, instrument_id) AS exposure_rank
  FROM (
    SELECT account_id, instrument_id, member_id, quantity, avg_cost,
           ABS(quantity) * multiplier * avg_cost AS exposure
    FROM (
      SELECT *, ROW_NUMBER() OVER (PARTITION BY account_id, instrument_id ORDER BY kafka_offset DESC) AS newest
      FROM positions
    )
    WHERE newest = 1 AND quantity <> 0
  )
)
WHERE exposure_rank <= 10;

-- name: pnl_by_member
-- purpose: Each member's latest unrealized P&L from the P&L job, with market value, cost basis and window.
CREATE VIEW pnl_by_member AS
SELECT member_id, unrealized_pnl, market_value, cost_basis, positions, window_end
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY member_id ORDER BY kafka_offset DESC) AS newest
  FROM pnl_members
)
WHERE newest = 1;

-- name: realized_pnl_by_account
-- purpose: P&L realized per account: its closing fills, the units they closed and what they realized.
CREATE VIEW realized_pnl_by_account AS
SELECT account_id,
       COUNT(*) AS closing_fills,
       SUM(closed_quantity) AS closed_quantity,
       SUM(realized_pnl) AS realized_pnl
FROM order_results
WHERE closed_quantity > 0
GROUP BY account_id;

-- name: tick_rates_per_instrument
-- purpose: Price ticks per instrument per minute of event time, with the rate per second and the price range.
CREATE VIEW tick_rates_per_instrument AS
SELECT window_start, window_end, instrument_id,
       COUNT(*) AS ticks,
       CAST(COUNT(*) AS DOUBLE) / 60 AS ticks_per_s,
       MIN(price) AS low,
       MAX(price) AS high
FROM TABLE(TUMBLE(TABLE price_ticks, DESCRIPTOR(event_ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, instrument_id;
