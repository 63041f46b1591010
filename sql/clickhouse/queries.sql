-- The cost-efficiency queries. Each starts with `-- name:` and a one-line purpose; `./brokerstream report`
-- runs them. {headroom} and {value_per_response} are numbers the report passes in.
-- run_prices (price per hour of each run) and run_rates (its throughputs) are views of 001_tables.sql.

-- name: throughput_per_dollar
-- purpose: per run, orders/s and positions revalued/s per dollar-hour (the figures the scaling report reads), and the cost of a million orders
SELECT p.run_id AS run_id, f.architecture AS architecture, p.scale_step AS scale_step, p.kind AS kind,
       round(p.usd_hour, 6) AS usd_hour,
       round(f.orders_per_s, 3) AS orders_per_s, round(f.pnl_per_s, 3) AS pnl_per_s,
       round(f.orders_per_s / p.usd_hour, 3) AS orders_per_s_per_usd_hour,
       round(f.pnl_per_s / p.usd_hour, 3) AS pnl_per_s_per_usd_hour,
       round(if(f.orders_per_s > 0, p.usd_hour / (f.orders_per_s * 3600) * 1e6, nan), 6) AS usd_per_million_orders
FROM run_prices AS p INNER JOIN run_figures AS f ON f.run_id = p.run_id
WHERE f.orders_per_s > 0 OR f.pnl_per_s > 0
ORDER BY p.started;

-- name: cost_curve
-- purpose: per architecture and scale step, orders/s and revaluations/s against cost (the mean of the runs that measured each), with the gain over the first step in percent
WITH steps AS (
  SELECT f.architecture AS architecture, p.scale_step AS scale_step, avg(p.usd_hour) AS usd_hour,
         avgIf(f.orders_per_s, f.orders_per_s > 0) AS orders_per_s, avgIf(f.pnl_per_s, f.pnl_per_s > 0) AS pnl_per_s
  FROM run_prices AS p INNER JOIN run_figures AS f ON f.run_id = p.run_id
  WHERE f.orders_per_s > 0 OR f.pnl_per_s > 0
  GROUP BY f.architecture, p.scale_step)
SELECT architecture, scale_step, round(usd_hour, 6) AS usd_hour, round(orders_per_s, 3) AS orders_per_s,
       round(orders_per_s / usd_hour, 3) AS orders_per_s_per_usd_hour,
       round(pnl_per_s, 3) AS pnl_per_s, round(pnl_per_s / usd_hour, 3) AS pnl_per_s_per_usd_hour,
       round((orders_per_s / first_value(orders_per_s) OVER (PARTITION BY architecture ORDER BY scale_step) - 1) * 100, 3)
         AS throughput_gain_pct,
       round(((orders_per_s / usd_hour) / first_value(orders_per_s / usd_hour)
              OVER (PARTITION BY architecture ORDER BY scale_step) - 1) * 100, 3) AS per_dollar_gain_pct
FROM steps ORDER BY architecture, scale_step;

-- name: cost_per_1000_at_sla
-- purpose: cost of 1,000 requests at the SLA rate C_SLA (req/s, from a breaking-point run) with headroom h
SELECT p.run_id AS run_id, p.scale_step AS scale_step, res.value AS c_sla_per_s, round(p.usd_hour, 6) AS usd_hour,
       -- (cost/h / C_SLA) * 1000 / (1 - h), with C_SLA in requests per hour
       round((p.usd_hour / (res.value * 3600)) * 1000 / (1 - {headroom}), 12) AS usd_per_1000_requests
FROM run_prices AS p
INNER JOIN (SELECT run_id, value FROM run_results FINAL WHERE name = 'c_sla') AS res ON res.run_id = p.run_id
WHERE res.value > 0
ORDER BY p.started;

-- name: productivity
-- purpose: F = throughput x value per response / cost per second per architecture and step, and scalability F(k) / F(k-1)
WITH f AS (
  SELECT f.architecture AS architecture, p.scale_step AS scale_step,
         avgIf(f.orders_per_s, f.orders_per_s > 0) * {value_per_response} / (avg(p.usd_hour) / 3600) AS productivity
  FROM run_prices AS p INNER JOIN run_figures AS f ON f.run_id = p.run_id
  WHERE f.orders_per_s > 0
  GROUP BY f.architecture, p.scale_step)
SELECT architecture, scale_step, round(productivity, 3) AS productivity,
       round(productivity / nullIf(lagInFrame(productivity)
             OVER (PARTITION BY architecture ORDER BY scale_step ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), 0), 6)
         AS scalability_vs_previous
