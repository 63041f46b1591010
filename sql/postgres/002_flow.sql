-- The order flow's and the P&L flow's results, kept in Postgres by the Debezium JDBC sink
-- (connectors/sink-*.json) from their Kafka topics. Upserts by primary key: a replayed or re-sent
-- record rewrites its row, never duplicates it. Columns mirror the Avro schemas (decimal(18,6) =
-- NUMERIC(18,6), timestamp-millis = timestamptz).
-- synced_at is ours, set by a trigger when a row is written: with the flow's own timestamps it
-- measures how far Postgres lags behind Kafka.

CREATE OR REPLACE FUNCTION brokerstream_touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.synced_at := clock_timestamp();
  RETURN NEW;
END $$;

-- Every order with its outcome: one row per order. An order id is unique per member while the flow
-- remembers it (a day); one used again after that is another order, so a row is named by member, order id
-- and when the broker received it (ingest_ts): the first order's row and fill are kept. The raw orders
-- topic is not synced: this row holds everything the order said (limit, short flag, the client's
-- timestamp) beside what the broker decided, so each order costs Postgres one row instead of two.
CREATE TABLE IF NOT EXISTS order_results (
  order_id      text NOT NULL,
  member_id     text NOT NULL,
  account_id    text NOT NULL,
  instrument_id text NOT NULL,
  side          text NOT NULL,
  quantity      bigint NOT NULL,
  status        text NOT NULL,
  reason        text,
  reason_detail text,
  fill_price    numeric(18, 6),
  realized_pnl  numeric(18, 6),
  client_ts     timestamptz NOT NULL,
  ingest_ts     timestamptz NOT NULL,
  processed_ts  timestamptz NOT NULL,
  trace_id      text,
  limit_price   numeric(18, 6),
  short_sale    boolean NOT NULL DEFAULT false,
  synced_at     timestamptz,
  PRIMARY KEY (member_id, order_id, ingest_ts)
);
CREATE INDEX IF NOT EXISTS order_results_by_member ON order_results (member_id, processed_ts);
CREATE INDEX IF NOT EXISTS order_results_by_reason ON order_results (reason) WHERE reason IS NOT NULL;

-- The steps of working orders' lives (order-events: OPEN, AMENDED, TRIGGERED, CANCELLED, EXPIRED, refused
-- cancels and amends); the final outcome of each is its order_results row. An order has many events, so a
-- row is keyed by where its record sits in Kafka: a replayed record rewrites its own row.
CREATE TABLE IF NOT EXISTS order_events (
  order_id            text NOT NULL,
  member_id           text NOT NULL,
  event               text NOT NULL,
  price               numeric(18, 6),
  reserved            numeric(18, 6),
  detail              text,
  ts                  timestamptz NOT NULL,
  trace_id            text,
  quantity            bigint,
  account_id          text,
  instrument_id       text,
  __connect_topic     text NOT NULL,
  __connect_partition integer NOT NULL,
  __connect_offset    bigint NOT NULL,
  synced_at           timestamptz,
  PRIMARY KEY (__connect_topic, __connect_partition, __connect_offset)
);
CREATE INDEX IF NOT EXISTS order_events_by_order ON order_events (member_id, order_id, ts);
CREATE INDEX IF NOT EXISTS order_events_by_account ON order_events (account_id, ts);

CREATE TABLE IF NOT EXISTS positions (
  account_id    text NOT NULL,
  member_id     text NOT NULL,
  instrument_id text NOT NULL,
  underlying_id text NOT NULL,
  multiplier    integer NOT NULL,
  quantity      bigint NOT NULL,
  avg_cost      numeric(18, 6) NOT NULL,
  realized_pnl  numeric(18, 6) NOT NULL,
  version       bigint NOT NULL,
  updated_ts    timestamptz NOT NULL,
  synced_at     timestamptz,
  PRIMARY KEY (account_id, instrument_id)
);
-- Positions by instrument, and by underlying (an equity and the options on it revalue together).
CREATE INDEX IF NOT EXISTS positions_by_instrument ON positions (instrument_id);
CREATE INDEX IF NOT EXISTS positions_by_underlying ON positions (underlying_id);

-- One row per fill that realized P&L, named like its order's row (member, order id, ingest_ts).
CREATE TABLE IF NOT EXISTS realized_pnl (
  order_id        text NOT NULL,
  account_id      text NOT NULL,
  member_id       text NOT NULL,
  instrument_id   text NOT NULL,
  closed_quantity bigint NOT NULL,
  fill_price      numeric(18, 6) NOT NULL,
  avg_cost        numeric(18, 6) NOT NULL,
  realized_pnl    numeric(18, 6) NOT NULL,
  ts              timestamptz NOT NULL,
  ingest_ts       timestamptz NOT NULL,
  synced_at       timestamptz,
  PRIMARY KEY (member_id, order_id, ingest_ts)
);
CREATE INDEX IF NOT EXISTS realized_pnl_by_account ON realized_pnl (account_id, ts);

