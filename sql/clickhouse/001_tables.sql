-- Run metrics: one row per run in `runs`, samples of the run in the others. Applied by
-- `./brokerstream load run` and `report` (CREATE ... IF NOT EXISTS; statements separated by ';').
CREATE TABLE IF NOT EXISTS runs (
  run_id            String,
  kind              LowCardinality(String),   -- http (Locust) | drain (prefill and drain)
  shape             LowCardinality(String),   -- constant | breaking-point | bursts | drain
  started           DateTime64(3, 'UTC'),
  ended             DateTime64(3, 'UTC'),
  scale_step        UInt32,                   -- the experiment's step (1, 2, ...): what the cost curve is over
  partitions        UInt32,
  stream_threads    UInt32,
  instances         UInt32,
  flink_parallelism UInt32,
  vcpus             Float64,                  -- resources the run was given: what it is priced by
  memory_gb         Float64,
  instance_type     String,                   -- '' or a name in the price sheet (then priced by it)
  heap_sizes        String,
  workload          String,
  seed              UInt32,
  code_version      String,
  config            String                    -- every BS_* setting of the run, JSON
) ENGINE = ReplacingMergeTree ORDER BY run_id;

CREATE TABLE IF NOT EXISTS process_samples (
  run_id      String,
  ts          DateTime64(3, 'UTC'),
  service     LowCardinality(String),
  cpu_seconds Float64,                        -- cumulative since the process started
  rss_bytes   UInt64
) ENGINE = MergeTree ORDER BY (run_id, service, ts);

-- Cumulative counts per stage: orders_accepted, orders_rejected, pnl_calculations, positions_revalued, ...
CREATE TABLE IF NOT EXISTS stage_samples (
  run_id String,
  ts     DateTime64(3, 'UTC'),
  stage  LowCardinality(String),
  total  UInt64
) ENGINE = MergeTree ORDER BY (run_id, stage, ts);

CREATE TABLE IF NOT EXISTS lag_samples (
  run_id     String,
  ts         DateTime64(3, 'UTC'),
  group_name LowCardinality(String),
  lag        Int64
) ENGINE = MergeTree ORDER BY (run_id, group_name, ts);

-- Latency samples in ms: gateway_accept, order_to_result, tick_to_pnl
CREATE TABLE IF NOT EXISTS latency_samples (
  run_id   String,
  ts       DateTime64(3, 'UTC'),
  metric   LowCardinality(String),
  value_ms Float64
) ENGINE = MergeTree ORDER BY (run_id, metric, ts);

-- Locust's per-second history (all requests together): load and errors as the shape moved
CREATE TABLE IF NOT EXISTS request_samples (
  run_id         String,
  ts             DateTime64(3, 'UTC'),
  users          UInt32,
  rps            Float64,
  failures_per_s Float64,
  p50_ms         Float64,
  p95_ms         Float64,
  p99_ms         Float64
) ENGINE = MergeTree ORDER BY (run_id, ts);

-- Figures a run produced as a whole (c_sla for a breaking-point run, drain throughput, ...)
CREATE TABLE IF NOT EXISTS run_results (
  run_id String,
  name   LowCardinality(String),
  value  Float64
) ENGINE = ReplacingMergeTree ORDER BY (run_id, name);

-- The price sheet, loaded from sql/clickhouse/price-sheet.yaml before each report
CREATE TABLE IF NOT EXISTS unit_prices (
  resource   LowCardinality(String),          -- vcpu_hour | gb_hour
  usd        Float64
) ENGINE = ReplacingMergeTree ORDER BY resource;

CREATE TABLE IF NOT EXISTS instance_types (
  name       String,
  vcpus      Float64,
  memory_gb  Float64,
  usd_hour   Float64
) ENGINE = ReplacingMergeTree ORDER BY name;

-- What every cost query starts from. A run's price per hour: its instance type's, else its vCPUs and
-- memory at the unit prices. A run's rates: the change of each cumulative stage count over its span.
CREATE VIEW IF NOT EXISTS run_prices AS
SELECT r.run_id AS run_id, r.scale_step AS scale_step, r.kind AS kind, r.started AS started,
       if(it.usd_hour > 0, it.usd_hour,
          r.vcpus * (SELECT any(usd) FROM unit_prices FINAL WHERE resource = 'vcpu_hour')
          + r.memory_gb * (SELECT any(usd) FROM unit_prices FINAL WHERE resource = 'gb_hour')) AS usd_hour
FROM runs AS r FINAL LEFT JOIN instance_types AS it FINAL ON it.name = r.instance_type;

