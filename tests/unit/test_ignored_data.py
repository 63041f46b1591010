"""Every data folder a stack writes (the default and each test suite's) is ignored by git: they hold
databases, logs and, in the secure profile, private keys and passwords."""

from __future__ import annotations

import re
import subprocess

from brokerstream.common import config

ROOT = config.ROOT


def data_folders() -> set[str]:
    found = {".data"}
    for conftest in (ROOT / "tests").glob("*/conftest.py"):
        found |= set(re.findall(r'"(\.data[\w-]*)"', conftest.read_text()))
    return found


def test_every_stack_data_folder_is_ignored():
    folders = data_folders()
    assert {".data-test", ".data-test-secure", ".data-test-hosts"} <= folders, folders
    for name in sorted(folders):
        probe = f"{name}/security/credentials.json"
        ignored = subprocess.run(["git", "check-ignore", "-q", probe], cwd=ROOT).returncode == 0
        assert ignored, f"{name}/ is not in .gitignore"
