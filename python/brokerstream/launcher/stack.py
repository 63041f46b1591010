"""up / down / status of the native stack.

`up` starts every service whose dependencies are healthy, in parallel where it can, waits on each
service's real health check and prints one line per service with its time to ready. It is idempotent:
a healthy service is left alone; a dead one (kill -9) is started again, also one still exiting when
`up` looks. `down` stops only processes whose pid files it wrote, dependents first, gracefully and
then forcefully.
"""

from __future__ import annotations

import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from brokerstream.common.config import Config
from brokerstream.common.progress import say
from brokerstream.launcher.cpugroups import CpuGroups
from brokerstream.launcher.layout import Layout
from brokerstream.launcher.procs import PidFile, listening_sockets, rss_bytes, spawn, terminate
from brokerstream.launcher.services import SCALED, Service, all_services, live_extras
from brokerstream.launcher.services.external import External

TAG = "up"


@dataclass
class Outcome:
    ok: bool
    message: str


@dataclass
class Provisioner:
    """Work after the services are healthy (topics, schemas, connectors, jobs); idempotent."""

    name: str
    needs: tuple[str, ...]
    run: Callable[[Config], str]
    phase: int = 1  # 1: before our apps start (they need it), 2: after


@dataclass
class Stack:
    cfg: Config
    services: dict[str, Service] = field(init=False)
    provisioners: list[Provisioner] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.layout = Layout(self.cfg)
        self.services = all_services(self.cfg)
        self.configured = set(self.services)
        # instances beyond the configured count that still run: `down` and `status` see them, `up` never starts them
        self.services.update({s.name: s for s in live_extras(self.cfg, self.layout)})
        self.cpu = CpuGroups.of(self.cfg)

    # --- dependency order ----------------------------------------------------------------------------
    def closure(self, names: Iterable[str] | None) -> list[str]:
        """The named services and everything they need, in start order; all but the optional ones
        when none are named."""
        # None: the whole stack; an empty list names nothing (a computed list that came out empty)
        wanted = (
            [n for n, s in self.services.items() if not s.optional and n in self.configured]
            if names is None
            else self.expand(names, configured_only=True)
        )
        unknown = [n for n in wanted if n not in self.configured]
        if unknown:
            raise KeyError(f"unknown services {unknown}; known: {', '.join(self.services)}")
        order: list[str] = []

        def visit(name: str) -> None:
            if name in order:
                return
            for dep in self.services[name].needs:
                visit(dep)
            order.append(name)

        for name in wanted:
            visit(name)
        return order

    def expand(self, names: Iterable[str], configured_only: bool = False) -> list[str]:
        """A service run as several processes is named by its first: `streams` names every instance of
        the streams app (`streams`, `streams-2`, ...) the stack is configured for or still runs (only
        the configured ones with `configured_only`), and `flink-taskmanager` every TaskManager."""
        out: list[str] = []
        for name in names:
            group = [name]
            if name in SCALED:
                kind = SCALED[name].kind
                group = [n for n, s in self.services.items() if n == name or isinstance(s, kind)]
                group = [n for n in group if n in self.configured or not configured_only]
            for n in group:
                if n not in out:
                    out.append(n)
        return out

    # --- up ------------------------------------------------------------------------------------------
    def up(self, names: Iterable[str] | None = None) -> bool:
        """Infrastructure first, then the provisioning it allows (topics, schemas, connectors), then
        our apps, which need those to exist."""
        t_start = time.monotonic()
        self.cpu.ensure()
        order = self.closure(names)
        infra = [n for n in order if self.services[n].phase == 1]
        apps = [n for n in order if self.services[n].phase == 2]
        outcomes: dict[str, Outcome] = {}
        if not self._start_all(infra, outcomes):
            return False
        if not self.provision(running=set(order), phase=1):
            return False
        if apps and not self._start_all(apps, outcomes):
            return False
        if not self.provision(running=set(order), phase=2):
            return False
        say(TAG, f"all healthy in {time.monotonic() - t_start:.1f} s")
        return True

    def _start_all(self, names: list[str], outcomes: dict[str, Outcome]) -> bool:
        """Start the named services in parallel, each once everything it needs is healthy."""
        done = {n: threading.Event() for n in names}

        def bring_up(name: str) -> None:
            svc = self.services[name]
            try:
                for dep in svc.needs:
                    if dep in done:
                        done[dep].wait()
                    if not outcomes.get(dep, Outcome(True, "")).ok:
                        outcomes[name] = Outcome(False, f"not started: {dep} is not healthy")
                        return
                outcomes[name] = self._start_one(svc)
            except Exception as exc:  # a bug or a failed prepare step must still name the service
                outcomes[name] = Outcome(False, f"{type(exc).__name__}: {exc}")
            finally:
                outcome = outcomes.setdefault(name, Outcome(False, "no outcome"))
                say(TAG, f"{name:<18} {outcome.message}" if outcome.ok else f"{name:<18} FAILED: {outcome.message}")
                done[name].set()

        threads = [threading.Thread(target=bring_up, args=(n,), name=f"up-{n}") for n in names]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return all(outcomes[n].ok for n in names)

    def provision(self, running: set[str] | None = None, phase: int | None = None) -> bool:
        """Run the provisioners of a phase (all when None) whose services run (all when None)."""
        for prov in self.provisioners:
            if phase is not None and prov.phase != phase:
                continue
            if running is not None and not set(prov.needs) <= running:
                continue
            if not self.cfg.is_local(prov.needs[0]):
                continue  # with services on several hosts, each provisioner runs on its first service's host
            t0 = time.monotonic()
            try:
                detail = prov.run(self.cfg)
            except Exception as exc:
                say(TAG, f"{prov.name:<18} FAILED: {type(exc).__name__}: {exc}")
                return False
            say(TAG, f"{prov.name:<18} {detail} ({time.monotonic() - t0:.1f} s)")
        return True

    def _start_one(self, svc: Service) -> Outcome:
        t0 = time.monotonic()
        if isinstance(svc, External):  # runs elsewhere: wait for it, never start it
            timeout = self.cfg.int("BS_START_TIMEOUT")
            while not svc.healthy():
                if time.monotonic() - t0 > timeout:
                    return Outcome(False, f"external, not answering at {svc.address} after {timeout} s")
                time.sleep(1)
            return Outcome(True, f"external at {svc.address}, healthy")
        pidfile = self.layout.pidfile(svc.name)
        pid = pidfile.live_pid()
        if pid is not None and svc.healthy():
            self.place(svc.name, pid)
            return Outcome(True, f"already running (pid {pid})")
        # A process found running but not healthy is waited for: it may be starting (another `up`). It
        # may also be on its way out (killed just before this `up`; a big JVM takes a while to exit):
        # when it is gone, a fresh one is started rather than the start called failed.
        spawned = pid is None
        if spawned:
            pid = self._spawn(svc, pidfile)
        timeout = self.cfg.int("BS_START_TIMEOUT")
        while not svc.healthy():
            self.place(svc.name, pid)  # what it forked while starting (Postgres' workers, Flink's JVM)
            if pidfile.live_pid() is None:
                if not spawned:
                    say(TAG, f"{svc.name:<18} pid {pid} exited before it was healthy: starting it again")
                    pid, spawned = self._spawn(svc, pidfile), True
                    continue
                return Outcome(False, f"exited before it was healthy; last lines of {svc.log}:\n" + log_tail(svc.log))
            if time.monotonic() - t0 > timeout:
                return Outcome(
                    False, f"not healthy after {timeout} s (pid {pid}); last lines of {svc.log}:\n" + log_tail(svc.log)
                )
            time.sleep(0.25)
        svc.after_start()
        ports = ",".join(str(p) for p in svc.ports().values())
        return Outcome(True, f"ready in {time.monotonic() - t0:5.1f} s  pid {pid:<7} {svc.host}:{ports}")

    def _spawn(self, svc: Service, pidfile: PidFile) -> int:
        svc.prepare()
        launch = svc.launch()
        pid = spawn(launch.argv, log=svc.log, pidfile=pidfile, env=launch.env, cwd=launch.cwd, user=launch.user)
        self.place(svc.name, pid)
        return pid

    def place(self, name: str, pid: int) -> None:
        """Puts a service's processes in its CPU group: the leader first, so that what it forks from
        now on is born there, then everything else of its process group."""
        self.cpu.place(self.services[name].cpu_group, [pid] + [p for p in group_members(pid) if p != pid])

    # --- down ----------------------------------------------------------------------------------------
    def down(self, names: Iterable[str] | None = None) -> dict[str, str]:
        """Stop services, each only after everything that needs it has stopped."""
        names = list(self.services) if names is None else self.expand(names)  # [] stops nothing
        dependents = {n: [m for m in names if n in self.services[m].needs] for n in names}
        stopped = {n: threading.Event() for n in names}
        results: dict[str, str] = {}

        def stop(name: str) -> None:
            for other in dependents[name]:
                stopped[other].wait()
            svc = self.services[name]
            if isinstance(svc, External):
                results[name] = "external: left running"
            else:
                results[name] = terminate(self.layout.pidfile(name), sig=svc.stop_signal, grace=svc.stop_grace)
            say("down", f"{name:<18} {results[name]}")
            stopped[name].set()

        threads = [threading.Thread(target=stop, args=(n,)) for n in names]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if all(self.layout.pidfile(n).live_pid() is None for n in self.services):
            self.cpu.remove()
        return results

    # --- status --------------------------------------------------------------------------------------
    def status(self) -> list[dict]:
        rows = []
        for name, svc in self.services.items():
            pid = self.layout.pidfile(name).live_pid()
            if isinstance(svc, External):
                rows.append(
                    {
                        "service": name,
                        "state": "external" if svc.healthy() else "external, not answering",
                        "pid": None,
                        "ports": {"at": svc.address},
                        "rss_bytes": 0,
                        "listening": [],
                    }
                )
                continue
            if pid is None and svc.optional:
                continue  # not started unless asked for: down is its normal state, not a problem
            if pid is None:
                state = "down"
            else:
                state = "healthy" if svc.healthy() else "unhealthy"
            rows.append(
                {
                    "service": name,
                    "state": state,
                    "pid": pid,
                    "ports": svc.ports(),
                    "rss_bytes": group_rss(pid) if pid else 0,
                    "listening": sorted(set(listening_sockets_of_group(pid))) if pid else [],
                }
            )
        return rows

    def reset(self) -> None:
        self.down()
        if self.cfg.data_dir.exists():
            shutil.rmtree(self.cfg.data_dir)


def log_tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return "  (no log)"
    return "\n".join("  | " + line for line in text[-lines:])


def group_members(pgid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def group_rss(pgid: int) -> int:
    """RSS of a service: its process group (Postgres backends, the JVM behind a Flink script)."""
    return sum(rss_bytes(pid) for pid in group_members(pgid))


def listening_sockets_of_group(pgid: int) -> list[tuple[str, int]]:
    found = []
    for pid in group_members(pgid):
        found.extend(listening_sockets(pid))
    return found
