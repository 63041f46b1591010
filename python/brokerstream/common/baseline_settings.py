"""The baseline monolith's settings as it sees them (its defaults, the settings file, BASELINE_* variables),
for every layer that reads its tables or groups."""

from __future__ import annotations

import os
from pathlib import Path

from brokerstream.common.config import ROOT, Config

BASELINE_DEFAULTS = ROOT / "baseline" / "src" / "main" / "resources" / "baseline-defaults.properties"


def read_properties(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")) and "=" in line:
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def baseline_setting(cfg: Config, key: str) -> str:
    """A baseline setting as the running monolith sees it: defaults, the settings file, BASELINE_*."""
    values = read_properties(BASELINE_DEFAULTS)
    file = cfg.get("BS_BASELINE_CONFIG", "")
    if file and Path(file).exists():
        values.update(read_properties(Path(file)))
    env = "BASELINE_" + key.upper().replace(".", "_").replace("-", "_")
    return os.environ.get(env, values[key])
