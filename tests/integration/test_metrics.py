"""Every Prometheus endpoint of the running stack serves the series docs/operations.md names, and the
Grafana dashboard reads only series some endpoint serves."""

from __future__ import annotations

import json
import re
import time

from brokerstream.clients.prometheus import scrape
from brokerstream.common.config import ROOT
from brokerstream.launcher.provision import default_stack
from brokerstream.metrics.scrape import targets
from brokerstream.ops import reconcile

DASHBOARD = ROOT / "platform" / "metrics" / "grafana" / "brokerstream.json"

# What each kind of service must serve (the JMX exporter and the Prometheus client give process_cpu_seconds_total).
NAMED = {
    "streams": {
        "brokerstream_gateway_responses_total",
        "brokerstream_gateway_accept_seconds_bucket",
        "brokerstream_order_results_total",
        "brokerstream_order_visible_seconds_bucket",
        "kafka_consumer_fetch_manager_records_lag_max",
        "kafka_stream_thread_process_rate",
        "process_cpu_seconds_total",
    },
    "kafka": {"kafka_requests_total", "kafka_topic_messages_in_total", "process_cpu_seconds_total"},
    "connect": {
        "kafka_connect_sink_records_sent_total",
        "kafka_connect_source_records_written_total",
        "kafka_connect_task_running_ratio",
        "kafka_consumer_fetch_manager_records_lag_max",
        "brokerstream_sink_waiting_seconds",
        "brokerstream_sink_retries_total",
        "process_cpu_seconds_total",
    },
    "flink-jobmanager": {"flink_job_completed_checkpoints", "process_cpu_seconds_total"},
    "flink-taskmanager": {
        "flink_task_records_in_total",
        "kafka_consumer_fetch_manager_records_lag_max",
        "process_cpu_seconds_total",
    },
    "registry": {"process_cpu_time_ns_total"},  # Micrometer's name
}


def series_of(expr: str) -> set[str]:
    """The series a PromQL expression reads: names not called as functions, outside label lists."""
    expr = re.sub(r"\bby \([^)]*\)", "", expr)
    expr = re.sub(r"\{[^}]*\}|\[[^\]]*\]", "", expr)
    return set(re.findall(r"\b([a-z_][a-z0-9_]*)\b(?!\s*\()", expr))


def textfile_series(tmp_path) -> set[str]:
    """The series `./brokerstream reconcile` writes, read from what it writes."""
    text = reconcile.write_textfile(None, reconcile.Report(), tmp_path / "reconcile.prom").read_text()
    return {line.split("{")[0].split()[0] for line in text.splitlines() if line and not line.startswith("#")}


def test_series_of_reads_names_not_functions_or_labels():
    assert series_of('sum by (le) (rate(x_bucket{a="b"}[1m]))') == {"x_bucket"}
    assert series_of("1e6 * sum(rate(a_total[1m])) / sum(rate(b_total[1m]))") == {"a_total", "b_total"}
    assert series_of("max by (client_id) (lag_max)") == {"lag_max"}


def test_every_endpoint_serves_its_named_series_and_the_dashboard_reads_only_those(stack, world, gateway_for, tmp_path):
    member = world.members[0].member_id
    account = next(a for a in world.accounts if a.member_id == member and a.status == "ACTIVE")
    gw = gateway_for(member)
    result = gw.order(
        account_id=account.account_id, instrument_id=world.instruments[0].instrument_id, side="BUY", quantity=1
    )
    assert result["status"] in ("ACCEPTED", "REJECTED")
    assert gw.get("/orders/never-placed").status_code == 404

    services = {n: s for n, s in default_stack(stack).services.items() if not s.optional}
    endpoints = targets(services)
    assert set(NAMED) <= set(endpoints), set(NAMED) - set(endpoints)
    for urls in endpoints.values():
        assert all(u.startswith(f"http://{stack.bind}:") for u in urls), urls

    # a task's records and a checkpoint appear once the job has run a while: read until all are there
    deadline = time.monotonic() + 90
    while True:
        served = {job: {s.name for url in urls for s in scrape(url)} for job, urls in endpoints.items()}
        missing = {job: names - served[job] for job, names in NAMED.items() if names - served[job]}
        if not missing or time.monotonic() > deadline:
            break
        time.sleep(3)
    assert not missing, missing

    streams = scrape(endpoints["streams"][0])
    answered = {
        (s.labels["route"], s.labels["status"]) for s in streams if s.name == "brokerstream_gateway_responses_total"
    }
    assert ("ORDERS", "202") in answered and ("ORDER", "404") in answered, answered

    everything = set().union(*served.values())
    # series a dashboard panel reads that no endpoint serves until they have a value: a counter with labels
    # appears with its first dead letter; the reconcile's series are a file for a textfile collector
    everything |= {"brokerstream_dead_letters_total"} | textfile_series(tmp_path)
    dashboard = json.loads(DASHBOARD.read_text())
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            unserved = series_of(target["expr"]) - everything
            assert not unserved, f"{panel['title']}: {unserved}"
