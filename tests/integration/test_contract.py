"""The contract is the server: Schemathesis fuzzes the real gateway from its own /openapi.yaml with every one
of its checks (status codes, content types, headers and bodies as documented, refused invalid data, accepted
valid data, 405 with Allow for undocumented methods, auth not ignored, stateful sequences), and finds nothing.

A fixed seed and a bounded number of examples here; more by hand:
    .venv/bin/schemathesis run http://127.0.0.1:19080/openapi.yaml --url http://127.0.0.1:19080 \\
        -H "X-Api-Key: KEY" --checks all --max-examples 500 --workers 1
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from brokerstream.gen.refdata import api_key

from .conftest import REFDATA_SEED

M1 = "M000001"


def test_schemathesis_finds_nothing_with_all_its_checks(stack, world, tmp_path):
    schemathesis = Path(sys.executable).parent / "schemathesis"
    argv = [
        str(schemathesis),
        "run",
        f"{stack.gateway_url}/openapi.yaml",
        "--url",
        stack.gateway_url,
        "-H",
        f"X-Api-Key: {api_key(REFDATA_SEED, M1)}",
        "--checks",
        "all",
        "--max-examples",
        "20",
        "--seed",
        "20261125",
        "--workers",
        "1",
        "--request-timeout",
        "40",
        "--generation-database",
        "none",
        "--max-failures",
        "10",
        # a long poll answers within its wait_ms, at most 30 s: an answer later than that is a finding
        "--max-response-time",
        "35",
    ]
    proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    out = proc.stdout + proc.stderr
    print(out[-3000:])
    assert proc.returncode == 0, out[-8000:]
    # a finding is a failure or an error; a warning (an operation it could not feed ids) is its own note
    assert "No issues found" in out or ("Failures:" not in out and "Errors:" not in out), out[-8000:]
