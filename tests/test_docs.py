"""What the README and the docs state matches the schema, the harness and the command.

Counts, tables and flags drift when the code changes and the prose does not: each test here
reads a fact from the docs and the same fact from its source.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

import pi_proto as pp
from pi_proto._gen.pb2.pi.conformance.v1 import conformance_pb2 as pb
from pi_proto.cli.main import parser

from .conformance import harness

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CONFORMANCE = ROOT / "tests" / "conformance" / "README.md"
PAGES = [README, CONFORMANCE, ROOT / "bench" / "README.md", ROOT / "proto" / "README.md"]
PAGES += sorted((ROOT / "docs").glob("*.md"))
RUNTIME_READMES = [ROOT / name / "README.md" for name in ("typescript", "go", "rust", "java")]
NUMBERS = {"five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
# Flags of other tools the docs show (curl, protoc, buf, cargo, pkg-config, mypy, pi).
OTHER_TOOLS = {
    "--cflags", "--cpp", "--data-binary", "--descriptor", "--features", "--http2", "--http2-prior-knowledge",
    "--libs", "--mode", "--path", "--protocol", "--strict", "--template",
}  # fmt: skip
KINDS = [field.name for field in pb.Case.DESCRIPTOR.oneofs_by_name["kind"].fields]
RULES = {pp.stream_rule_id(rule) for rule in pp.StreamRule if rule != pp.StreamRule.UNSPECIFIED}


def test_the_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 220


def test_the_readme_names_the_case_kinds_of_the_schema() -> None:
    found = re.search(r"holds (\w+) kinds of case \(([^)]*)\)", README.read_text(encoding="utf-8"))
    assert found is not None
    assert NUMBERS[found.group(1)] == len(KINDS)
    assert [kind.strip() for kind in found.group(2).split(",")] == KINDS


def test_the_conformance_readme_has_a_row_for_each_case_kind_and_names_every_row_of_the_matrix() -> None:
    text = CONFORMANCE.read_text(encoding="utf-8")
    table = re.findall(r"^\| `(\w+)` \| `\w", text, re.M)
    assert table == KINDS
    rows = re.search(r"cases differ by protocol\): (.*?)\.\n", text, re.S)
    assert rows is not None
    assert re.findall(r"`([\w/-]+)`", rows.group(1)) == harness.MATRIX


def test_no_page_restates_the_stream_rules_and_every_runtime_links_them() -> None:
    for page in [*PAGES, *RUNTIME_READMES]:
        rows = re.findall(r"^\| `([a-z-]+)`", page.read_text(encoding="utf-8"), re.M)
        assert not set(rows) & RULES, f"{page} has a table of stream rules: link pi.ai.v1.StreamRule instead"
    for page in [README, *RUNTIME_READMES]:
        text = page.read_text(encoding="utf-8")
        assert "StreamRule" in text, page
        assert "proto/pi/ai/v1/event.proto" in text, page


def _commands() -> dict[str, set[str]]:
    subparsers = next(action for action in parser()._actions if isinstance(action, argparse._SubParsersAction))
    return {
        name: {
            flag for action in command._actions if action.help != argparse.SUPPRESS for flag in action.option_strings
        }
        for name, command in subparsers.choices.items()
    }


def test_every_flag_the_docs_name_is_one_of_the_command_and_every_serve_flag_is_documented() -> None:
    harness_flags = {flag for action in harness.arguments()._actions for flag in action.option_strings}
    flags = set().union(*_commands().values(), harness_flags)
    named: set[str] = set()
    for page in PAGES:
        named |= set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", page.read_text(encoding="utf-8")))
    assert named - flags - OTHER_TOOLS == set()
    assert _commands()["serve"] - {"-h", "--help"} - named == set()


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_every_link_of_a_page_leads_to_a_file(page: Path) -> None:
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
        if not target.startswith(("http://", "https://")):
            assert (page.parent / target).exists(), f"{page}: {target}"


def test_the_python_names_of_the_naming_table_are_pi_protos() -> None:
    text = CONFORMANCE.read_text(encoding="utf-8")
    table = text[text.index("## One name per concept") :]
    names = [row.split("|")[2].strip().strip("`") for row in table.splitlines() if row.startswith("| ")][2:]
    exported = [name for name in names if re.fullmatch(r"[A-Za-z_]+", name)]
    assert exported
    assert [name for name in exported if name not in pp.__all__] == []
