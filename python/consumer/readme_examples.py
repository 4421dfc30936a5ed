"""Run every Python example of the README with this interpreter and compare what it prints with
the README's "It prints:" block. Standard library only: it runs in a consumer's fresh venv."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

PATTERN = r"```python\n(.*?)```\n\nIt prints:\n\n```text\n(.*?)```"


def main(readme: Path) -> int:
    examples = re.findall(PATTERN, readme.read_text(encoding="utf-8"), re.S)
    if not examples:
        print(f"{readme}: no Python examples found", file=sys.stderr)
        return 1
    failed = 0
    for index, (code, expected) in enumerate(examples):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
        if done.returncode != 0 or done.stdout != expected:
            failed += 1
            print(
                f"example {index}: exit {done.returncode}\n--- printed\n{done.stdout}--- expected\n{expected}"
                f"--- stderr\n{done.stderr}",
                file=sys.stderr,
            )
    print(f"{len(examples) - failed} of {len(examples)} README examples print what the README shows")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
