-- The baseline monolith's own tables (the seed thesis's section 4.4): its state lives in Postgres.
-- ${schema} is the setting db.schema. Comment lines are dropped before statements are split.
-- Reference data (members, accounts, instruments, equity_starts) is read from the stack's tables.
-- Every table is named mono_*: Debezium's JDBC sink looks its tables (orders, positions) up by name in
-- every schema, and wrote the streams flow's positions into the baseline's own when they shared a name.
CREATE SCHEMA IF NOT EXISTS ${schema};

-- Money and prices exact: numeric, scale 6, as everywhere else.
CREATE TABLE IF NOT EXISTS ${schema}.mono_positions (
  account_id     text NOT NULL,
  instrument_id  text NOT NULL,
  member_id      text NOT NULL,
  underlying_id  text NOT NULL,
  multiplier     integer NOT NULL,
  quantity       bigint NOT NULL,
  avg_cost       numeric(18, 6) NOT NULL,
  realized_pnl   numeric(24, 6) NOT NULL,
  version        bigint NOT NULL,
  cost_basis     numeric(30, 6),
  PRIMARY KEY (account_id, instrument_id)
);
-- What the open units cost, summed exactly (avg_cost is it over |quantity|, rounded): tables of before get
-- the column, and their rows are taken at avg_cost x |quantity| until they trade.
ALTER TABLE ${schema}.mono_positions ADD COLUMN IF NOT EXISTS cost_basis numeric(30, 6);
-- The thesis's index: a tick revalues every position in its instrument.
CREATE INDEX IF NOT EXISTS mono_positions_by_instrument ON ${schema}.mono_positions (instrument_id);
-- The risk check aggregates over a member's positions.
CREATE INDEX IF NOT EXISTS mono_positions_by_member ON ${schema}.mono_positions (member_id);

-- Unrealized P&L per position, written only by the price threads. Apart from positions (written
-- only by the order threads) so that the two never lock the same row: a member's positions belong to
-- one order thread (its partition), an instrument's marks to one price thread (its underlying's).
-- In one table, a revaluation and an order batch locked rows in opposite orders and deadlocked.
CREATE TABLE IF NOT EXISTS ${schema}.mono_marks (
  account_id     text NOT NULL,
  instrument_id  text NOT NULL,
  mark_price     numeric(18, 6) NOT NULL,
  market_value   numeric(30, 6) NOT NULL,
  unrealized_pnl numeric(30, 6) NOT NULL,
  priced_at      timestamptz NOT NULL,
  PRIMARY KEY (account_id, instrument_id)
);

-- Cash moved by fills, per account (deposits are accounts.cash_balance).
CREATE TABLE IF NOT EXISTS ${schema}.mono_cash (
  account_id text PRIMARY KEY,
  moved      numeric(30, 6) NOT NULL
);

-- Every order decided: its outcome, and the record it came from. An order id is unique per member:
-- a second record of one is a retry and books nothing. The same record read again after a crash
-- (same partition and offset) gets its stored result emitted again.
CREATE TABLE IF NOT EXISTS ${schema}.mono_orders (
  member_id        text NOT NULL,
  order_id         text NOT NULL,
  account_id       text NOT NULL,
  instrument_id    text NOT NULL,
  status           text NOT NULL,
  reason           text,
  reason_detail    text,
  fill_price       numeric(18, 6),
  realized_pnl     numeric(24, 6),
  ingest_ts        timestamptz NOT NULL,
  processed_ts     timestamptz NOT NULL,
  source_partition integer NOT NULL,
  source_offset    bigint NOT NULL,
  closed_quantity  bigint NOT NULL DEFAULT 0,
  closed_avg_cost  numeric(18, 6),
  PRIMARY KEY (member_id, order_id)
);
-- A closing fill's result carries what it closed: tables of before get the columns.
ALTER TABLE ${schema}.mono_orders ADD COLUMN IF NOT EXISTS closed_quantity bigint NOT NULL DEFAULT 0;
ALTER TABLE ${schema}.mono_orders ADD COLUMN IF NOT EXISTS closed_avg_cost numeric(18, 6);

-- The latest accepted tick per equity: what orders fill at and positions are marked at.
CREATE TABLE IF NOT EXISTS ${schema}.mono_latest_prices (
  instrument_id text PRIMARY KEY,
  price         numeric(18, 6) NOT NULL,
  event_ts      timestamptz NOT NULL,
  received_ts   timestamptz NOT NULL
);