FROM f ORDER BY architecture, scale_step;

-- name: service_costs
-- purpose: what each service used in the latest run (CPU cores and memory on average) and that usage priced
WITH
  (SELECT any(usd) FROM unit_prices FINAL WHERE resource = 'vcpu_hour') AS vcpu_price,
  (SELECT any(usd) FROM unit_prices FINAL WHERE resource = 'gb_hour') AS gb_price,
  (SELECT argMax(run_id, started) FROM runs FINAL) AS latest
SELECT service,
       round((max(cpu_seconds) - min(cpu_seconds)) / greatest(dateDiff('millisecond', min(ts), max(ts)) / 1000, 0.001), 3)
         AS cpu_cores,
       round(avg(rss_bytes) / 1e9, 3) AS memory_gb,
       round(cpu_cores * vcpu_price + memory_gb * gb_price, 6) AS usd_hour_used
FROM process_samples WHERE run_id = latest
GROUP BY service ORDER BY usd_hour_used DESC;

-- name: latency
-- purpose: latency percentiles per run and metric (gateway accept, order -> result, tick -> P&L)
SELECT run_id, metric, count() AS samples,
       round(quantileExact(0.5)(value_ms), 3) AS p50_ms, round(quantileExact(0.95)(value_ms), 3) AS p95_ms,
       round(quantileExact(0.99)(value_ms), 3) AS p99_ms
FROM latency_samples GROUP BY run_id, metric ORDER BY run_id, metric;

