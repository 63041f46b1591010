-- The cost-efficiency queries. Each starts with `-- name:` and a one-line purpose; `./brokerstream report`
-- runs them. {headroom} and {value_per_response} are numbers the report passes in.
-- A run's price per hour: its instance type's, else vCPUs and memory at the unit prices.
-- A run's throughput: the change of a cumulative stage count over the sampled span.

-- name: throughput_per_dollar
-- purpose: per run, orders/s and P&L calculations/s per dollar-hour, and the cost of a million orders
WITH
  (SELECT any(usd) FROM unit_prices FINAL WHERE resource = 'vcpu_hour') AS vcpu_price,
  (SELECT any(usd) FROM unit_prices FINAL WHERE resource = 'gb_hour') AS gb_price,
  rates AS (
    SELECT run_id,
           sumIf(per_s, stage IN ('orders_accepted', 'orders_rejected')) AS orders_per_s,
           sumIf(per_s, stage = 'pnl_calculations') AS pnl_per_s
    FROM (SELECT run_id, stage,
                 (max(total) - min(total)) / greatest(dateDiff('millisecond', min(ts), max(ts)) / 1000, 0.001) AS per_s
          FROM stage_samples GROUP BY run_id, stage)
    GROUP BY run_id),
  priced AS (
    SELECT r.run_id AS run_id, r.scale_step AS scale_step, r.kind AS kind, r.started AS started,
           if(it.usd_hour > 0, it.usd_hour, r.vcpus * vcpu_price + r.memory_gb * gb_price) AS usd_hour
    FROM runs AS r FINAL LEFT JOIN instance_types AS it FINAL ON it.name = r.instance_type)
SELECT p.run_id AS run_id, p.scale_step AS scale_step, p.kind AS kind, round(p.usd_hour, 6) AS usd_hour,
       round(q.orders_per_s, 3) AS orders_per_s, round(q.pnl_per_s, 3) AS pnl_per_s,
       round(q.orders_per_s / p.usd_hour, 3) AS orders_per_s_per_usd_hour,
       round(q.pnl_per_s / p.usd_hour, 3) AS pnl_per_s_per_usd_hour,
       round(if(q.orders_per_s > 0, p.usd_hour / (q.orders_per_s * 3600) * 1e6, nan), 6) AS usd_per_million_orders
FROM priced AS p INNER JOIN rates AS q ON q.run_id = p.run_id
ORDER BY p.started;

-- name: cost_curve
-- purpose: performance against cost across scale steps, with the gain over the first step in percent
WITH
  (SELECT any(usd) FROM unit_prices FINAL WHERE resource = 'vcpu_hour') AS vcpu_price,
  (SELECT any(usd) FROM unit_prices FINAL WHERE resource = 'gb_hour') AS gb_price,
  steps AS (
    SELECT r.scale_step AS scale_step,
           avg(if(it.usd_hour > 0, it.usd_hour, r.vcpus * vcpu_price + r.memory_gb * gb_price)) AS usd_hour,
           avg(s.orders_per_s) AS orders_per_s
    FROM runs AS r FINAL
    LEFT JOIN instance_types AS it FINAL ON it.name = r.instance_type
    INNER JOIN (SELECT run_id, sum(per_s) AS orders_per_s
                FROM (SELECT run_id, stage, (max(total) - min(total))
                             / greatest(dateDiff('millisecond', min(ts), max(ts)) / 1000, 0.001) AS per_s
                      FROM stage_samples WHERE stage IN ('orders_accepted', 'orders_rejected')
                      GROUP BY run_id, stage)
                GROUP BY run_id) AS s ON s.run_id = r.run_id
    GROUP BY r.scale_step)
SELECT scale_step, round(usd_hour, 6) AS usd_hour, round(orders_per_s, 3) AS orders_per_s,
       round(orders_per_s / usd_hour, 3) AS orders_per_s_per_usd_hour,
       round((orders_per_s / first_value(orders_per_s) OVER (ORDER BY scale_step) - 1) * 100, 3) AS throughput_gain_pct,
       round(((orders_per_s / usd_hour) / first_value(orders_per_s / usd_hour) OVER (ORDER BY scale_step) - 1) * 100, 3)
         AS per_dollar_gain_pct
FROM steps ORDER BY scale_step;

-- name: cost_per_1000_at_sla
-- purpose: cost of 1,000 requests at the SLA rate C_SLA (req/s, from a breaking-point run) with headroom h
WITH
  (SELECT any(usd) FROM unit_prices FINAL WHERE resource = 'vcpu_hour') AS vcpu_price,
  (SELECT any(usd) FROM unit_prices FINAL WHERE resource = 'gb_hour') AS gb_price
SELECT r.run_id AS run_id, r.scale_step AS scale_step, res.value AS c_sla_per_s,
       round(if(it.usd_hour > 0, it.usd_hour, r.vcpus * vcpu_price + r.memory_gb * gb_price), 6) AS usd_hour,
       -- (cost/h / C_SLA) * 1000 / (1 - h), with C_SLA in requests per hour
       round((usd_hour / (res.value * 3600)) * 1000 / (1 - {headroom}), 12) AS usd_per_1000_requests
FROM runs AS r FINAL
LEFT JOIN instance_types AS it FINAL ON it.name = r.instance_type
INNER JOIN (SELECT run_id, name, value FROM run_results FINAL) AS res ON res.run_id = r.run_id AND res.name = 'c_sla'
WHERE res.value > 0
ORDER BY r.started;

-- name: productivity
-- purpose: F = throughput x value per response / cost per second per step, and scalability F(k) / F(k-1)
WITH
  (SELECT any(usd) FROM unit_prices FINAL WHERE resource = 'vcpu_hour') AS vcpu_price,
  (SELECT any(usd) FROM unit_prices FINAL WHERE resource = 'gb_hour') AS gb_price,
  steps AS (
    SELECT r.scale_step AS scale_step,
           avg(if(it.usd_hour > 0, it.usd_hour, r.vcpus * vcpu_price + r.memory_gb * gb_price)) AS usd_hour,
           avg(s.orders_per_s) AS orders_per_s
    FROM runs AS r FINAL
    LEFT JOIN instance_types AS it FINAL ON it.name = r.instance_type
    INNER JOIN (SELECT run_id, sum(per_s) AS orders_per_s
                FROM (SELECT run_id, stage, (max(total) - min(total))
                             / greatest(dateDiff('millisecond', min(ts), max(ts)) / 1000, 0.001) AS per_s
                      FROM stage_samples WHERE stage IN ('orders_accepted', 'orders_rejected')
                      GROUP BY run_id, stage)
                GROUP BY run_id) AS s ON s.run_id = r.run_id
    GROUP BY r.scale_step),
  f AS (SELECT scale_step, orders_per_s * {value_per_response} / (usd_hour / 3600) AS productivity FROM steps)
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
