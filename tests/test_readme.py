"""Every Python example in the README runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_the_readme_has_python_examples() -> None:
    assert len(EXAMPLES) >= 2


@pytest.mark.timeout(30)
@pytest.mark.parametrize("code", EXAMPLES, ids=[f"example-{i}" for i in range(len(EXAMPLES))])
def test_readme_example_runs(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(code, f"{README}:example", "exec"), {"__name__": "readme_example"})
    assert capsys.readouterr().out  # every example prints what it shows
