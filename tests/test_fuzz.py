"""A short run of the fuzz target (make fuzz runs it for longer)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

TARGET = Path(__file__).resolve().parents[1] / "fuzz" / "decode_validate.py"


@pytest.mark.timeout(120)
def test_ten_thousand_fuzzed_inputs_find_nothing(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(TARGET), "-runs=10000", "-seed=1", f"-artifact_prefix={tmp_path}/"],
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Done 10000 runs" in run.stderr
    assert list(tmp_path.iterdir()) == []  # no crash or leak artifacts
