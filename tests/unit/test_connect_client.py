"""The Connect REST client rides out a worker that is rejoining its group, and only that."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from brokerstream.clients.connectors import Connect, ConnectorError, ConnectorSpec, apply, wait_running
from brokerstream.common import config


class Worker:
    """A local HTTP server that answers from a script: each entry is (delay_s, status, body)."""

    def __init__(self, script):
        self.script = list(script)
        self.seen = []
        worker = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                worker.seen.append((self.command, self.path, self.rfile.read(length)))
                delay, status, body = worker.script.pop(0) if len(worker.script) > 1 else worker.script[0]
                time.sleep(delay)
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_PUT = do_POST = _answer

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


SPEC = ConnectorSpec("c1", {"connector.class": "x"}, None)
REBALANCING = (0, 409, {"error_code": 409, "message": "Cannot complete request because of a conflicting operation"})


def test_a_rebalancing_worker_is_asked_again_until_it_takes_the_config():
    with Worker([REBALANCING, REBALANCING, (0, 200, {"name": "c1"})]) as w:
        Connect(w.url, timeout=2, patience=10).put_config(SPEC)
        assert [m for m, _, _ in w.seen] == ["PUT", "PUT", "PUT"]
        assert all(json.loads(body) == SPEC.config for _, _, body in w.seen)


def test_a_hanging_worker_is_asked_again_after_the_read_timeout():
    with Worker([(1.5, 200, {}), (0, 200, {"name": "c1"})]) as w:
        Connect(w.url, timeout=0.5, patience=10).put_config(SPEC)
        assert len(w.seen) == 2


def test_without_patience_the_first_answer_counts():
    with Worker([REBALANCING]) as w:
        with pytest.raises(ConnectorError, match="409"):
            Connect(w.url, timeout=2).put_config(SPEC)
        assert len(w.seen) == 1


def test_patience_ends_with_the_last_answer_or_error():
    with Worker([REBALANCING]) as w:
        started = time.monotonic()
        with pytest.raises(ConnectorError, match="409"):
            Connect(w.url, timeout=2, patience=1.5).put_config(SPEC)
        assert 1.4 < time.monotonic() - started < 8
        assert len(w.seen) >= 2
    with Worker([(3, 200, {})]) as w:
        with pytest.raises(requests.Timeout):
            Connect(w.url, timeout=0.3, patience=1).put_config(SPEC)


def test_a_wrong_request_is_not_retried():
    with Worker([(0, 400, {"error_code": 400, "message": "Connector configuration is invalid"})]) as w:
        with pytest.raises(ConnectorError, match="400"):
            Connect(w.url, timeout=2, patience=10).put_config(SPEC)
        assert len(w.seen) == 1


def status(*task_states):
    return (
        0,
        200,
        {"connector": {"state": "RUNNING"}, "tasks": [{"id": i, "state": s} for i, s in enumerate(task_states)]},
    )


def test_applying_fewer_tasks_waits_until_the_worker_has_stopped_the_others():
    # the worker answers the PUT of tasks.max 1 and goes on listing its two running tasks until it rebalances
    script = [(0, 200, []), (0, 200, {"name": "c1"}), status("RUNNING", "RUNNING"), status("RUNNING", "RUNNING")]
    with Worker([*script, status("RUNNING")]) as w:
        cfg = config.load(environ={"BS_CONNECT_URL": w.url})
        apply(cfg, [ConnectorSpec("c1", {"connector.class": "x", "tasks.max": "1"}, None)], timeout=10, patience=0)
        assert [m for m, _, _ in w.seen] == ["GET", "PUT", "GET", "GET", "GET"]


def test_a_connector_short_of_its_tasks_is_not_running_yet():
    with Worker([status("RUNNING")]) as w:
        connect = Connect(w.url, timeout=2)
        wait_running(connect, ["c1"], timeout=5, tasks_wanted={"c1": 1})
        with pytest.raises(ConnectorError, match="c1: 1 tasks, 2 configured"):
            wait_running(connect, ["c1"], timeout=1, tasks_wanted={"c1": 2})
