"""The real stack for integration tests: its own ports (29xxx) and data folder (.data-test/).

The session starts it with the project's own launcher and stops it at the end, by pid file.
BS_TEST_KEEP_STACK=1 reuses a running test stack and leaves it running (for quick iterations).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from brokerstream import config

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = str(ROOT / "brokerstream")
PORT_SHIFT = 10000  # the default ports are 19xxx; tests use 29xxx


def test_environ() -> dict[str, str]:
    env = dict(os.environ)
    for key, value in config.parse_env_file(config.DEFAULTS_FILE).items():
        if key.endswith("_PORT"):
            env[key] = str(int(value) + PORT_SHIFT)
    env["BS_DATA_DIR"] = str(ROOT / ".data-test")
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
    keep = os.environ.get("BS_TEST_KEEP_STACK") == "1"
    if not keep:
        launcher(stack_env, "down")  # whatever an interrupted earlier run left behind
        shutil.rmtree(cfg.data_dir, ignore_errors=True)
    up = launcher(stack_env, "up", "--no-install")
    print(up.stdout)
    yield cfg
    if not keep:
        launcher(stack_env, "down")
