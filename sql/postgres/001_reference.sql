-- Reference data: the broker's members, accounts, instruments and equity start prices.
-- Debezium captures these tables into ref.* topics (connectors/). Column names, order, types and
-- nullability mirror schemas/src/main/avro/{Member,Account,Instrument,EquityStart}.avsc, so the
-- connector's Avro schema is a compatible version of ours: NUMERIC(18,6) = decimal(18,6),
-- NOT NULL = a plain Avro type, nullable = ["null", type].
-- Applied by `./brokerstream up` (and compose's init job); idempotent. api_keys' timestamps are not
-- captured (column.exclude.list): the gateway needs none of them.

CREATE TABLE IF NOT EXISTS members (
  member_id      text PRIMARY KEY,
  name           text NOT NULL,
  status         text NOT NULL CHECK (status IN ('ACTIVE', 'SUSPENDED')),
  credit_limit   numeric(18, 6) NOT NULL CHECK (credit_limit >= 0)
);
-- Keys moved to api_keys (one member, many keys, each revocable).
ALTER TABLE members DROP COLUMN IF EXISTS api_key_sha256;
-- Pre-trade controls (the market access rule's): a member's trading state, set by an operator, and its
-- limits per order and per second; null limits fall back to the broker's. Appended in the order of
-- Member.avsc's fields.
ALTER TABLE members ADD COLUMN IF NOT EXISTS trading_state text NOT NULL DEFAULT 'ACTIVE'
  CHECK (trading_state IN ('ACTIVE', 'REDUCING', 'HALTED'));
ALTER TABLE members ADD COLUMN IF NOT EXISTS max_order_quantity bigint CHECK (max_order_quantity > 0);
ALTER TABLE members ADD COLUMN IF NOT EXISTS max_order_notional numeric(18, 6) CHECK (max_order_notional > 0);
ALTER TABLE members ADD COLUMN IF NOT EXISTS max_orders_per_second integer
  CHECK (max_orders_per_second > 0 AND max_orders_per_second <= 1000000);
-- Every change of a member's trading state, with who made it and why (`./brokerstream members state` sets
-- brokerstream.operator and brokerstream.reason for its transaction).
CREATE TABLE IF NOT EXISTS member_state_changes (
  member_id   text NOT NULL,
  from_state  text,
  to_state    text NOT NULL,
  operator    text NOT NULL,
  reason      text,
  changed_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS member_state_changes_by_member ON member_state_changes (member_id, changed_at);
CREATE OR REPLACE FUNCTION brokerstream_member_state_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR NEW.trading_state IS DISTINCT FROM OLD.trading_state THEN
    INSERT INTO member_state_changes (member_id, from_state, to_state, operator, reason)
    VALUES (NEW.member_id, CASE WHEN TG_OP = 'UPDATE' THEN OLD.trading_state END, NEW.trading_state,
            coalesce(nullif(current_setting('brokerstream.operator', true), ''), current_user),
            nullif(current_setting('brokerstream.reason', true), ''));
  END IF;
  RETURN NEW;
END $$;
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_trigger WHERE tgname = 'members_record_their_state') THEN
    CREATE TRIGGER members_record_their_state AFTER INSERT OR UPDATE OF trading_state ON members
      FOR EACH ROW EXECUTE FUNCTION brokerstream_member_state_change();
  END IF;
END $$;

-- API keys: only their SHA-256 is stored (a key is 256 random bits, shown once when issued). Debezium
-- carries every change to ref.api-keys, which each gateway instance holds whole: a revocation is
-- refused everywhere within seconds. No foreign key: reloading the reference data must not take the
-- keys members were issued with it.
CREATE TABLE IF NOT EXISTS api_keys (
  key_sha256 text PRIMARY KEY,
  key_id     text NOT NULL UNIQUE,
  member_id  text NOT NULL,
  label      text NOT NULL,
  status     text NOT NULL CHECK (status IN ('ACTIVE', 'REVOKED')),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX IF NOT EXISTS api_keys_by_member ON api_keys (member_id);

CREATE TABLE IF NOT EXISTS accounts (
  account_id    text PRIMARY KEY,
  member_id     text NOT NULL REFERENCES members,
  status        text NOT NULL CHECK (status IN ('ACTIVE', 'SUSPENDED', 'CLOSED')),
  cash_balance  numeric(18, 6) NOT NULL,
  short_allowed boolean NOT NULL
);
CREATE INDEX IF NOT EXISTS accounts_by_member ON accounts (member_id);

CREATE TABLE IF NOT EXISTS instruments (
  instrument_id     text PRIMARY KEY,
  symbol            text NOT NULL,
  currency          text NOT NULL,
  exchange          text NOT NULL,
  name              text NOT NULL,
  instrument_type   text NOT NULL CHECK (instrument_type IN ('EQUITY', 'OPTION')),
  status            text NOT NULL CHECK (status IN ('ACTIVE', 'DELISTED')),
  underlying_id     text REFERENCES instruments,
  underlying_symbol text,
  maturity          date,
  option_type       text CHECK (option_type IN ('PUT', 'CALL')),
  strike            numeric(18, 6) CHECK (strike > 0),
  multiplier        integer NOT NULL CHECK (multiplier > 0),
  exercise_style    text CHECK (exercise_style IN ('EUROPEAN', 'AMERICAN')),
  -- an option has every option field, an equity none
  CHECK ((instrument_type = 'OPTION') = (underlying_id IS NOT NULL AND maturity IS NOT NULL
         AND option_type IS NOT NULL AND strike IS NOT NULL AND exercise_style IS NOT NULL))
);
-- Options by underlying: the P&L flow revalues every option on an equity that ticked.
CREATE INDEX IF NOT EXISTS instruments_by_underlying ON instruments (underlying_id);

CREATE TABLE IF NOT EXISTS equity_starts (
  instrument_id text PRIMARY KEY REFERENCES instruments,
  start_price   numeric(18, 6) NOT NULL CHECK (start_price > 0),
  volatility    double precision NOT NULL CHECK (volatility > 0)
);
-- A model input must be a number a model can use: NaN passes `> 0` (Postgres sorts NaN above every
-- number), and so does Infinity. Volatility lies in (0, 10] (1,000 % a year), a contract's multiplier in
-- [1, 1,000,000], a strike in (0, 1,000,000] (orders.max-price). The same bounds the order flow checks
-- (rules/.../ReferenceChecks.java) for a record written around Postgres.
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_constraint WHERE conname = 'equity_starts_volatility_is_a_volatility') THEN
    ALTER TABLE equity_starts ADD CONSTRAINT equity_starts_volatility_is_a_volatility
      CHECK (volatility > 0 AND volatility <= 10);
  END IF;
  IF NOT EXISTS (SELECT FROM pg_constraint WHERE conname = 'equity_starts_start_price_is_a_price') THEN
    ALTER TABLE equity_starts ADD CONSTRAINT equity_starts_start_price_is_a_price
      CHECK (start_price <= 1000000);
  END IF;
  IF NOT EXISTS (SELECT FROM pg_constraint WHERE conname = 'instruments_multiplier_is_a_multiplier') THEN
    ALTER TABLE instruments ADD CONSTRAINT instruments_multiplier_is_a_multiplier
      CHECK (multiplier <= 1000000);
  END IF;
  IF NOT EXISTS (SELECT FROM pg_constraint WHERE conname = 'instruments_strike_is_a_price') THEN
    ALTER TABLE instruments ADD CONSTRAINT instruments_strike_is_a_price CHECK (strike <= 1000000);
  END IF;
END $$;

-- What the reference data generator loaded: makes `refdata load` idempotent.
CREATE TABLE IF NOT EXISTS refdata_loads (
  scale     text NOT NULL,
  seed      bigint NOT NULL,
  as_of     date NOT NULL,
  counts    jsonb NOT NULL,
  loaded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scale, seed, as_of)
);

