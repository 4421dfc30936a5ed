"""Every Python example in the README and in docs/ runs as written and prints exactly what it shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# A python block, and the text block the page says it prints right after it.
EXAMPLE = r"```python\n(.*?)```\n\nIt prints:\n\n```text\n(.*?)```"
EXAMPLES = [
    (page, code, output) for page in PAGES for code, output in re.findall(EXAMPLE, page.read_text("utf-8"), re.S)
]


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_every_python_example_shows_its_output(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert len(re.findall(EXAMPLE, text, re.S)) == len(re.findall(r"```python\n", text))


def test_the_readme_and_the_python_page_have_examples() -> None:
    assert {page.name for page, _, _ in EXAMPLES} >= {"README.md", "python.md"}


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    ("page", "code", "output"), EXAMPLES, ids=[f"{page.name}-{i}" for i, (page, _, _) in enumerate(EXAMPLES)]
)
def test_the_example_prints_what_the_page_shows(
    page: Path, code: str, output: str, capsys: pytest.CaptureFixture[str]
) -> None:
    exec(compile(code, f"{page}:example", "exec"), {"__name__": "readme_example"})
    assert capsys.readouterr().out == output
