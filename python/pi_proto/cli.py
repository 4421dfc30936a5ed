"""The `pi-proto` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .messages import text_of, unwrap
from .seed import readme_transcript
from .wire import encode, to_json


def demo() -> int:
    """Print the seed's README transcript: wire size, ProtoJSON and text projection of each message."""
    for message in readme_transcript():
        inner = unwrap(message)
        print(f"{type(inner).__name__}: {len(encode(message))} bytes on the wire")
        print(f"  ProtoJSON: {to_json(message)}")
        print(f"  text_of:   {text_of(message)!r}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pi-proto", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="show the seed's README transcript on the wire")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo()
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
