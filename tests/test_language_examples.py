"""docs/install.md shows each language's streaming example as that language's tests run it, and the
install commands its consumer run types."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
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


# Each language's consumer run: the install commands it types between its markers are the ones
# the README shows (the consumer runs install the built artifacts exactly as the README says).
CONSUMERS = {
    "python": ROOT / "python" / "consumer" / "run.sh",
    "typescript": ROOT / "typescript" / "scripts" / "consumer.sh",
    "go": ROOT / "go" / "consumer.sh",
    "rust": ROOT / "rust" / "consumer.sh",
    "java": ROOT / "java" / "consumer.sh",
    "cpp": ROOT / "cpp" / "consumer.sh",
}


def install_blocks(path: Path) -> list[str]:
    markers = r"\n[ \t]*# README install: begin\n(.*?)\n[ \t]*# README install: end\n"
    blocks = [textwrap.dedent(block) for block in re.findall(markers, path.read_text("utf-8"), re.S)]
    assert blocks, f"{path} has no README install markers"
    return blocks


@pytest.mark.parametrize(("language", "script"), CONSUMERS.items(), ids=list(CONSUMERS))
def test_the_readme_shows_the_install_commands_the_consumer_run_types(language: str, script: Path) -> None:
    shown = re.findall(r"```bash\n(.*?)\n```", README, re.S)
    for block in install_blocks(script):
        assert any(block in text for text in shown), f"{language}: the README does not show:\n{block}"
