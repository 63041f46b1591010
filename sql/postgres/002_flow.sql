-- The order flow's and the P&L flow's results, kept in Postgres by the project's sink connector
-- (connectors/postgres-sink, configured by connectors/sink-*.json) from their Kafka topics. Upserts by primary key: a replayed or re-sent
-- record rewrites its row, never duplicates it. Columns mirror the Avro schemas (decimal(18,6) =
-- NUMERIC(18,6), timestamp-millis = timestamptz).
-- synced_at is ours, set by the sink's statement to the time it writes each row: with the flow's own
-- timestamps it measures how far Postgres lags behind Kafka.

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
  closed_quantity bigint NOT NULL DEFAULT 0,
  closed_avg_cost numeric(18, 6),
  synced_at     timestamptz,
  position_version bigint,
  PRIMARY KEY (member_id, order_id, ingest_ts)
);
-- A fill's position version: the fills of a position in this order replay it exactly (several can share a
-- millisecond). Tables of before get the column; their rows have none.
ALTER TABLE order_results ADD COLUMN IF NOT EXISTS position_version bigint;
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

-- Every halt and resumption of an equity's trading (prices.status): by the price band, the feed's confirmed
-- level or an operator; rows never change. The latest per equity is its state (view instrument_status).
CREATE TABLE IF NOT EXISTS instrument_status_changes (
  instrument_id       text NOT NULL,
  state               text NOT NULL,
  reason              text,
  detail              text,
  changed_by          text NOT NULL,
  since_ts            timestamptz NOT NULL,
  reference_price     numeric(18, 6),
  held_price          numeric(18, 6),
  ts                  timestamptz NOT NULL,
  __connect_topic     text NOT NULL,
  __connect_partition integer NOT NULL,
  __connect_offset    bigint NOT NULL,
  synced_at           timestamptz,
  PRIMARY KEY (__connect_topic, __connect_partition, __connect_offset)
);
CREATE INDEX IF NOT EXISTS instrument_status_changes_by_instrument ON instrument_status_changes (instrument_id, ts);
CREATE OR REPLACE VIEW instrument_status AS
SELECT DISTINCT ON (instrument_id) instrument_id, state, reason, detail, changed_by, since_ts, reference_price,
       held_price, ts
FROM instrument_status_changes
ORDER BY instrument_id, ts DESC, __connect_partition DESC, __connect_offset DESC;

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
  cost_basis    numeric(24, 6),
  cash          numeric(24, 6),
  PRIMARY KEY (account_id, instrument_id)
);
-- The cash the position's fills moved to date (negative after buying): an account's cash is its deposit
-- plus the sum over its positions. Tables of before get the column; their rows have none until they trade.
ALTER TABLE positions ADD COLUMN IF NOT EXISTS cash numeric(24, 6);
-- What the open units cost, summed exactly (avg_cost is it over |quantity|, rounded half-even; without the
-- multiplier). Tables of before get the column; their rows have none until they trade again.
ALTER TABLE positions ADD COLUMN IF NOT EXISTS cost_basis numeric(24, 6);
-- A fill rewrites its position's row. With room left on each page the new version stays on the old one's
-- page and no index changes (a heap-only update); on full pages every update also inserted into the three
-- indexes (about two in five updates did, bloating them as the table aged). Set here for new and older
-- tables alike: it applies to the pages written from now on.
ALTER TABLE positions SET (fillfactor = 70);
-- Positions by instrument, and by underlying (an equity and the options on it revalue together).
CREATE INDEX IF NOT EXISTS positions_by_instrument ON positions (instrument_id);
CREATE INDEX IF NOT EXISTS positions_by_underlying ON positions (underlying_id);

