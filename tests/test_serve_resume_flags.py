"""`pi-proto serve`'s bounds of kept streams: every limit is 1 or more, as docs/security.md says,
and a value below is refused with exit 2 naming the flag, before anything is served."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pi_proto.cli.main import parser


@pytest.mark.parametrize("value", ["0", "-1"])
def test_resume_bytes_below_1_is_refused(value: str) -> None:
    command = [sys.executable, "-m", "pi_proto.cli", "serve", "--port", "0", "--resume-bytes", value]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()  # "listening on ..." had it been accepted; nothing once refused
    finally:
        if process.poll() is None:
            process.kill()
        _, stderr = process.communicate(timeout=120)
    assert first == "", f"served with --resume-bytes {value}: {first!r}"
    assert process.returncode == 2
    assert f"argument --resume-bytes: must be 1 or more: '{value}'" in stderr


def test_resume_bytes_of_1_is_a_limit() -> None:
    assert parser().parse_args(["serve", "--resume-bytes", "1"]).resume_bytes == 1