-- name: scaling_steps
-- purpose: the latest scaling experiment (of a stack shape: {partitions} topic partitions and {brokers} Kafka brokers, -1 any) per step: its figure (the sustained capacity through the gateway where a search ran, else the drain's orders/s), positions revalued/s (P&L runs) against cost, C_SLA, spread over repeats, scalability F(k)/F(k-1); {baseline} 1 takes the latest of the baseline monolith, 0 of the streams system
WITH runs_of AS (
  SELECT e.step AS step, e.step_name AS step_name, e.kind AS kind, e.vcpus AS vcpus, e.memory_gb AS memory_gb,
         e.orders AS r_orders,
         e.stream_threads AS r_threads, e.pnl_parallelism AS r_parallelism,
         e.streams_instances AS r_instances, e.taskmanagers AS r_taskmanagers, e.connect_tasks AS r_connect_tasks,
         e.topic_partitions AS r_partitions, e.kafka_brokers AS r_brokers,
         p.usd_hour AS r_usd_hour, c.stack_cpu_cores AS r_cpu_cores,
         d.value AS r_orders_per_s, q.pnl_per_s AS r_pnl_during, pv.value AS r_pnl_per_s, s.value AS r_c_sla,
         cc.value AS r_client_cores, fl.value AS r_floor, rv.value AS r_revalued,
         rv.run_id AS r_revalued_run, idl.value AS r_idle_cores,
         idl.run_id AS r_idle_run, cap.value AS r_capacity, br.value AS r_rung_cores,
         acc.value AS r_accept_p99, vis.value AS r_visible_p99
  FROM experiment_runs AS e FINAL
  INNER JOIN run_prices AS p ON p.run_id = e.run_id
  LEFT JOIN run_stack_cpu AS c ON c.run_id = e.run_id
  LEFT JOIN run_rates AS q ON q.run_id = e.run_id
  LEFT JOIN (SELECT run_id, value FROM run_results FINAL WHERE name = 'drain_orders_per_s') AS d ON d.run_id = e.run_id
  LEFT JOIN (SELECT run_id, value FROM run_results FINAL WHERE name = 'c_sla') AS s ON s.run_id = e.run_id
  LEFT JOIN (SELECT run_id, value FROM run_results FINAL WHERE name = 'positions_revalued_per_s') AS pv ON pv.run_id = e.run_id
  LEFT JOIN (SELECT run_id, value FROM run_results FINAL WHERE name = 'client_cpu_cores') AS cc ON cc.run_id = e.run_id
  LEFT JOIN (SELECT run_id, value FROM run_results FINAL WHERE name = 'c_sla_is_floor') AS fl ON fl.run_id = e.run_id
  LEFT JOIN (SELECT run_id, value FROM run_results FINAL WHERE name = 'drain_revalued_per_s') AS rv ON rv.run_id = e.run_id
  LEFT JOIN (SELECT run_id, value FROM run_results FINAL WHERE name = 'idle_cpu_cores') AS idl ON idl.run_id = e.run_id
  LEFT JOIN (SELECT run_id, value FROM run_results FINAL WHERE name = 'capacity_orders_per_s') AS cap ON cap.run_id = e.run_id
  LEFT JOIN (SELECT run_id, value FROM run_results FINAL WHERE name = 'busiest_rung_cores') AS br ON br.run_id = e.run_id
  LEFT JOIN (SELECT run_id, value FROM run_results FINAL WHERE name = 'accept_p99_ms_at_capacity') AS acc ON acc.run_id = e.run_id
  LEFT JOIN (SELECT run_id, value FROM run_results FINAL WHERE name = 'visible_p99_ms_at_capacity') AS vis ON vis.run_id = e.run_id
  WHERE e.experiment_id = (SELECT argMax(experiment_id, started) FROM experiment_runs FINAL
                           WHERE (architecture = 'baseline') = {baseline}
                             AND ({partitions} < 0 OR topic_partitions = {partitions})
                             AND ({brokers} < 0 OR kafka_brokers = {brokers}))),
-- the step's figure: its sustained capacity through the gateway where a search ran, else the drain; its
-- C_SLA: the search's where one ran (open loop), else Locust's breaking point
kinds AS (
  SELECT step, countIf(kind = 'capacity') > 0 AS by_capacity,
         if(countIf(kind = 'capacity' AND (r_c_sla > 0 OR r_floor > 0)) > 0, 'capacity', 'locust') AS sla_kind
  FROM runs_of GROUP BY step),
runs_kinds AS (SELECT * FROM runs_of INNER JOIN kinds USING step),
per_step AS (
  SELECT step, any(step_name) AS step_name, any(vcpus) AS vcpus, any(memory_gb) AS memory_gb,
         any(r_threads) AS stream_threads, any(r_parallelism) AS pnl_parallelism,
         any(r_instances) AS streams_instances, any(r_taskmanagers) AS taskmanagers,
         any(r_connect_tasks) AS connect_tasks, any(r_partitions) AS topic_partitions, any(r_brokers) AS kafka_brokers,
         avg(r_usd_hour) AS usd_hour,
         -- a search that never broke found a floor: never the step's figure (it shows as no C_SLA: unbroken at)
         any(by_capacity) AS by_capacity_, any(sla_kind) AS sla_kind_,
         if(by_capacity_, avgIf(r_capacity, kind = 'capacity' AND r_capacity > 0 AND r_floor = 0),
            avgIf(r_orders_per_s, kind = 'drain')) AS orders_per_s,
         if(by_capacity_, minIf(r_capacity, kind = 'capacity' AND r_capacity > 0 AND r_floor = 0),
            minIf(r_orders_per_s, kind = 'drain')) AS orders_per_s_min,
         if(by_capacity_, maxIf(r_capacity, kind = 'capacity' AND r_capacity > 0 AND r_floor = 0),
            maxIf(r_orders_per_s, kind = 'drain')) AS orders_per_s_max,
         if(by_capacity_, groupArrayIf(r_capacity, kind = 'capacity' AND r_capacity > 0 AND r_floor = 0),
            groupArrayIf(r_orders_per_s, kind = 'drain' AND r_orders_per_s > 0)) AS orders_per_s_runs,
         avgIf(r_orders_per_s, kind = 'drain') AS drain_orders_per_s,
         maxIf(r_accept_p99, kind = 'capacity' AND r_accept_p99 > 0) AS accept_p99_at_capacity,
         maxIf(r_visible_p99, kind = 'capacity' AND r_visible_p99 > 0) AS visible_p99_at_capacity,
         -- how long the measured orders took to drain: under a minute it is a transient, not a steady state
         avgIf(r_orders / r_orders_per_s, kind = 'drain' AND r_orders_per_s > 0) AS drain_seconds,
         groupArrayIf(r_pnl_per_s, kind = 'pnl' AND r_pnl_per_s > 0) AS pnl_per_s_runs,
         -- a left join's unmatched row carries defaults, not NULLs: the idle figure exists where its run id does
         avgIf(r_idle_cores, kind IN ('drain', 'capacity') AND r_idle_run != '') AS idle_cpu_cores,
         avgIf(r_pnl_per_s, kind = 'pnl') AS pnl_per_s,
         minIf(r_pnl_per_s, kind = 'pnl') AS pnl_per_s_min,
         maxIf(r_pnl_per_s, kind = 'pnl') AS pnl_per_s_max,
         avgIf(if(empty(ifNull(r_revalued_run, '')), r_pnl_during, r_revalued), kind = 'drain') AS pnl_during_drain_per_s,
         avgIf(r_client_cores, kind = sla_kind AND r_client_cores > 0) AS http_client_cpu_cores,
         -- a run that never broke gives a floor: C_SLA is the mean of the runs that broke; only when none did
         -- is the step's figure the (highest) floor, flagged so
         countIf(kind = sla_kind AND r_c_sla > 0 AND r_floor = 0) = 0 AND countIf(kind = sla_kind AND r_floor > 0) > 0
           AS c_sla_floor,
         if(c_sla_floor, maxIf(r_c_sla, kind = sla_kind AND r_c_sla > 0),
            avgIf(r_c_sla, kind = sla_kind AND r_c_sla > 0 AND r_floor = 0)) AS c_sla,
         if(c_sla_floor, nan, minIf(r_c_sla, kind = sla_kind AND r_c_sla > 0 AND r_floor = 0)) AS c_sla_min,
         if(c_sla_floor, nan, maxIf(r_c_sla, kind = sla_kind AND r_c_sla > 0 AND r_floor = 0)) AS c_sla_max,
         avgIf(r_c_sla, kind = 'locust') AS locust_c_sla,
         maxIf(r_floor, kind = 'locust') AS locust_c_sla_floor,
         greatest(countIf(kind = 'drain'), countIf(kind = 'capacity')) AS repeats,
         -- a capacity run's own average includes its settles: its busiest rung is what the quota allowed
         max(greatest(r_cpu_cores, r_rung_cores)) AS max_cpu_cores
  FROM runs_kinds GROUP BY step)
SELECT step, step_name, vcpus, memory_gb, stream_threads, pnl_parallelism, streams_instances, taskmanagers,
       connect_tasks, topic_partitions, kafka_brokers, repeats, round(usd_hour, 6) AS usd_hour,
       if(by_capacity_, 'capacity', 'drain') AS figure, round(drain_orders_per_s, 3) AS drain_orders_per_s,
       round(accept_p99_at_capacity, 1) AS accept_p99_ms_at_capacity,
       round(visible_p99_at_capacity, 1) AS visible_p99_ms_at_capacity,
       sla_kind_ AS sla_kind, round(locust_c_sla, 3) AS locust_c_sla, locust_c_sla_floor > 0 AS locust_is_floor,
       round(orders_per_s, 3) AS orders_per_s, round(orders_per_s_min, 3) AS orders_per_s_min,
       round(orders_per_s_max, 3) AS orders_per_s_max, orders_per_s_runs, pnl_per_s_runs,
       round(idle_cpu_cores, 3) AS idle_cpu_cores, round(drain_seconds, 3) AS drain_seconds,
       round(pnl_per_s, 3) AS pnl_per_s, round(pnl_per_s_min, 3) AS pnl_per_s_min, round(pnl_per_s_max, 3) AS pnl_per_s_max,
       round(pnl_during_drain_per_s, 3) AS pnl_during_drain_per_s, round(http_client_cpu_cores, 3) AS http_client_cpu_cores,
       round(c_sla, 3) AS c_sla, round(c_sla_min, 3) AS c_sla_min, round(c_sla_max, 3) AS c_sla_max,
       c_sla_floor > 0 AS c_sla_is_floor,
       round(orders_per_s / usd_hour, 3) AS orders_per_s_per_usd_hour,
       round(pnl_per_s / usd_hour, 3) AS pnl_per_s_per_usd_hour,
       round(if(orders_per_s > 0, usd_hour / (orders_per_s * 3600) * 1e6, nan), 6) AS usd_per_million_orders,
       -- (cost/h / C_SLA) * 1000 / (1 - h), C_SLA in requests per hour
       round(if(c_sla > 0, (usd_hour / (c_sla * 3600)) * 1000 / (1 - {headroom}), nan), 12) AS usd_per_1000_requests_at_sla,
       round((orders_per_s / usd_hour)
             / nullIf(lagInFrame(orders_per_s / usd_hour) OVER (ORDER BY step ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), 0), 6)
         AS scalability_vs_previous,
       round(max_cpu_cores, 3) AS max_cpu_cores
FROM per_step ORDER BY step;

-- name: experiment_shapes
-- purpose: the stack shapes scaling experiments of the streams system ran on (topic partitions, Kafka brokers), latest first
SELECT topic_partitions, kafka_brokers, argMax(experiment_id, started) AS latest_experiment, max(started) AS latest
FROM experiment_runs FINAL
WHERE architecture != 'baseline' AND topic_partitions > 0
GROUP BY topic_partitions, kafka_brokers ORDER BY latest DESC;