CREATE VIEW IF NOT EXISTS run_rates AS
SELECT run_id,
       sumIf(per_s, stage IN ('orders_accepted', 'orders_rejected')) AS orders_per_s,
       sumIf(per_s, stage = 'pnl_calculations') AS pnl_per_s
FROM (SELECT run_id, stage,
             (max(total) - min(total)) / greatest(dateDiff('millisecond', min(ts), max(ts)) / 1000, 0.001) AS per_s
      FROM stage_samples GROUP BY run_id, stage)
GROUP BY run_id;

-- `bench system`: one row per step (a constant order rate with ticks flowing, every service on)
CREATE TABLE IF NOT EXISTS system_steps (
  run_id             String,
  step               UInt32,
  mode               LowCardinality(String),  -- http (through the gateway) | kafka (into the orders topic)
  offered_rate       Float64,
  achieved_rate      Float64,
  seconds            Float64,
  sent               UInt64,
  results            UInt64,
  missing            UInt64,
  accept_p50_ms      Float64,
  accept_p99_ms      Float64,
  visible_p50_ms     Float64,
  visible_p99_ms     Float64,
  committed_p50_ms   Float64,
  committed_p99_ms   Float64,
  tick_pnl_p50_ms    Float64,
  tick_pnl_p99_ms    Float64,
  order_pg_p50_ms    Float64,
  order_pg_p99_ms    Float64,
  position_pg_p50_ms Float64,
  position_pg_p99_ms Float64,
  lag_growing        String,                  -- the consumer groups whose lag grew, comma separated
  client_cpu_cores   Float64,
  stack_cpu_cores    Float64,
  offsets_per_order  Float64,                 -- Kafka records (and markers) written per order sent
  sustained          UInt8,
  gateway_ok         UInt8,
  verdict            String,
  detail             String                   -- the whole step as JSON
) ENGINE = ReplacingMergeTree ORDER BY (run_id, step);

-- `bench system`: where sampled orders' and ticks' time went, per hop and step
CREATE TABLE IF NOT EXISTS hop_samples (
  run_id  String,
  step    UInt32,
  path    LowCardinality(String),             -- order | tick
  hop     LowCardinality(String),
  kind    LowCardinality(String),             -- computing | waiting
  count   UInt64,
  mean_ms Float64,
  p50_ms  Float64,
  p99_ms  Float64
) ENGINE = ReplacingMergeTree ORDER BY (run_id, step, path, hop);

