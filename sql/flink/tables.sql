-- Flink SQL tables over the flow topics (platform/topics.yaml): the kafka connector, values in the
-- Confluent wire format read through the schema registry (avro-confluent), keys as UTF-8 strings.
--
-- ${kafka_bootstrap} and ${registry_url} are filled in by `./brokerstream sql` from the stack's
-- configuration, ${schema:Name} with the Avro schema of schemas/src/main/avro/Name.avsc: Flink reads
-- with that schema (the writer's comes from the registry), which is how Avro enums read as STRING;
-- it must match the columns exactly, so required fields are NOT NULL and optional ones nullable.
-- Tables start from the earliest offset and run unbounded (the SQL client's live view);
-- `./brokerstream sql run` alters them to stop at the latest offset, or to start at --since.
--
-- Columns follow the Avro schemas in schemas/src/main/avro: decimal(18,6) -> DECIMAL(18, 6),
-- timestamp-millis -> TIMESTAMP(3), enums -> STRING, optional fields nullable. The event-time
-- columns carry watermarks so windowed queries close their windows in streaming mode; idle
-- partitions must not hold them back (the session sets table.exec.source.idle-timeout).

CREATE TABLE orders (
  member_id STRING,                                -- the record key: orders are keyed by member
  order_id STRING NOT NULL,
  account_id STRING NOT NULL,
  instrument_id STRING NOT NULL,
  side STRING NOT NULL,
  quantity BIGINT NOT NULL,
  limit_price DECIMAL(18, 6),
  short_sale BOOLEAN NOT NULL,
  client_ts TIMESTAMP(3) NOT NULL,
  trace_id STRING,
  time_in_force STRING NOT NULL,
  stop_price DECIMAL(18, 6),
  kafka_ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '${kafka_bootstrap}',
  'properties.isolation.level' = 'read_committed',
  'scan.startup.mode' = 'earliest-offset',
  'key.format' = 'raw',
  'key.fields' = 'member_id',
  'value.format' = 'avro-confluent',
  'value.avro-confluent.url' = '${registry_url}',
  'value.avro-confluent.schema' = '${schema:Order}',
  'value.fields-include' = 'EXCEPT_KEY'
);

CREATE TABLE order_results (
  order_id STRING NOT NULL,
  member_id STRING NOT NULL,
  account_id STRING NOT NULL,
  instrument_id STRING NOT NULL,
  side STRING NOT NULL,
  quantity BIGINT NOT NULL,
  status STRING NOT NULL,
  reason STRING,
  reason_detail STRING,
  fill_price DECIMAL(18, 6),
  realized_pnl DECIMAL(18, 6),
  client_ts TIMESTAMP(3) NOT NULL,
  ingest_ts TIMESTAMP(3) NOT NULL,
  processed_ts TIMESTAMP(3) NOT NULL,
  trace_id STRING,
  limit_price DECIMAL(18, 6),
  short_sale BOOLEAN NOT NULL,
  closed_quantity BIGINT NOT NULL,
  closed_avg_cost DECIMAL(18, 6),
  position_version BIGINT,
  WATERMARK FOR processed_ts AS processed_ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'order-results',
  'properties.bootstrap.servers' = '${kafka_bootstrap}',
  'properties.isolation.level' = 'read_committed',
  'scan.startup.mode' = 'earliest-offset',
  'value.format' = 'avro-confluent',
  'value.avro-confluent.url' = '${registry_url}',
  'value.avro-confluent.schema' = '${schema:OrderResult}'
);

-- The positions changelog (the order flow's positions store's, which is the positions topic): every
-- version of a position. A key always lands in one partition, so its latest version is the one at the
-- highest offset.
CREATE TABLE positions (
  account_id STRING NOT NULL,
  member_id STRING NOT NULL,
  instrument_id STRING NOT NULL,
  underlying_id STRING NOT NULL,
  multiplier INT NOT NULL,
  quantity BIGINT NOT NULL,
  avg_cost DECIMAL(18, 6) NOT NULL,
  realized_pnl DECIMAL(18, 6) NOT NULL,
  version BIGINT NOT NULL,
  updated_ts TIMESTAMP(3) NOT NULL,
  cash DECIMAL(18, 6) NOT NULL,
  cost_basis DECIMAL(18, 6) NOT NULL,
  kafka_partition INT METADATA FROM 'partition' VIRTUAL,
  kafka_offset BIGINT METADATA FROM 'offset' VIRTUAL
) WITH (
  'connector' = 'kafka',
  'topic' = 'brokerstream-orders-positions-changelog',
  'properties.bootstrap.servers' = '${kafka_bootstrap}',
  'properties.isolation.level' = 'read_committed',
  'scan.startup.mode' = 'earliest-offset',
  'value.format' = 'avro-confluent',
  'value.avro-confluent.url' = '${registry_url}',
  'value.avro-confluent.schema' = '${schema:Position}'
);

CREATE TABLE price_ticks (
  instrument_id STRING NOT NULL,
  price DECIMAL(18, 6) NOT NULL,
  event_ts TIMESTAMP(3) NOT NULL,
  `sequence` BIGINT NOT NULL,
  WATERMARK FOR event_ts AS event_ts - INTERVAL '2' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'price-ticks',
  'properties.bootstrap.servers' = '${kafka_bootstrap}',
  'scan.startup.mode' = 'earliest-offset',
  'value.format' = 'avro-confluent',
  'value.avro-confluent.url' = '${registry_url}',
  'value.avro-confluent.schema' = '${schema:PriceTick}'
);

-- Unrealized P&L per member from the P&L job: the latest record of a member is its current P&L.
CREATE TABLE pnl_members (
  `scope` STRING NOT NULL,
  member_id STRING NOT NULL,
  account_id STRING,
  instrument_id STRING,
  underlying_id STRING,
  quantity BIGINT,
  underlying_price DECIMAL(18, 6),
  mark_price DECIMAL(18, 6),
  market_value DECIMAL(18, 6) NOT NULL,
  cost_basis DECIMAL(18, 6) NOT NULL,
  unrealized_pnl DECIMAL(18, 6) NOT NULL,
  positions INT NOT NULL,
  window_end TIMESTAMP(3) NOT NULL,
  computed_ts TIMESTAMP(3) NOT NULL,
  first_tick_ts TIMESTAMP(3),
  unrealized_loss DECIMAL(18, 6) NOT NULL,
  kafka_partition INT METADATA FROM 'partition' VIRTUAL,
  kafka_offset BIGINT METADATA FROM 'offset' VIRTUAL
) WITH (
  'connector' = 'kafka',
  'topic' = 'pnl.members',
  'properties.bootstrap.servers' = '${kafka_bootstrap}',
  'properties.isolation.level' = 'read_committed',
  'scan.startup.mode' = 'earliest-offset',
  'value.format' = 'avro-confluent',
  'value.avro-confluent.url' = '${registry_url}',
  'value.avro-confluent.schema' = '${schema:UnrealizedPnl}'
);
