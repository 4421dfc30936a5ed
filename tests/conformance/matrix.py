"""Run every runtime's conformance runner over one corpus, against one reference server.

    python -m tests.conformance.matrix [--corpus DIR] [--runtime NAME ...] [--no-mutations]

Starts `pi-proto serve --conformance DIR`, runs each runtime's runner (`make -s -C <folder>
conformance CORPUS=... SERVER=... KNOWN_FAILURES=...`, or tests/conformance/run.py for Python),
and prints one line per runtime with its counts. Then it
runs every runner again over a copy of the corpus in which every case expects something else
(tests/conformance/mutate.py) and checks that no case passes there: a runner that did not compare
outcomes would. Exits 1 when anything fails.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
KNOWN = HERE / "known_failures"
# The runtimes, and the folder whose Makefile has their `conformance` target (Python runs directly).
RUNTIMES = {"python": "", "typescript": "typescript", "go": "go", "rust": "rust", "java": "java"}
SUMMARY = re.compile(r"^(\w+): (\d+) passed, (\d+) failed, (\d+) known failures, (\d+) skipped$")


@contextlib.contextmanager
def reference_server(corpus: Path) -> Iterator[str]:
    """`pi-proto serve --conformance corpus` on a free port; yields its target."""
    command = [sys.executable, "-m", "pi_proto.cli", "serve", "--conformance", str(corpus), "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError(f"the reference server did not start: {line}{process.stdout.read()}")
        yield line.removeprefix("listening on ").strip()
    finally:
        process.terminate()
        process.wait(10)


def run_runtime(name: str, corpus: Path, server: str) -> tuple[re.Match[str] | None, str]:
    """Run one runtime's runner; return its summary line's match and its whole output."""
    known = KNOWN / f"{name}.json"
    if name == "python":
        command = [sys.executable, "-m", "tests.conformance.run", "--corpus", str(corpus.resolve())]
        command += ["--server", server, "--known-failures", str(known), "--quiet"]
    else:
        command = [
            "make", "-s", "-C", str(ROOT / RUNTIMES[name]), "conformance",
            f"CORPUS={corpus.resolve()}", f"SERVER={server}", f"KNOWN_FAILURES={known}",
        ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    output = done.stdout + done.stderr
    # A runner prints its counts last and exits 1 when a case failed; make turns that into 2.
    lines = [line for line in done.stdout.splitlines() if SUMMARY.match(line)]
    match = SUMMARY.match(lines[-1]) if lines else None
    return match, output


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=HERE, help="the corpus folder (default: %(default)s)")
    parser.add_argument("--runtime", action="append", choices=list(RUNTIMES), help="run only these runtimes")
    parser.add_argument("--no-mutations", action="store_true", help="skip the run over the mutated corpus")
    args = parser.parse_args(argv)
    runtimes = args.runtime or list(RUNTIMES)
    failed = False
    with reference_server(args.corpus) as server:
        for name in runtimes:
            started = time.monotonic()
            match, output = run_runtime(name, args.corpus, server)
            seconds = time.monotonic() - started
            if match is None or match.group(3) != "0":
                failed = True
                print(_failures(output))
            print(f"{match.group(0) if match else f'{name}: the runner did not finish'}  ({seconds:.0f} s)", flush=True)
    if args.no_mutations:
        return 1 if failed else 0
    with tempfile.TemporaryDirectory() as scratch:
        mutated = Path(scratch)
        subprocess.run([sys.executable, "-m", "tests.conformance.mutate", str(args.corpus), str(mutated)], check=True)
        with reference_server(mutated) as server:
            for name in runtimes:
                match, output = run_runtime(name, mutated, server)
                if match is None or match.group(2) != "0":
                    failed = True
                    passing = [line for line in output.splitlines() if line.startswith("PASS")]
                    print(f"{name}: passes cases whose expected outcome was changed: {passing[:5] or output[-2000:]}")
                else:
                    print(f"{name}: fails all {match.group(3)} mutated cases, as it must", flush=True)
    return 1 if failed else 0


def _failures(output: str) -> str:
    wanted = [line for line in output.splitlines() if line.startswith(("FAIL", "FIXED"))]
    return "\n".join(wanted[:50]) if wanted else output[-3000:]


if __name__ == "__main__":
    sys.exit(main())