-- Unrealized P&L. For each equity whose marks moved in a price window the P&L job writes one record with
-- the mark of every instrument of it that positions hold (pnl.equity-marks); sink-marks keeps the latest
-- per equity here, its marks as a JSON array of {instrument_id, mark_price}. json, not jsonb: the sync
-- rewrites these rows every few seconds and the views read them seldom; json is only checked when written,
-- jsonb converted (43 instead of 26 us of Postgres per row of 28 marks). A position's P&L is its quantity
-- and cost at its instrument's mark, and accounts and members add up their positions: so Postgres takes a
-- row per equity that moved, not one per instrument or position held, and the views below compute the rest
-- when they are read.
CREATE TABLE IF NOT EXISTS equity_marks (
  underlying_id    text PRIMARY KEY,
  underlying_price numeric(18, 6) NOT NULL,
  window_end       timestamptz NOT NULL,
  computed_ts      timestamptz NOT NULL,
  first_tick_ts    timestamptz,
  marks            json NOT NULL,
  synced_at        timestamptz
);
-- Each row is rewritten every few seconds: half of each page is left for its next version (see positions).
ALTER TABLE equity_marks SET (fillfactor = 50);
-- An earlier layout kept a row per held instrument, fed by a topic of per-instrument snapshots: the table
-- gives way to the view of the same name (the views over it go with it and are made again below).
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'instrument_marks') THEN
    DROP TABLE instrument_marks CASCADE;
  END IF;
END $$;
-- Each held instrument's mark, one row per element of its equity's marks (the decimals as written, exact).
CREATE OR REPLACE VIEW instrument_marks AS
SELECT h ->> 'instrument_id' AS instrument_id, e.underlying_id, e.underlying_price,
       (h ->> 'mark_price')::numeric(18, 6) AS mark_price, e.window_end, e.computed_ts, e.first_tick_ts,
       e.synced_at
FROM equity_marks e CROSS JOIN LATERAL json_array_elements(e.marks) h;
-- An earlier layout kept a synced row per position, account and member in tables of these names.
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['pnl_members', 'pnl_accounts', 'pnl_positions'] LOOP
    IF EXISTS (SELECT FROM pg_tables WHERE schemaname = current_schema() AND tablename = t) THEN
      EXECUTE format('DROP TABLE %I', t);
    END IF;
  END LOOP;
END $$;
-- Money stays exact: numeric(18,6) times integers.
CREATE OR REPLACE VIEW pnl_positions AS
SELECT 'POSITION'::text AS scope, p.member_id, p.account_id, p.instrument_id, p.underlying_id, p.quantity,
       m.underlying_price, m.mark_price,
       p.quantity * p.multiplier * m.mark_price AS market_value,
       (CASE WHEN p.quantity < 0 THEN -1 ELSE 1 END)::numeric
         * coalesce(p.cost_basis, abs(p.quantity) * p.avg_cost) * p.multiplier AS cost_basis,
       p.quantity * p.multiplier * m.mark_price
         - (CASE WHEN p.quantity < 0 THEN -1 ELSE 1 END)::numeric
           * coalesce(p.cost_basis, abs(p.quantity) * p.avg_cost) * p.multiplier AS unrealized_pnl,
       1 AS positions, m.window_end, m.computed_ts, m.first_tick_ts,
       greatest(p.synced_at, m.synced_at) AS synced_at
FROM positions p JOIN instrument_marks m ON m.instrument_id = p.instrument_id
WHERE p.quantity <> 0;
CREATE OR REPLACE VIEW pnl_accounts AS
SELECT 'ACCOUNT'::text AS scope, member_id, account_id, sum(market_value) AS market_value,
       sum(cost_basis) AS cost_basis, sum(unrealized_pnl) AS unrealized_pnl, count(*)::integer AS positions,
       max(window_end) AS window_end, max(computed_ts) AS computed_ts, max(synced_at) AS synced_at
FROM pnl_positions GROUP BY member_id, account_id;
CREATE OR REPLACE VIEW pnl_members AS
SELECT 'MEMBER'::text AS scope, member_id, sum(market_value) AS market_value, sum(cost_basis) AS cost_basis,
       sum(unrealized_pnl) AS unrealized_pnl, count(*)::integer AS positions, max(window_end) AS window_end,
       max(computed_ts) AS computed_ts, max(synced_at) AS synced_at
