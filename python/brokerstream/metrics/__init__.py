"""Run metrics and cost analytics: the ClickHouse store, the collector that samples a run, the price
sheet, and the report."""
