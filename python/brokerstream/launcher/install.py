"""`install`: everything the stack needs, from Debian packages and Maven Central, cached.

Each step prints one progress line with its duration. A step whose inputs (its POM, the pinned
versions) are unchanged since it last succeeded is skipped, so a second install does no network work.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from brokerstream.common.config import Config
from brokerstream.common.progress import StepFailed, run, say, step
from brokerstream.launcher.layout import Layout

TAG = "install"
RUNTIME_POMS = Path("platform") / "runtime"


@dataclass(frozen=True)
class Stamp:
    """Remembers that a step succeeded for a given digest of its inputs."""

    path: Path
    digest: str

    def fresh(self) -> bool:
        return self.path.exists() and self.path.read_text() == self.digest

    def mark(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(self.digest)


def digest_of(*parts: Path | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.read_bytes() if isinstance(part, Path) else part.encode())
    return h.hexdigest()[:20]


def maven(cfg: Config, layout: Layout, *args: str, offline: bool = False) -> list[str]:
    argv = ["mvn", "-q", "-B", "-s", str(cfg.root / ".mvn" / "settings.xml"), f"-Dmaven.repo.local={layout.maven_repo}"]
    if offline:
        argv.append("-o")
    return argv + list(args)


def maven_env(cfg: Config) -> dict[str, str]:
    env = dict(os.environ)
    if cfg.get("BS_JAVA_HOME"):
        env["JAVA_HOME"] = cfg["BS_JAVA_HOME"]
    # baseline/ is Java 21: its pom forks the compiler and tests of this JDK while Maven runs on 17.
    env["BS_JAVA21_HOME"] = cfg["BS_JAVA21_HOME"]
    return env


# --- steps -------------------------------------------------------------------------------------------


def system_packages(cfg: Config, layout: Layout) -> None:
    """PostgreSQL 15 server binaries from Debian, and a Java 21+ beside the default 17."""
    missing = []
    if not (cfg.path("BS_POSTGRES_BIN") / "postgres").exists():
        missing.append("postgresql-15")
    java21 = Path(cfg["BS_JAVA21_HOME"]) / "bin" / "java"
    if not java21.exists():
        raise StepFailed(f"the schema registry needs Java 21 or newer: no {java21}; set BS_JAVA21_HOME")
    if not missing:
        say(TAG, "system packages: postgresql-15, Java 21+ present")
        return
    _apt(missing)


def test_packages(cfg: Config, layout: Layout) -> None:
    """What only the tests use, from Debian: docker-compose (to validate the compose file) and chromium (to
    check the reports render)."""
    missing = [p for p in ("docker-compose", "chromium") if shutil.which(p) is None]
    if not missing:
        say(TAG, "test packages: docker-compose, chromium present")
        return
    _apt(missing)


def _apt(missing: list[str]) -> None:
    if os.geteuid() != 0:
        raise StepFailed(f"missing Debian packages {missing}: run `apt-get install {' '.join(missing)}` as root")
    with step(TAG, f"apt-get install {' '.join(missing)}"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        argv = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing]
        if subprocess.run(argv, env=env, stdout=subprocess.DEVNULL).returncode != 0:
            run(["apt-get", "update", "-q"], env=env, what="apt-get update")
            run(argv, env=env, what="apt-get install")


def maven_runtime(
    name: str, pom: str, out: Callable[[Layout], Path], after: Callable[[Config, Layout], None] | None = None
):
    def install_step(cfg: Config, layout: Layout) -> None:
        pom_path = cfg.root / RUNTIME_POMS / pom
        target = out(layout)
        stamp = Stamp(layout.stamps / f"{pom}.ok", digest_of(pom_path, str(target)))
        if stamp.fresh() and target.exists():
            say(TAG, f"{name}: cached in {target}")
            return
        with step(TAG, f"{name} from Maven Central"):
            if target.exists():
                shutil.rmtree(target)
            # maven-dependency-plugin's unpack leaves "done" markers beside the pom; with them a
            # runtime deleted above (the cache moved, its path changed) would silently stay empty.
            shutil.rmtree(pom_path.parent / "target" / "dependency-maven-plugin-markers", ignore_errors=True)
            run(
                maven(cfg, layout, "-f", str(pom_path), "package", f"-Dbs.out={target}"),
                env=maven_env(cfg),
                log=layout.cfg.cache_dir / "logs" / f"{pom}.log",
                what=f"maven ({pom})",
            )
            if after is not None:
                after(cfg, layout)
        stamp.mark()

    install_step.__name__ = name
    return install_step


def sync_plugin_manifests(cfg: Config, layout: Layout) -> None:
    # Connect runs with plugin.discovery=service_load (fast start); the Apicurio converter jar has no
    # ServiceLoader manifest, so Kafka's own tool writes one beside it.
    run(
        [
            cfg.java(),
            "-cp",
            str(layout.kafka_lib / "*"),
            "org.apache.kafka.tools.ConnectPluginPath",
            "sync-manifests",
            "--plugin-path",
            str(layout.connect_plugins),
        ],
        log=cfg.cache_dir / "logs" / "sync-manifests.log",
        what="connect-plugin-path sync-manifests",
    )


def flink_distribution(cfg: Config, layout: Layout) -> None:
    """Link the PyPI distribution's jars beside the extras, so the cluster sees one lib/ and opt/."""
    home = layout.pyflink_home
    for folder in ("lib", "opt"):
        ours = layout.flink_runtime / folder
        ours.mkdir(parents=True, exist_ok=True)
        for jar in (home / folder).glob("*.jar"):
            link = ours / jar.name
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(jar)
    say(TAG, f"flink distribution: {home} linked into {layout.flink_runtime}")


