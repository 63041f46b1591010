"""The install runs its Go builds beside the other steps, and still fails when one of them fails; the test tools
only when asked (the test command), never for the main job."""

from __future__ import annotations

import threading
import time

import pytest

from brokerstream.common.config import Config
from brokerstream.launcher import install


def _recording(monkeypatch, fail: str | None = None):
    ran: list[tuple[str, str]] = []

    def make(name: str, seconds: float = 0.0):
        def stepfn(cfg, layout):
            time.sleep(seconds)
            ran.append((name, threading.current_thread().name))
            if name == fail:
                raise RuntimeError(f"{name} failed")

        stepfn.__name__ = name
        return stepfn

    go = [make("helm", 0.3), make("kubevalidate")]
    rest = [make("maven"), make("java_build"), make("connect_sink_plugin")]
    monkeypatch.setattr(install, "java_build", rest[1])
    monkeypatch.setattr(install, "connect_sink_plugin", rest[2])
    monkeypatch.setattr(install, "STEPS", [rest[0], rest[1], rest[2], *go])
    monkeypatch.setattr(install, "BESIDE", tuple(go))
    monkeypatch.setattr(install, "TEST_TOOLS", tuple(go))
    monkeypatch.setattr(install, "Layout", lambda cfg: None)
    return ran


def test_go_builds_run_in_their_own_thread_while_the_others_run_in_order(monkeypatch):
    ran = _recording(monkeypatch)
    install.install(Config({}), test_tools=True)
    main = [n for n, t in ran if not t.startswith("install-go")]
    beside = [n for n, t in ran if t.startswith("install-go")]
    assert main == ["maven", "java_build", "connect_sink_plugin"]
    assert beside == ["helm", "kubevalidate"]
    # helm sleeps: the other steps finished before it, so they did not wait for it
    assert ran.index(("connect_sink_plugin", threading.main_thread().name)) < [n for n, _ in ran].index("helm")


def test_skip_java_leaves_out_our_own_build(monkeypatch):
    ran = _recording(monkeypatch)
    install.install(Config({}), skip_java=True, test_tools=True)
    assert sorted(n for n, _ in ran) == ["helm", "kubevalidate", "maven"]


def test_the_main_job_installs_no_test_tools(monkeypatch):
    ran = _recording(monkeypatch)
    install.install(Config({}))
    assert [n for n, _ in ran] == ["maven", "java_build", "connect_sink_plugin"]


@pytest.mark.parametrize("fail", ["helm", "maven"])
def test_a_failing_step_on_either_side_fails_the_install(monkeypatch, fail):
    ran = _recording(monkeypatch, fail=fail)
    with pytest.raises(RuntimeError, match=f"{fail} failed"):
        install.install(Config({}), test_tools=True)
    assert "helm" in [n for n, _ in ran]  # the Go build was waited for, not left running
