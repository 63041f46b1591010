"""The real stack for integration tests: its own ports (29xxx) and data folder (.data-test/).

The session starts it with the project's own launcher and stops it at the end, by pid file.
BS_TEST_KEEP_STACK=1 reuses a running test stack and leaves it running (for quick iterations).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import shutil
import subprocess
import time as _time
from pathlib import Path

import pytest
import requests as _requests

from brokerstream.common import config

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = str(ROOT / "brokerstream")
PORT_SHIFT = 10000  # the default ports are 19xxx; tests use 29xxx


def shifted_environ(shift: int, data_dir: str) -> dict[str, str]:
    """This process' environment with every port of stack.env moved by `shift` and its own data folder."""
    env = dict(os.environ)
    for key, value in config.parse_env_file(config.DEFAULTS_FILE).items():
        if key.endswith("_PORT"):
            env[key] = str(int(value) + shift)
    env["BS_DATA_DIR"] = str(ROOT / data_dir)
    return env


@contextlib.contextmanager
def running_stack(env: dict[str, str], *services: str):
    """A test stack started from nothing with the project's launcher and stopped by its pid files at
    the end, also when `up` failed halfway. BS_TEST_KEEP_STACK=1 reuses a running one and leaves it."""
    cfg = config.load(environ=env)
    keep = os.environ.get("BS_TEST_KEEP_STACK") == "1"
    if not keep:
        launcher(env, "down")  # whatever an interrupted earlier run left behind
        shutil.rmtree(cfg.data_dir, ignore_errors=True)
    try:
        print(launcher(env, "up", "--no-install", *services).stdout)
        yield cfg
    finally:
        if not keep:
            launcher(env, "down")


def test_environ() -> dict[str, str]:
    env = shifted_environ(PORT_SHIFT, ".data-test")
    # a cap small enough for a test to reach (the default is 2000 waiting polls per member)
    env.setdefault("BROKER_GATEWAY_MAX_WAITING_POLLS_PER_MEMBER", "40")
    # the session opens its prices once and trades on them for longer than the 15 minutes an order may fill
    # at a price; the bound's own tests stamp their ticks older than this
    env.setdefault("BROKER_ORDERS_MAX_PRICE_AGE_MS", "3600000")
    env.setdefault("BASELINE_ORDERS_MAX_PRICE_AGE_MS", "3600000")
    return env


def launcher(env: dict[str, str], *args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run([LAUNCHER, *args], env=env, text=True, capture_output=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"./brokerstream {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="session")
def stack_env() -> dict[str, str]:
    return test_environ()


@pytest.fixture(scope="session")
def cfg(stack_env) -> config.Config:
    return config.load(environ=stack_env)


@pytest.fixture(scope="session")
def stack(stack_env, cfg):
    with running_stack(stack_env) as running:
        yield running


def live_services(cfg: config.Config) -> set[str]:
    """The processes of the stack that run now, by their pid files."""
    from brokerstream.launcher.procs import PidFile

    return {p.stem for p in cfg.run_dir.glob("*.pid") if PidFile(p).live_pid()}


def death_report(cfg: config.Config, service: str) -> str:
    """The errors a service logged and its last lines: what a failed test should show of a death."""
    from brokerstream.launcher.stack import log_tail

    log = cfg.log_dir / f"{service}.log"
    try:
        text = log.read_text(errors="replace").splitlines()
    except OSError:
        text = []
    errors = [line for line in text if " ERROR " in line or "Exception" in line or "Error:" in line][-15:]
    return "\n".join(["errors:", *errors, "last lines:", log_tail(log, 40)])


@pytest.fixture(autouse=True)
def the_stack_outlives_each_test(request):
    """A process of the shared stack that dies during a test fails that test, with the end of its log,
    and is started again: the tests after it then run on a whole stack instead of each failing for it."""
    if "stack" not in request.fixturenames:
        yield
        return
    stack_cfg = request.getfixturevalue("stack")
    before = live_services(stack_cfg)
    yield
    dead = sorted(before - live_services(stack_cfg))
    if not dead:
        return
    report = "\n\n".join(f"--- {name} ---\n{death_report(stack_cfg, name)}" for name in dead)
    restarted = launcher(request.getfixturevalue("stack_env"), "up", "--no-install", *dead, check=False)
    pytest.fail(
        f"{', '.join(dead)} died during this test (started again: exit {restarted.returncode})\n{report}",
        pytrace=False,
    )


# --- the order flow's world: reference data in Postgres (Debezium carries it), opening prices --------

REFDATA_SEED = 42


class GatewayClient:
    """The HTTP gateway as a member sees it."""

    def __init__(self, url: str, api_key: str | None):
        self.url = url.rstrip("/")
        self.http = _requests.Session()
        if api_key:
            self.http.headers["X-Api-Key"] = api_key

    def post(self, path: str, body) -> _requests.Response:
        return self.http.post(self.url + path, json=body, timeout=30)

    def get(self, path: str, **params) -> _requests.Response:
        return self.http.get(self.url + path, params=params, timeout=40)

    def order(self, **fields) -> dict:
        resp = self.post("/orders", fields)
        assert resp.status_code == 202, resp.text
        order_id = resp.json()["order_id"]
        deadline = _time.monotonic() + 60
        # 503 + Retry-After: the flow is rebalancing (another test's instance came or went); a client asks again
        while (result := self.get(f"/orders/{order_id}", wait_ms=10000)).status_code == 503:
            assert _time.monotonic() < deadline, result.text
            _time.sleep(1)
        assert result.status_code == 200, result.text
        return result.json()


def load_world(cfg: config.Config):
    """Tiny reference data loaded and visible to the order flow, every equity with an opening price."""
    from brokerstream.gen import pgload, refdata
    from brokerstream.loadtest.bench.drain import open_prices

    data = refdata.generate("tiny", REFDATA_SEED, _dt.datetime.now(_dt.timezone.utc).date())
    pgload.load(cfg, data, replace=True, progress=lambda _: None)
    open_prices(cfg, data, 5)
    # Wait until Debezium has carried the data to the flow and the opening prices are folded in.
    member = data.members[0].member_id
    account = next(a for a in data.accounts if a.member_id == member and a.status == "ACTIVE")
    gw = GatewayClient(cfg.gateway_url, refdata.api_key(REFDATA_SEED, member))
    deadline = _time.monotonic() + 60
    while True:
        resp = gw.post(
            "/orders",
            {
                "account_id": account.account_id,
                "instrument_id": data.instruments[0].instrument_id,
                "side": "BUY",
                "quantity": 1,
            },
        )
        if resp.status_code == 202:
            result = gw.get(f"/orders/{resp.json()['order_id']}", wait_ms=5000)
            if result.status_code == 200 and result.json()["status"] == "ACCEPTED":
                break
        assert _time.monotonic() < deadline, f"the flow never accepted an order: {resp.status_code} {resp.text}"
        _time.sleep(1)
    return data


def gateway_factory(cfg: config.Config):
    from brokerstream.gen.refdata import api_key

    def make(member_id: str | None, url: str | None = None) -> GatewayClient:
        return GatewayClient(url or cfg.gateway_url, api_key(REFDATA_SEED, member_id) if member_id else None)

    return make


@pytest.fixture(scope="session")
def world(stack):
    return load_world(stack)


@pytest.fixture(scope="session")
def gateway_for(stack, world):
    return gateway_factory(stack)