-- Ids follow the one id rule (rules/.../Identifiers.java): 1 to 64 ASCII letters, digits or . _ : -. The
-- order flow joins ids with '|' in its keys and scans them by prefix, so no id may hold one. Checked here,
-- where reference data enters.
DO $$
DECLARE c record;
BEGIN
  FOR c IN SELECT * FROM (VALUES
      ('members', 'member_id'), ('accounts', 'account_id'), ('accounts', 'member_id'),
      ('instruments', 'instrument_id'), ('instruments', 'underlying_id'), ('equity_starts', 'instrument_id'),
      ('api_keys', 'member_id')) AS t(tbl, col) LOOP
    IF NOT EXISTS (SELECT FROM pg_constraint WHERE conname = c.tbl || '_' || c.col || '_is_id') THEN
      EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (%I ~ ''^[A-Za-z0-9._:-]{1,64}$'')',
                     c.tbl, c.tbl || '_' || c.col || '_is_id', c.col);
    END IF;
  END LOOP;
END $$;

-- An account's member is fixed for life: its positions, cash and working orders live with that member in
-- the order flow. account_owners remembers the first member of every account id ever loaded, and is never
-- emptied by a reload; a change of member, or an id given again to another member, is refused.
CREATE TABLE IF NOT EXISTS account_owners (
  account_id text PRIMARY KEY,
  member_id  text NOT NULL
);
CREATE OR REPLACE FUNCTION brokerstream_account_owner() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE owner text;
BEGIN
  SELECT member_id INTO owner FROM account_owners WHERE account_id = NEW.account_id;
  IF owner IS NULL THEN
    INSERT INTO account_owners VALUES (NEW.account_id, NEW.member_id);
  ELSIF owner <> NEW.member_id THEN
    RAISE EXCEPTION 'account % belongs to member % and cannot move to member %: open a new account instead',
      NEW.account_id, owner, NEW.member_id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_trigger WHERE tgname = 'accounts_keep_their_member') THEN
    INSERT INTO account_owners SELECT account_id, member_id FROM accounts ON CONFLICT DO NOTHING;
    CREATE TRIGGER accounts_keep_their_member BEFORE INSERT OR UPDATE OF member_id, account_id ON accounts
      FOR EACH ROW EXECUTE FUNCTION brokerstream_account_owner();
  END IF;
END $$;
