-- The query catalog in ksqlDB, over the streams and tables of streams.sql: the same names, order and
-- purposes as sql/flink/catalog.sql (tests/unit/test_sql_catalog.py keeps them in step). Each query is
-- a persistent query materialised under its name; read it with a pull query
-- (`SELECT * FROM <name>;`) or follow it with a push query (`SELECT * FROM <name> EMIT CHANGES;`).
--
-- Where the dialects differ: ksqlDB has no UNION (open orders join two counts) and no ORDER BY over a
-- table, so top_positions_by_exposure materialises every open position's exposure and the 10 largest
-- are the client's sort; its pull query says how.

-- name: open_orders_by_member
-- purpose: Orders placed and decided (accepted or rejected) per member; open_orders are in flight.
CREATE TABLE IF NOT EXISTS orders_placed_by_member AS
  SELECT member_id, COUNT(*) AS placed FROM orders GROUP BY member_id EMIT CHANGES;
CREATE TABLE IF NOT EXISTS orders_decided_by_member AS
  SELECT member_id, COUNT(*) AS decided FROM order_results GROUP BY member_id EMIT CHANGES;
CREATE TABLE IF NOT EXISTS open_orders_by_member AS
  SELECT p.member_id AS member_id,
         p.placed AS placed,
         COALESCE(d.decided, CAST(0 AS BIGINT)) AS decided,
         p.placed - COALESCE(d.decided, CAST(0 AS BIGINT)) AS open_orders
  FROM orders_placed_by_member p
  LEFT JOIN orders_decided_by_member d ON p.member_id = d.member_id
  EMIT CHANGES;

-- name: rejects_per_reason_per_minute
-- purpose: Rejected orders per reason code per minute of the broker's processing time.
CREATE TABLE IF NOT EXISTS rejects_per_reason_per_minute AS
  SELECT reason, COUNT(*) AS rejects
  FROM order_results WINDOW TUMBLING (SIZE 1 MINUTE)
  WHERE status = 'REJECTED'
  GROUP BY reason
  EMIT CHANGES;

-- name: top_positions_by_exposure
-- purpose: The 10 open positions with the largest exposure at cost (|quantity| x multiplier x average cost).
-- Pull the 10 largest: SELECT * FROM top_positions_by_exposure WHERE exposure >= <a threshold>; and sort.
CREATE TABLE IF NOT EXISTS top_positions_by_exposure AS
  SELECT position_key, account_id, instrument_id, member_id, quantity, avg_cost,
         ABS(quantity) * multiplier * avg_cost AS exposure
  FROM positions
  WHERE quantity <> 0
  EMIT CHANGES;

-- name: pnl_by_member
-- purpose: Each member's latest unrealized P&L from the P&L job, with market value, cost basis and window.
CREATE TABLE IF NOT EXISTS pnl_by_member AS
  SELECT member_key, unrealized_pnl, market_value, cost_basis, positions, window_end
  FROM pnl_members
  EMIT CHANGES;

-- name: realized_pnl_by_account
-- purpose: P&L realized per account: its closing fills, the units they closed and what they realized.
CREATE TABLE IF NOT EXISTS realized_pnl_by_account AS
  SELECT account_id,
         COUNT(*) AS closing_fills,
         SUM(closed_quantity) AS closed_quantity,
         SUM(realized_pnl) AS realized_pnl
  FROM order_results
  WHERE closed_quantity > 0
  GROUP BY account_id
  EMIT CHANGES;

-- name: tick_rates_per_instrument
-- purpose: Price ticks per instrument per minute of event time, with the rate per second and the price range.
CREATE TABLE IF NOT EXISTS tick_rates_per_instrument AS
  SELECT instrument_id,
         COUNT(*) AS ticks,
         CAST(COUNT(*) AS DOUBLE) / 60 AS ticks_per_s,
         MIN(price) AS low,
         MAX(price) AS high
  FROM price_ticks WINDOW TUMBLING (SIZE 1 MINUTE)
  GROUP BY instrument_id
  EMIT CHANGES;
