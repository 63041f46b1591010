"""The stack's Prometheus endpoints: which service serves where, and a scrape configuration for them."""

from __future__ import annotations


def targets(services) -> dict[str, list[str]]:
    """The Prometheus endpoint of every service that has one, by job: the service's kind (`kafka` for
    every Kafka node, `streams` for every instance), `services` being the launcher's services by name."""
    import re as _re

    out: dict[str, list[str]] = {}
    for name, service in services.items():
        url = service.metrics_url()
        if url:
            out.setdefault(_re.sub(r"-\d+$", "", name), []).append(url)
    return out


def prometheus_config(services, interval: str = "10s") -> str:
    """A Prometheus scrape configuration for these services (`./brokerstream metrics config`)."""
    import urllib.parse

    import yaml

    jobs = []
    for job, urls in sorted(targets(services).items()):
        parts = [urllib.parse.urlsplit(u) for u in urls]
        jobs.append(
            {
                "job_name": job,
                "metrics_path": parts[0].path,
                "static_configs": [{"targets": [p.netloc for p in parts]}],
            }
        )
    head = (
        "# Prometheus scrape configuration of the native stack, rendered by `./brokerstream metrics config`\n"
        "# from platform/stack.env; platform/metrics/prometheus.yml is this for the default settings (`--optional`).\n"
    )
    return head + yaml.safe_dump({"global": {"scrape_interval": interval}, "scrape_configs": jobs}, sort_keys=False)
