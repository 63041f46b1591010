import signal
import socket
import subprocess
import sys
import time

from brokerstream.launcher.procs import PidFile, listening_sockets, spawn, terminate


def test_spawn_records_a_pid_that_terminate_stops(tmp_path):
    pidfile = PidFile(tmp_path / "sleeper.pid")
    pid = spawn([sys.executable, "-c", "import time; time.sleep(60)"], log=tmp_path / "log", pidfile=pidfile)
    assert pidfile.live_pid() == pid
    assert terminate(pidfile, grace=5) == "stopped"
    assert pidfile.live_pid() is None and not pidfile.path.exists()


def test_a_process_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path):
    pidfile = PidFile(tmp_path / "stubborn.pid")
    code = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('arm' + 'ed', flush=True); "
        "time.sleep(60)"
    )
    spawn([sys.executable, "-c", code], log=tmp_path / "log", pidfile=pidfile)
    deadline = time.monotonic() + 10
    while "armed" not in (tmp_path / "log").read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert terminate(pidfile, sig=signal.SIGTERM, grace=0.5) == "killed"


def test_a_recycled_pid_is_not_mistaken_for_the_service(tmp_path):
    pidfile = PidFile(tmp_path / "other.pid")
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        # The pid is alive, but it is not the process we started: its start time differs.
        pidfile.path.write_text(f'{{"pid": {other.pid}, "start": 1}}')
        assert pidfile.live_pid() is None
        assert terminate(pidfile) == "not running"
        assert other.poll() is None, "terminate must not signal a process it did not start"
    finally:
        other.kill()
        other.wait()


def test_listening_sockets_reports_address_and_port(tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    try:
        import os

        assert ("127.0.0.1", server.getsockname()[1]) in listening_sockets(os.getpid())
    finally:
        server.close()