FROM pnl_positions GROUP BY member_id;

-- synced_at was once set by a row trigger (a PL/pgSQL call per row written): databases of that layout lose
-- the triggers.
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['order_results', 'order_events', 'positions'] LOOP
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I', t || '_synced_at', t);
  END LOOP;
END $$;
DROP FUNCTION IF EXISTS brokerstream_touch();

-- Order ids became unique per member (not globally): tables of an older layout are keyed again, and
-- the raw orders table, no longer synced, goes.
ALTER TABLE order_results ADD COLUMN IF NOT EXISTS limit_price numeric(18, 6);
ALTER TABLE order_results ADD COLUMN IF NOT EXISTS short_sale boolean NOT NULL DEFAULT false;
-- Rows became named by (member, order id, ingest_ts): an order id used again after the flow forgot it
-- is another order. Tables of an older layout (keyed by order id alone, or by member and order id) are
-- keyed again.
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
             WHERE c.relname = 'order_results' AND i.indisprimary AND i.indnatts < 3) THEN
    ALTER TABLE order_results DROP CONSTRAINT order_results_pkey;
    ALTER TABLE order_results ADD PRIMARY KEY (member_id, order_id, ingest_ts);
  END IF;
END $$;
DROP TABLE IF EXISTS orders;

-- Realized P&L: a fill that reduced, closed or flipped a position says so in its order's row
-- (closed_quantity > 0, the closed units' closed_avg_cost, realized_pnl), so realizing P&L costs the flow no
-- record and Postgres no row of its own. An earlier layout kept a table of these rows, fed by a topic of
-- their own: its figures move into their orders' rows, and the table gives way to the view of the same name.
ALTER TABLE order_results ADD COLUMN IF NOT EXISTS closed_quantity bigint NOT NULL DEFAULT 0;
ALTER TABLE order_results ADD COLUMN IF NOT EXISTS closed_avg_cost numeric(18, 6);
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'realized_pnl') THEN
    -- a table of the oldest layout has no ingest_ts: an order id named one order per member then
    IF EXISTS (SELECT FROM information_schema.columns
               WHERE table_schema = current_schema() AND table_name = 'realized_pnl' AND column_name = 'ingest_ts') THEN
      UPDATE order_results o SET closed_quantity = r.closed_quantity, closed_avg_cost = r.avg_cost
      FROM realized_pnl r
      WHERE o.member_id = r.member_id AND o.order_id = r.order_id AND o.ingest_ts = r.ingest_ts;
    ELSE
      UPDATE order_results o SET closed_quantity = r.closed_quantity, closed_avg_cost = r.avg_cost
      FROM realized_pnl r
      WHERE o.member_id = r.member_id AND o.order_id = r.order_id;
    END IF;
    DROP TABLE realized_pnl;
  END IF;
END $$;
-- An account's statement reads its closing fills by time.
CREATE INDEX IF NOT EXISTS order_results_closing_by_account ON order_results (account_id, processed_ts)
  WHERE closed_quantity > 0;
CREATE OR REPLACE VIEW realized_pnl AS
SELECT order_id, account_id, member_id, instrument_id, closed_quantity, fill_price, closed_avg_cost AS avg_cost,
       realized_pnl, processed_ts AS ts, ingest_ts, synced_at
FROM order_results
WHERE closed_quantity > 0;

-- Where each Postgres sink stands: per connector, topic and partition, the next Kafka offset to write. The
-- sink writes its rows and moves these in one transaction, and starts from them: Postgres holds each record
-- exactly once, whatever failed in between (Kafka's own consumer offsets only follow, for the lag metrics).
CREATE TABLE IF NOT EXISTS sink_offsets (
  connector   text NOT NULL,
  topic       text NOT NULL,
  partition   integer NOT NULL,
  next_offset bigint NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (connector, topic, partition)
);
