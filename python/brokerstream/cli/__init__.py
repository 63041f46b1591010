"""./brokerstream COMMAND: install, start, inspect and stop the stack; run the tests.

Every command reads the same configuration (platform/stack.env, overridable by environment).
"""

from __future__ import annotations

import argparse
import sys

from brokerstream.cli import bench, gen, lab, ops, stack
from brokerstream.common import config
from brokerstream.common.errors import UserError

# each command group adds its subcommands; a subcommand names its handler with set_defaults(func=...)
GROUPS = (stack, gen, ops, lab, bench)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="brokerstream", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.add_commands(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    cfg = config.load()
    try:
        return args.func(cfg, args)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
