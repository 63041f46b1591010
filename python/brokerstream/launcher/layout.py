"""Where every downloaded runtime, service data folder, log and pid file lives."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from brokerstream.common.config import Config
from brokerstream.launcher.procs import PidFile


@dataclass(frozen=True)
class Layout:
    cfg: Config

    # --- downloads (BS_CACHE_DIR) ---------------------------------------------------------------
    @property
    def runtime(self) -> Path:
        return self.cfg.cache_dir / "runtime"

    @property
    def maven_repo(self) -> Path:
        return self.cfg.cache_dir / "m2"

    @property
    def stamps(self) -> Path:
        return self.cfg.cache_dir / "stamps"

    @property
    def kafka_lib(self) -> Path:
        return self.runtime / "kafka" / "lib"

    @property
    def kubevalidate(self) -> Path:
        """platform/kubernetes/validate built: decodes rendered core manifests strictly into k8s.io/api types."""
        return self.cfg.cache_dir / "go" / "bin" / "kubevalidate"

    @property
    def helm(self) -> Path:
        """Helm, built from the Go module proxy at BS_HELM_VERSION (renders and lints the Kubernetes chart)."""
        return self.cfg.cache_dir / "go" / "bin" / "helm"

    @property
    def metrics_agent(self) -> Path:
        """The Prometheus JMX exporter's Java agent (platform/runtime/metrics-agent.pom.xml)."""
        return self.runtime / "metrics-agent" / "jmx_prometheus_javaagent.jar"

    @property
    def connect_plugins(self) -> Path:
        return self.runtime / "connect-plugins"

    @property
    def apicurio_home(self) -> Path:
        return self.runtime / "apicurio"

    @property
    def flink_runtime(self) -> Path:
        """Our Flink lib/ and opt/: the PyPI distribution's jars linked in, plus the extras."""
        return self.runtime / "flink"

    @property
    def pyflink_home(self) -> Path:
        spec = importlib.util.find_spec("pyflink")
        if spec is None or spec.origin is None:
            raise FileNotFoundError("the Flink distribution (PyPI apache-flink) is not in this venv")
        return Path(spec.origin).parent

    # --- our build outputs -----------------------------------------------------------------------
    def module_jar(self, module: str, name: str) -> Path:
        return self.cfg.root / module / "target" / name

    # --- state (BS_DATA_DIR) -----------------------------------------------------------------------
    def data(self, service: str) -> Path:
        return self.cfg.data_dir / service

    def log(self, service: str) -> Path:
        return self.cfg.log_dir / f"{service}.log"

    def pidfile(self, service: str) -> PidFile:
        return PidFile(self.cfg.run_dir / f"{service}.pid")
