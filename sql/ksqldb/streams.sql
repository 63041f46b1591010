-- ksqlDB declarations over the flow topics (platform/topics.yaml), for the compose stack.
-- Keys are UTF-8 strings (KEY_FORMAT 'KAFKA'); value columns are inferred from the latest schema in
-- the registry (Avro, Confluent wire format), so only the key column is declared. Streams are
-- histories; a TABLE keeps the latest value per key, as the topic's consumers do.
--
-- Applied on start by compose's `ksqldb-init` one-shot (`ksql --file`); IF NOT EXISTS makes a rerun
-- harmless. ksqlDB cannot be downloaded here, so these are exercised only under compose: the native
-- stack answers the same catalog through Flink SQL (sql/flink/).

SET 'auto.offset.reset' = 'earliest';

CREATE STREAM IF NOT EXISTS orders (member_id STRING KEY)
  WITH (KAFKA_TOPIC = 'orders', KEY_FORMAT = 'KAFKA', VALUE_FORMAT = 'AVRO');

CREATE STREAM IF NOT EXISTS order_results (order_key STRING KEY)
  WITH (KAFKA_TOPIC = 'order-results', KEY_FORMAT = 'KAFKA', VALUE_FORMAT = 'AVRO',
        TIMESTAMP = 'processed_ts');

CREATE TABLE IF NOT EXISTS positions (position_key STRING PRIMARY KEY)
  WITH (KAFKA_TOPIC = 'brokerstream-orders-positions-changelog', KEY_FORMAT = 'KAFKA', VALUE_FORMAT = 'AVRO');

CREATE STREAM IF NOT EXISTS price_ticks (tick_key STRING KEY)
  WITH (KAFKA_TOPIC = 'price-ticks', KEY_FORMAT = 'KAFKA', VALUE_FORMAT = 'AVRO',
        TIMESTAMP = 'event_ts');

CREATE TABLE IF NOT EXISTS pnl_members (member_key STRING PRIMARY KEY)
  WITH (KAFKA_TOPIC = 'pnl.members', KEY_FORMAT = 'KAFKA', VALUE_FORMAT = 'AVRO');
