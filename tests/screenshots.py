"""Screenshots of the web page for the README: `make screenshots` (python -m tests.screenshots DIR).

The playground after the README round trip, and the viewer with a session of two branches, taken
in Debian's chromium against `pi-proto serve --http-port`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .helpers import serve_process

SCRIPT = Path(__file__).parent / "browser" / "ui.mjs"
SESSION = Path(__file__).parent / "fixtures" / "pi-1.6-sessions" / "branch.jsonl"  # a tree of two branches


def main(folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    with serve_process("--http-port", "0") as (process, _):
        assert process.stdout is not None
        base = "http://" + process.stdout.readline().removeprefix("http on ").strip()
        done = subprocess.run(
            ["node", str(SCRIPT), "screenshot", base, str(folder), str(SESSION)], capture_output=True, text=True
        )
    if done.returncode != 0:
        print(done.stdout, done.stderr, file=sys.stderr)
        return 1
    seen = json.loads(done.stdout)
    print(f"wrote {seen['playground']} and {seen['viewer']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/images")))
