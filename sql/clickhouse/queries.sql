-- The cost-efficiency queries. Each starts with `-- name:` and a one-line purpose; `./brokerstream report`
-- runs them. {headroom} and {value_per_response} are numbers the report passes in.
-- run_prices (price per hour of each run) and run_rates (its throughputs) are views of 001_tables.sql.

-- name: throughput_per_dollar
-- purpose: per run, orders/s and P&L calculations/s per dollar-hour, and the cost of a million orders
SELECT p.run_id AS run_id, p.scale_step AS scale_step, p.kind AS kind, round(p.usd_hour, 6) AS usd_hour,
       round(q.orders_per_s, 3) AS orders_per_s, round(q.pnl_per_s, 3) AS pnl_per_s,
       round(q.orders_per_s / p.usd_hour, 3) AS orders_per_s_per_usd_hour,
       round(q.pnl_per_s / p.usd_hour, 3) AS pnl_per_s_per_usd_hour,
       round(if(q.orders_per_s > 0, p.usd_hour / (q.orders_per_s * 3600) * 1e6, nan), 6) AS usd_per_million_orders
FROM run_prices AS p INNER JOIN run_rates AS q ON q.run_id = p.run_id
ORDER BY p.started;

-- name: cost_curve
-- purpose: performance against cost across scale steps, with the gain over the first step in percent
WITH steps AS (
  SELECT p.scale_step AS scale_step, avg(p.usd_hour) AS usd_hour, avg(q.orders_per_s) AS orders_per_s
  FROM run_prices AS p INNER JOIN run_rates AS q ON q.run_id = p.run_id
  GROUP BY p.scale_step)
SELECT scale_step, round(usd_hour, 6) AS usd_hour, round(orders_per_s, 3) AS orders_per_s,
       round(orders_per_s / usd_hour, 3) AS orders_per_s_per_usd_hour,
       round((orders_per_s / first_value(orders_per_s) OVER (ORDER BY scale_step) - 1) * 100, 3) AS throughput_gain_pct,
       round(((orders_per_s / usd_hour) / first_value(orders_per_s / usd_hour) OVER (ORDER BY scale_step) - 1) * 100, 3)
         AS per_dollar_gain_pct
FROM steps ORDER BY scale_step;

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
-- purpose: F = throughput x value per response / cost per second per step, and scalability F(k) / F(k-1)
WITH f AS (
  SELECT p.scale_step AS scale_step,
         avg(q.orders_per_s) * {value_per_response} / (avg(p.usd_hour) / 3600) AS productivity
  FROM run_prices AS p INNER JOIN run_rates AS q ON q.run_id = p.run_id
  GROUP BY p.scale_step)
SELECT scale_step, round(productivity, 3) AS productivity,
       round(productivity / nullIf(lagInFrame(productivity) OVER (ORDER BY scale_step ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), 0), 6)
         AS scalability_vs_previous
FROM f ORDER BY scale_step;

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
-- purpose: the latest scaling experiment per step: orders/s (drain), positions revalued/s (P&L runs) against cost, C_SLA, spread over repeats, scalability F(k)/F(k-1); {baseline} 1 takes the latest of the baseline monolith, 0 of the streams system
WITH runs_of AS (
  SELECT e.step AS step, e.step_name AS step_name, e.kind AS kind, e.vcpus AS vcpus, e.memory_gb AS memory_gb,
         e.orders AS r_orders,
         e.stream_threads AS r_threads, e.pnl_parallelism AS r_parallelism,
         p.usd_hour AS r_usd_hour, c.stack_cpu_cores AS r_cpu_cores,
         d.value AS r_orders_per_s, q.pnl_per_s AS r_pnl_during, pv.value AS r_pnl_per_s, s.value AS r_c_sla,
         cc.value AS r_client_cores, fl.value AS r_floor, rv.value AS r_revalued,
         rv.run_id AS r_revalued_run, idl.value AS r_idle_cores,
         idl.run_id AS r_idle_run
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
  WHERE e.experiment_id = (SELECT argMax(experiment_id, started) FROM experiment_runs FINAL
                           WHERE (architecture = 'baseline') = {baseline})),
per_step AS (
  SELECT step, any(step_name) AS step_name, any(vcpus) AS vcpus, any(memory_gb) AS memory_gb,
         any(r_threads) AS stream_threads, any(r_parallelism) AS pnl_parallelism,
         avg(r_usd_hour) AS usd_hour,
         avgIf(r_orders_per_s, kind = 'drain') AS orders_per_s,
         minIf(r_orders_per_s, kind = 'drain') AS orders_per_s_min,
         maxIf(r_orders_per_s, kind = 'drain') AS orders_per_s_max,
         groupArrayIf(r_orders_per_s, kind = 'drain' AND r_orders_per_s > 0) AS orders_per_s_runs,
         -- how long the measured orders took to drain: under a minute it is a transient, not a steady state
         avgIf(r_orders / r_orders_per_s, kind = 'drain' AND r_orders_per_s > 0) AS drain_seconds,
         groupArrayIf(r_pnl_per_s, kind = 'pnl' AND r_pnl_per_s > 0) AS pnl_per_s_runs,
         -- a left join's unmatched row carries defaults, not NULLs: the idle figure exists where its run id does
         avgIf(r_idle_cores, kind = 'drain' AND r_idle_run != '') AS idle_cpu_cores,
         avgIf(r_pnl_per_s, kind = 'pnl') AS pnl_per_s,
         minIf(r_pnl_per_s, kind = 'pnl') AS pnl_per_s_min,
         maxIf(r_pnl_per_s, kind = 'pnl') AS pnl_per_s_max,
         avgIf(if(empty(ifNull(r_revalued_run, '')), r_pnl_during, r_revalued), kind = 'drain') AS pnl_during_drain_per_s,
         avgIf(r_client_cores, kind = 'http') AS http_client_cpu_cores,
         maxIf(r_floor, kind = 'http') AS c_sla_floor,
         avgIf(r_c_sla, kind = 'http') AS c_sla,
         minIf(r_c_sla, kind = 'http') AS c_sla_min,
         maxIf(r_c_sla, kind = 'http') AS c_sla_max,
         countIf(kind = 'drain') AS repeats,
         max(r_cpu_cores) AS max_cpu_cores
  FROM runs_of GROUP BY step)
SELECT step, step_name, vcpus, memory_gb, stream_threads, pnl_parallelism, repeats, round(usd_hour, 6) AS usd_hour,
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