-- What a run's stack used: CPU cores on average (the change of every service's CPU seconds over the
-- run; a service restarted mid-run, as the drain restarts the streams app, counts from zero again).
CREATE VIEW IF NOT EXISTS run_stack_cpu AS
SELECT run_id, sum(used) / greatest(any(span_s), 0.001) AS stack_cpu_cores
FROM (SELECT run_id, service, sum(delta) AS used,
             any(dateDiff('millisecond', run_start, run_end) / 1000) AS span_s
      FROM (SELECT run_id, service, ts,
                   if(rn = 1, 0, if(cpu_seconds >= prev, cpu_seconds - prev, cpu_seconds)) AS delta,
                   min(ts) OVER (PARTITION BY run_id) AS run_start, max(ts) OVER (PARTITION BY run_id) AS run_end
            FROM (SELECT run_id, service, ts, cpu_seconds,
                         lagInFrame(cpu_seconds) OVER (PARTITION BY run_id, service ORDER BY ts
                                                       ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS prev,
                         row_number() OVER (PARTITION BY run_id, service ORDER BY ts) AS rn
                  FROM process_samples))
      GROUP BY run_id, service)
GROUP BY run_id;

-- The scaling lab (`./brokerstream experiment scale`): which runs belong to which experiment and step,
-- and the limits in force during each.
CREATE TABLE IF NOT EXISTS experiment_runs (
  experiment_id   String,
  started         DateTime64(3, 'UTC'),
  step            UInt32,                     -- 1, 2, ... in the order given
  step_name       String,                     -- "1.5 vCPU", "2 vCPU, 2 stream threads, P&L x2"
  repeat          UInt32,
  kind            LowCardinality(String),     -- drain | pnl (bench pnl) | http (breaking point)
  run_id          String,
  vcpus           Float64,                    -- the CPU quota on the whole stack
  memory_gb       Float64,                    -- the memory limit on the whole stack
  stream_threads  UInt32,
  pnl_parallelism UInt32,
  orders          UInt64,                     -- drain: orders prefilled and measured, pnl: open positions
  tick_rate       Float64,                    -- ticks per second offered during the run
  conditions      String                      -- the rest, JSON: data scale, SLO, hold, machine
) ENGINE = ReplacingMergeTree ORDER BY (experiment_id, step, repeat, kind);
-- Which order flow the experiment measured: streams (the stream-native system) or baseline (the seed
-- thesis's monolith, baseline/). Tables made before it existed read as streams.
ALTER TABLE experiment_runs ADD COLUMN IF NOT EXISTS architecture LowCardinality(String) DEFAULT 'streams';
-- How the work was cut into processes and tasks (scale-out steps) and the stack's shape: streams app
-- instances, Flink TaskManagers, tasks per Connect sink (0: as the connector files say), topic partitions
-- and Kafka brokers (0: not recorded, from before these columns).
ALTER TABLE experiment_runs ADD COLUMN IF NOT EXISTS streams_instances UInt32 DEFAULT 1;
ALTER TABLE experiment_runs ADD COLUMN IF NOT EXISTS taskmanagers UInt32 DEFAULT 1;
ALTER TABLE experiment_runs ADD COLUMN IF NOT EXISTS connect_tasks UInt32 DEFAULT 0;
ALTER TABLE experiment_runs ADD COLUMN IF NOT EXISTS topic_partitions UInt32 DEFAULT 0;
ALTER TABLE experiment_runs ADD COLUMN IF NOT EXISTS kafka_brokers UInt32 DEFAULT 0;

-- `bench cost` and `bench system`: what a unit of work (an order or a tick) cost the stack in a window, one
-- row per figure: each service's CPU and, of it, its JIT compilers' (a warm-up cost, falling as a stack runs
-- on), broker requests by API key, records and bytes written by topic, rows written to Postgres by table.
CREATE TABLE IF NOT EXISTS cost_lines (
  run_id     String,
  step       UInt32,                          -- bench system: the step, bench cost: 1 idle, 2 orders, 3 ticks
  phase      LowCardinality(String),          -- idle | orders (orders alone) | ticks (ticks alone) | step
  unit       LowCardinality(String),          -- order | tick
  rate       Float64,                         -- units per second in the window
  kind       LowCardinality(String),          -- cpu_us | jit_us | requests | records | bytes | rows
  name       String,                          -- the service, API key, topic or table
  per_unit   Float64,                         -- cpu_us, jit_us: microseconds (above idle in bench cost)
  per_second Float64                          -- cpu_us, jit_us: cores, the others: per second
) ENGINE = ReplacingMergeTree ORDER BY (run_id, step, kind, name);

-- Each run's figures, as the scaling report reads them: orders/s are a capacity search's sustained capacity
-- through the gateway (a search that never broke, or never held, has none: not its rungs' average), else a
-- drain's rate, else what the collector counted (a Locust or bench run); revaluations/s are a P&L run's
-- positions revalued per second, else the collector's count. A lab step's run carries its architecture.
CREATE VIEW IF NOT EXISTS run_figures AS
SELECT r.run_id AS run_id, r.kind AS kind, r.scale_step AS scale_step, r.started AS started,
       if(e.architecture = '', 'streams', e.architecture) AS architecture,
       multiIf(cap.run_id != '' OR fl.run_id != '', if(cap.value > 0 AND fl.value = 0, cap.value, 0),
               d.value > 0, d.value, q.orders_per_s) AS orders_per_s,
       if(pv.value > 0, pv.value, q.pnl_per_s) AS pnl_per_s
FROM runs AS r FINAL
LEFT JOIN (SELECT run_id, any(architecture) AS architecture FROM experiment_runs FINAL GROUP BY run_id) AS e
  ON e.run_id = r.run_id
LEFT JOIN run_rates AS q ON q.run_id = r.run_id
-- a left join's unmatched row carries defaults: cap.run_id and fl.run_id are '' where the run searched no
-- capacity (a search that found only a ceiling stores no capacity, but its floor flag)
LEFT JOIN (SELECT run_id, value FROM run_results FINAL WHERE name = 'capacity_orders_per_s') AS cap
  ON cap.run_id = r.run_id
LEFT JOIN (SELECT run_id, value FROM run_results FINAL WHERE name = 'c_sla_is_floor') AS fl ON fl.run_id = r.run_id
LEFT JOIN (SELECT run_id, value FROM run_results FINAL WHERE name = 'drain_orders_per_s') AS d ON d.run_id = r.run_id
LEFT JOIN (SELECT run_id, value FROM run_results FINAL WHERE name = 'positions_revalued_per_s') AS pv
  ON pv.run_id = r.run_id;
