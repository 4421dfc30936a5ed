"""The `pi-proto` command's entry point. The command needs the `cli` extra (terminal rendering,
health checks and reflection); without it, it says what to install instead of a traceback."""

from __future__ import annotations

import sys


def main() -> int:
    try:
        from .main import main as run
    except ModuleNotFoundError as error:
        print(f"pi-proto: the command needs the {error.name} package: pip install 'pi-proto[cli]'", file=sys.stderr)
        return 2
    return run()