def java_build(cfg: Config, layout: Layout) -> None:
    """Build our own jars (streams app, Flink jobs, shared schemas); tests run under `test`."""
    if not (cfg.root / "pom.xml").exists():
        return
    with step(TAG, "java build (mvn package -DskipTests)"):
        run(
            maven(cfg, layout, "-f", str(cfg.root / "pom.xml"), "package", "-DskipTests"),
            env=maven_env(cfg),
            log=cfg.cache_dir / "logs" / "java-build.log",
            what="maven build",
        )


def connect_sink_plugin(cfg: Config, layout: Layout) -> None:
    """Our Postgres sink and registry-faults converter (connectors/, built by the Java build) into the worker's
    plugin path; a running worker loads a new version when it restarts."""
    built = cfg.root / "connectors" / "postgres-sink" / "target"
    jar = built / "postgres-sink-0.1.0.jar"
    if not jar.exists():
        raise StepFailed(f"{jar} is missing: the Java build makes it")
    target = layout.connect_plugins / "brokerstream-postgres-sink"
    target.mkdir(parents=True, exist_ok=True)
    wanted = {jar.name: jar, **{p.name: p for p in (built / "plugin").glob("*.jar")}}
    for old in target.glob("*.jar"):
        if old.name not in wanted:
            old.unlink()
    for name, path in wanted.items():
        _copy_if_changed(path, target / name)
    say(TAG, f"connect plugin: brokerstream-postgres-sink in {target}")
    # The registry-faults converter wraps the Apicurio one, so it lives in that plugin's folder (one
    # classloader sees both); its own ServiceLoader manifest names it.
    wrapper = cfg.root / "connectors" / "registry-faults" / "target" / "registry-faults-0.1.0.jar"
    if not wrapper.exists():
        raise StepFailed(f"{wrapper} is missing: the Java build makes it")
    beside = layout.connect_plugins / "apicurio-avro-converter"
    if not beside.is_dir():
        raise StepFailed(f"{beside} is missing: the connect plugins step makes it")
    _copy_if_changed(wrapper, beside / wrapper.name)
    say(TAG, f"connect plugin: the registry-faults converter in {beside}")


def _copy_if_changed(source: Path, target: Path) -> None:
    """A running worker's loaded jar is replaced only when it differs."""
    if not target.exists() or target.read_bytes() != source.read_bytes():
        shutil.copy2(source, target)


