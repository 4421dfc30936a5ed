"""The top-level README shows each language's streaming example as that language's tests run it."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
EXAMPLES = {  # language fence: the test file holding the example between its markers
    "ts": ROOT / "typescript" / "test" / "client.test.ts",
    "go": ROOT / "go" / "piproto" / "client_test.go",
    "rust": ROOT / "rust" / "tests" / "client.rs",
    "java": ROOT / "java" / "src" / "test" / "java" / "io" / "github" / "piproto" / "ClientTest.java",
}


def example_in(path: Path) -> str:
    markers = r"\n[ \t]*// README example: (?:begin|start)\n(.*?)\n[ \t]*// README example: end\n"
    found = re.search(markers, path.read_text("utf-8"), re.S)
    assert found, f"{path} has no README example markers"
    return textwrap.dedent(found.group(1))


@pytest.mark.parametrize(("fence", "test_file"), EXAMPLES.items(), ids=list(EXAMPLES))
def test_the_readme_shows_the_tested_example(fence: str, test_file: Path) -> None:
    blocks = re.findall(rf"```{fence}\n(.*?)\n```", README, re.S)
    assert example_in(test_file) in blocks
