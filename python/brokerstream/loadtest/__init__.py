"""Load runs: Locust against the gateway, or the prefill-and-drain experiment, with run metrics."""