def _go(layout: Layout) -> tuple[str, dict[str, str]]:
    """The Go command and an environment that keeps its downloads and builds under .cache/go."""
    go = shutil.which("go") or "/usr/local/go/bin/go"
    if not Path(go).exists():
        raise StepFailed("helm and the manifest validator are built with Go: no `go` on PATH or in /usr/local/go/bin")
    gopath = layout.helm.parent.parent
    env = {
        **os.environ,
        "GOBIN": str(layout.helm.parent),
        "GOMODCACHE": str(gopath / "mod"),
        "GOCACHE": str(gopath / "build"),
        "GOFLAGS": "-mod=mod",
        "CGO_ENABLED": "0",
    }
    return go, env


def helm(cfg: Config, layout: Layout) -> None:
    """Helm from the Go module proxy (`go install`), to lint and render platform/kubernetes/ in the tests."""
    version = cfg["BS_HELM_VERSION"]
    stamp = Stamp(layout.stamps / "helm.ok", digest_of(version, str(layout.helm)))
    if stamp.fresh() and layout.helm.exists():
        say(TAG, f"helm {version}: cached in {layout.helm}")
        return
    go, env = _go(layout)
    with step(TAG, f"helm {version} (go install from the Go module proxy)"):
        run(
            [go, "install", f"helm.sh/helm/v3/cmd/helm@{version}"],
            env=env,
            log=layout.cfg.cache_dir / "logs" / "helm.log",
            what="go install helm",
        )
    stamp.mark()


def kubevalidate(cfg: Config, layout: Layout) -> None:
    """platform/kubernetes/validate (its go.mod pins k8s.io/api): the rendered chart's core resources
    decoded strictly into their API types in the tests."""
    src = cfg.root / "platform" / "kubernetes" / "validate"
    stamp = Stamp(
        layout.stamps / "kubevalidate.ok",
        digest_of(src / "go.mod", src / "go.sum", src / "main.go", str(layout.kubevalidate)),
    )
    if stamp.fresh() and layout.kubevalidate.exists():
        say(TAG, f"manifest validator: cached in {layout.kubevalidate}")
        return
    go, env = _go(layout)
    with step(TAG, "manifest validator (go build, k8s.io/api from the Go module proxy)"):
        run(
            [go, "build", "-o", str(layout.kubevalidate), "."],
            env=env,
            cwd=src,
            log=layout.cfg.cache_dir / "logs" / "kubevalidate.log",
            what="go build kubevalidate",
        )
    stamp.mark()


STEPS = [
    system_packages,
    test_packages,
    maven_runtime("kafka runtime", "kafka.pom.xml", lambda l: l.kafka_lib),
    maven_runtime("metrics agent", "metrics-agent.pom.xml", lambda l: l.metrics_agent.parent),
    maven_runtime(
        "connect plugins", "connect-plugins.pom.xml", lambda l: l.connect_plugins, after=sync_plugin_manifests
    ),
    maven_runtime("schema registry", "apicurio.pom.xml", lambda l: l.apicurio_home),
    maven_runtime("flink extras", "flink-extras.pom.xml", lambda l: l.flink_runtime),
    flink_distribution,
    java_build,
    connect_sink_plugin,
    helm,
    kubevalidate,
]


# The Go builds spend CPU while the Maven and apt steps mostly wait on the network: on a fresh machine
# they run beside them, in a thread of their own, instead of after them (about 90 s of a 5-minute install).
BESIDE = (helm, kubevalidate)

# What only the test command needs (the chart's and compose's checks, the report's rendering): the main job and
# `up` install without them, about 3 minutes less on a fresh machine.
TEST_TOOLS = (test_packages, helm, kubevalidate)


def install(cfg: Config, *, skip_java: bool = False, test_tools: bool = False) -> None:
    """Every step the stack needs; the test tools (TEST_TOOLS) only with `test_tools`."""
    from concurrent.futures import ThreadPoolExecutor

    layout = Layout(cfg)
    wanted = [s for s in STEPS if test_tools or s not in TEST_TOOLS]
    if skip_java:
        wanted = [s for s in wanted if s not in (java_build, connect_sink_plugin)]
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="install-go") as pool:
        beside = pool.submit(lambda: [install_step(cfg, layout) for install_step in BESIDE if install_step in wanted])
        for install_step in wanted:
            if install_step in BESIDE:
                continue
            install_step(cfg, layout)
        beside.result()  # its failure, raised here once the other steps are done
