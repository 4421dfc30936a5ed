"""Every Python example in the README runs as written and prints exactly what the README shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
# A python block, and the text block the README says it prints right after it.
EXAMPLES = re.findall(r"```python\n(.*?)```\n\nIt prints:\n\n```text\n(.*?)```", README.read_text("utf-8"), re.S)


def test_every_python_example_shows_its_output() -> None:
    blocks = re.findall(r"```python\n", README.read_text(encoding="utf-8"))
    assert len(EXAMPLES) == len(blocks) >= 2


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("code", "output"), EXAMPLES, ids=[f"example-{i}" for i in range(len(EXAMPLES))])
def test_readme_example_prints_what_the_readme_shows(
    code: str, output: str, capsys: pytest.CaptureFixture[str]
) -> None:
    exec(compile(code, f"{README}:example", "exec"), {"__name__": "readme_example"})
    assert capsys.readouterr().out == output
