"""One version for every artifact: VERSION, which every manifest and install line names, and a
CHANGELOG section for it."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION = (ROOT / "VERSION").read_text(encoding="utf-8").strip()


def test_the_version_is_semantic() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION)


def test_every_manifest_states_it() -> None:
    package = json.loads((ROOT / "typescript" / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((ROOT / "typescript" / "package-lock.json").read_text(encoding="utf-8"))
    crate = tomllib.loads((ROOT / "rust" / "Cargo.toml").read_text(encoding="utf-8"))
    cargo_lock = tomllib.loads((ROOT / "rust" / "Cargo.lock").read_text(encoding="utf-8"))
    pom = (ROOT / "java" / "pom.xml").read_text(encoding="utf-8")
    go = (ROOT / "go" / "piproto" / "version.go").read_text(encoding="utf-8")
    assert package["version"] == lock["version"] == lock["packages"][""]["version"] == VERSION
    assert crate["package"]["version"] == VERSION
    assert [entry["version"] for entry in cargo_lock["package"] if entry["name"] == "pi-proto"] == [VERSION]
    project = re.search(r"<artifactId>pi-proto</artifactId>(?:\s*<!--.*?-->)?\s*<version>([^<]+)</version>", pom, re.S)
    assert project is not None
    assert project[1] == VERSION
    assert f'const Version = "{VERSION}"' in go


def test_every_install_line_names_it() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    listed = re.search(r"VERSIONED := (.*?)\n\n", makefile, re.S)
    assert listed is not None
    files = listed[1].replace("\\\n", " ").replace("$(TS)", "typescript").split()
    names = re.compile(r"pi[-_]proto(?:-go|-schema)?-(\d+\.\d+\.\d+)")
    for name in files:
        found = names.findall((ROOT / name).read_text(encoding="utf-8"))
        assert set(found) <= {VERSION}, f"{name} names {set(found) - {VERSION}}"


def test_the_changelog_has_a_section_for_it() -> None:
    assert f"\n## {VERSION}\n" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
