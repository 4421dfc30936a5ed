"""A short run of the fuzz target, to know it runs (fuzzing itself is make fuzz's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "fuzz" / "decode_validate.py"


def test_a_thousand_fuzzed_inputs_find_nothing(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(TARGET), "-runs=1000", "-seed=1", f"-artifact_prefix={tmp_path}/"],
        capture_output=True,
        text=True,
        timeout=300,  # a hang guard
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Done 1000 runs" in run.stderr
    assert list(tmp_path.iterdir()) == []  # no crash or leak artifacts