-- Unrealized P&L (the Flink job's output): per position, and rolled up per account and per member.
CREATE TABLE IF NOT EXISTS pnl_positions (
  scope            text NOT NULL,
  member_id        text NOT NULL,
  account_id       text NOT NULL,
  instrument_id    text NOT NULL,
  underlying_id    text,
  quantity         bigint,
  underlying_price numeric(18, 6),
  mark_price       numeric(18, 6),
  market_value     numeric(18, 6) NOT NULL,
  cost_basis       numeric(18, 6) NOT NULL,
  unrealized_pnl   numeric(18, 6) NOT NULL,
  positions        integer NOT NULL,
  window_end       timestamptz NOT NULL,
  computed_ts      timestamptz NOT NULL,
  synced_at        timestamptz,
  PRIMARY KEY (account_id, instrument_id)
);
CREATE INDEX IF NOT EXISTS pnl_positions_by_underlying ON pnl_positions (underlying_id);

CREATE TABLE IF NOT EXISTS pnl_accounts (
  scope            text NOT NULL,
  member_id        text NOT NULL,
  account_id       text PRIMARY KEY,
  instrument_id    text,
  underlying_id    text,
  quantity         bigint,
  underlying_price numeric(18, 6),
  mark_price       numeric(18, 6),
  market_value     numeric(18, 6) NOT NULL,
  cost_basis       numeric(18, 6) NOT NULL,
  unrealized_pnl   numeric(18, 6) NOT NULL,
  positions        integer NOT NULL,
  window_end       timestamptz NOT NULL,
  computed_ts      timestamptz NOT NULL,
  synced_at        timestamptz
);

CREATE TABLE IF NOT EXISTS pnl_members (
  scope            text NOT NULL,
  member_id        text PRIMARY KEY,
  account_id       text,
  instrument_id    text,
  underlying_id    text,
  quantity         bigint,
  underlying_price numeric(18, 6),
  mark_price       numeric(18, 6),
  market_value     numeric(18, 6) NOT NULL,
  cost_basis       numeric(18, 6) NOT NULL,
  unrealized_pnl   numeric(18, 6) NOT NULL,
  positions        integer NOT NULL,
  window_end       timestamptz NOT NULL,
  computed_ts      timestamptz NOT NULL,
  synced_at        timestamptz
);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['order_results', 'order_events', 'positions', 'realized_pnl', 'pnl_positions',
                           'pnl_accounts', 'pnl_members'] LOOP
    IF NOT EXISTS (SELECT FROM pg_trigger WHERE tgname = t || '_synced_at') THEN
      EXECUTE format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE ON %I FOR EACH ROW EXECUTE FUNCTION brokerstream_touch()',
                     t || '_synced_at', t);
    END IF;
  END LOOP;
END $$;

-- UnrealizedPnl v2: the earliest tick a result covers (for tick -> P&L latency).
ALTER TABLE pnl_positions ADD COLUMN IF NOT EXISTS first_tick_ts timestamptz;
ALTER TABLE pnl_accounts ADD COLUMN IF NOT EXISTS first_tick_ts timestamptz;
ALTER TABLE pnl_members ADD COLUMN IF NOT EXISTS first_tick_ts timestamptz;

-- Order ids became unique per member (not globally): tables of an older layout are keyed again, and
-- the raw orders table, no longer synced, goes.
ALTER TABLE order_results ADD COLUMN IF NOT EXISTS limit_price numeric(18, 6);
ALTER TABLE order_results ADD COLUMN IF NOT EXISTS short_sale boolean NOT NULL DEFAULT false;
-- Rows became named by (member, order id, ingest_ts): an order id used again after the flow forgot it
-- is another order. Tables of an older layout (keyed by order id alone, or by member and order id) are
-- keyed again; realized P&L rows of before take their booking time as ingest_ts.
DO $$
DECLARE t text;
BEGIN
  IF NOT EXISTS (SELECT FROM information_schema.columns WHERE table_name = 'realized_pnl' AND column_name = 'ingest_ts') THEN
    ALTER TABLE realized_pnl ADD COLUMN ingest_ts timestamptz;
    UPDATE realized_pnl SET ingest_ts = ts;
    ALTER TABLE realized_pnl ALTER COLUMN ingest_ts SET NOT NULL;
  END IF;
  FOREACH t IN ARRAY ARRAY['order_results', 'realized_pnl'] LOOP
    IF EXISTS (SELECT FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
               WHERE c.relname = t AND i.indisprimary AND i.indnatts < 3) THEN
      EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', t, t || '_pkey');
      EXECUTE format('ALTER TABLE %I ADD PRIMARY KEY (member_id, order_id, ingest_ts)', t);
    END IF;
  END LOOP;
END $$;
DROP TABLE IF EXISTS orders;
