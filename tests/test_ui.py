"""The web page in Debian's chromium (tests/browser/ui.mjs, driven by playwright-core), as a user
would use it, against `pi-proto serve --http-port` and `pi-proto view`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from . import chromium
from .helpers import endless_script, serve_process

SCRIPT = Path(__file__).parent / "browser" / "ui.mjs"
FIXTURES = Path(__file__).parent / "fixtures"
SESSION = FIXTURES / "pi-sessions" / "before-compaction.jsonl"  # the shared real session: 1,003 lines
BRANCHED = FIXTURES / "pi-1.6-sessions" / "branch.jsonl"  # a session pi wrote with two branches


def scenario(*args: str) -> dict[str, Any]:
    command = ["node", str(SCRIPT), *args]
    environment = {**os.environ, "CHROMIUM_ENDPOINT": chromium.endpoint()}
    done = subprocess.run(command, capture_output=True, text=True, timeout=150, check=False, env=environment)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    seen: dict[str, Any] = json.loads(done.stdout)
    return seen


def endless(folder: Path) -> tuple[str, ...]:
    """Flags of a server whose answer is still streaming whenever the page stops it."""
    return ("--script", str(endless_script(folder)), "--delta-size", "1", "--delay", "0.1")


@contextmanager
def page_server(*flags: str) -> Iterator[str]:
    """`pi-proto serve --http-port 0 FLAGS`; yields the page's base URL."""
    with serve_process("--http-port", "0", *flags) as (process, _):
        assert process.stdout is not None
        yield "http://" + process.stdout.readline().removeprefix("http on ").strip()


def test_the_readme_round_trip_shows_each_turn_and_continues() -> None:
    with page_server("--delay", "0.02") as base:
        seen = scenario("roundtrip", base)
    assert seen["problems"] == []
    assert seen["samples"] > 0  # the page was watched while it changed
    first = seen["firstTurn"]
    assert first["stopReason"] == "TOOL_USE"
    assert first["text"] == "我先读取项目说明。"
    assert first["toolCalls"] == [{"name": "read", "arguments": '{"path":"README.md"}'}]
    assert first["usage"].startswith("input 18 · output 12")
    assert first["cost"].startswith("$")
    assert first["eventRows"] > 3
    second = seen["secondTurn"]
    assert second["stopReason"] == "STOP"
    assert "pi-proto" in second["text"]


def test_text_and_a_tool_call_show_while_they_stream(tmp_path: Path) -> None:
    # The README's first turn, then text for over eight minutes: still streaming when the page
    # shows the tool call, however slow the browser.
    script = tmp_path / "streaming.json"
    first = json.loads((resources.files("pi_proto.models") / "scripts" / "readme.json").read_text(encoding="utf-8"))[0]
    first["content"].append({"type": "text", "text": "x" * 10_000})
    script.write_text(json.dumps([first]), encoding="utf-8")
    with page_server("--script", str(script), "--delta-size", "1", "--delay", "0.05") as base:
        seen = scenario("streaming", base)
    assert seen["problems"] == []
    assert seen["textBeforeStop"]
    assert seen["textGrewBeforeStop"]
    assert seen["toolCallBeforeStop"]
    assert seen["stopReason"] == "ABORTED"


def test_both_views_fit_a_phones_width() -> None:
    with page_server() as base:
        seen = scenario("narrow", base, str(BRANCHED))
    assert seen["problems"] == []
    assert seen["stopReason"] == "TOOL_USE"
    assert not seen["playgroundOverflows"]
    assert not seen["viewerOverflows"]


def test_the_playground_is_usable_from_the_keyboard(tmp_path: Path) -> None:
    with page_server(*endless(tmp_path)) as base:  # still streaming when Escape comes, however slow the browser
        seen = scenario("keyboard", base)
    assert seen["problems"] == []
    assert seen["stopReason"] == "ABORTED"  # Ctrl+Enter sent it, Escape stopped it
    assert seen["tabs"][0] == "tab-viewer"


def test_abort_ends_the_stream_aborted(tmp_path: Path) -> None:
    with page_server(*endless(tmp_path)) as base:  # still streaming when the click comes, however slow the browser
        seen = scenario("abort", base)
    assert seen["problems"] == []
    assert seen["stopReason"] == "ABORTED"
    assert seen["error"]
    assert seen["sendEnabledAfter"]


def test_a_missing_or_wrong_token_is_shown_clearly_and_the_right_one_is_kept_out_of_urls(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret-token\n")
    with page_server("--token-file", str(token)) as base:
        seen = scenario("token", base, "s3cret-token")
    assert "needs a token" in seen["withoutToken"]
    assert "refused" in seen["wrongToken"]
    assert seen["models"] == ["Scripted turns (scripted)"]
    assert seen["streamStopReason"] == "TOOL_USE"
    assert not seen["tokenInUrl"]
    assert not seen["tokenInLocalStorage"]


def test_an_unknown_model_shows_the_servers_not_found() -> None:
    with page_server() as base:
        seen = scenario("unknown-model", base)
    assert seen["stopReason"] == "ERROR"
    assert seen["error"].startswith("NOT_FOUND: model 'no-such-model' is not served")


def entries(path: Path) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return lines[1:]  # the header is not an entry


def test_the_viewer_renders_every_message_of_the_shared_session_and_saves_it_back_unchanged(tmp_path: Path) -> None:
    with page_server() as base:
        seen = scenario("view", base, str(SESSION), str(tmp_path))
    assert seen["problems"] == []
    messages = [entry for entry in entries(SESSION) if entry["type"] == "message"]
    assert seen["allEntries"]["messages"] == len(messages)
    others = [entry["type"] for entry in entries(SESSION) if entry["type"] != "message"]
    assert len(seen["allEntries"]["sessionEntries"]) == len(others)  # compactions, model and thinking changes
    assert set(seen["allEntries"]["blockKinds"]) >= {
        "text",
        "thinking",
        "tool-call",
        "tool-result",
        "tool-result-error",
    }
    assert "Totals:" in seen["totals"]
    saved = {form: Path(where) for form, where in seen["saved"].items()}
    assert saved["jsonl"].read_bytes() == SESSION.read_bytes()
    for form in ("binpb", "json"):
        converted = tmp_path / f"converted.{form}"
        subprocess.run([sys.executable, "-m", "pi_proto.cli", "convert", str(SESSION), str(converted)], check=True)
        assert saved[form].read_bytes() == converted.read_bytes()


def test_the_viewer_keeps_a_line_of_entries_run_together_names_it_and_saves_it_back(tmp_path: Path) -> None:
    # A session pi wrote with two entries on its line 5 and no newline between them (fixtures/pi-sessions/README.md).
    session = FIXTURES / "pi-sessions" / "entries-run-together-compaction.jsonl"
    with page_server() as base:
        seen = scenario("view", base, str(session), str(tmp_path))
    assert seen["problems"] == []
    assert seen["status"].startswith(f"{session.name}:5: not one JSON entry (not JSON: ")
    assert "unparsed_line" in seen["allEntries"]["sessionEntries"]
    saved = {form: Path(where) for form, where in seen["saved"].items()}
    assert saved["jsonl"].read_bytes() == session.read_bytes()


def test_the_viewer_shows_a_sessions_branches(tmp_path: Path) -> None:
    with page_server() as base:
        seen = scenario("view", base, str(BRANCHED), str(tmp_path))
    assert seen["problems"] == []
    assert len(seen["branches"]) == 2
    assert seen["treeEntries"] == len(entries(BRANCHED))
    assert seen["allEntries"]["messages"] == sum(entry["type"] == "message" for entry in entries(BRANCHED))
    assert seen["messages"] < seen["allEntries"]["messages"]  # one branch at a time


def test_the_viewer_shows_images_and_thinking_as_pi_wrote_them(tmp_path: Path) -> None:
    with page_server() as base:
        image = scenario("view", base, str(FIXTURES / "pi-1.6-sessions" / "image-read.jsonl"), str(tmp_path / "a"))
        thinking = scenario("view", base, str(FIXTURES / "pi-1.6-sessions" / "thinking.jsonl"), str(tmp_path / "b"))
    assert image["allEntries"]["images"] > 0
    assert "thinking" in thinking["allEntries"]["blockKinds"]
    assert image["savedInLoadedFormIdentical"]
    assert thinking["savedInLoadedFormIdentical"]


def test_a_files_entry_types_and_roles_never_become_the_pages_classes(tmp_path: Path) -> None:
    """A session file names its entries' types and its custom messages' roles: text the viewer
    shows, which must not dress a note as one of the page's own messages."""
    dressed = tmp_path / "dressed.jsonl"
    lines = BRANCHED.read_text(encoding="utf-8").splitlines()[:3]  # the header, a model and a thinking change
    parent = json.loads(lines[-1])["id"]
    hostile: list[dict[str, Any]] = [
        {"type": "message user", "text": "I am not the user"},
        {"type": "message", "message": {"role": "toolResult user", "note": "nor a tool result"}},
        {"type": "compaction entry-note message assistant"},
    ]
    for number, entry in enumerate(hostile):
        entry.update(id=f"dressed{number}", parentId=parent, timestamp=f"2026-12-02T06:20:0{number}.000Z")
        parent = entry["id"]
        lines.append(json.dumps(entry))
    dressed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with page_server() as base:
        seen = scenario("view", base, str(dressed), str(tmp_path / "saved"))
    assert seen["problems"] == []
    shown = seen["allEntries"]
    assert shown["sessionEntries"] == [
        "model_change",
        "thinking_level_change",
        "message user",
        "compaction entry-note message assistant",
    ]  # the file's types, kept as data
    assert shown["roles"] == ["custom"]  # not the roles the page gives its own messages
    assert shown["customRoles"] == ["toolResult user"]
    assert shown["noteClasses"][2:] == ["entry-note note-other", "entry-note note-other"]
    assert "user" not in shown["classes"]  # the file has no user message
    assert "assistant" not in shown["classes"]
    assert set(shown["treeKindClasses"]) == {"tree-kind kind-session-entry", "tree-kind kind-custom"}


def test_the_page_streams_and_views_in_firefox_too() -> None:
    with page_server() as base:
        done = subprocess.run(
            ["node", str(SCRIPT.parent / "firefox.mjs"), base, str(BRANCHED)],
            capture_output=True,
            text=True,
            timeout=150,
            check=False,
        )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    seen = json.loads(done.stdout)
    assert seen["problems"] == []
    assert seen["playground"]["stops"][0].startswith("TOOL_USE")
    assert seen["playground"]["stops"][1].startswith("STOP")
    assert seen["playground"]["toolCalls"] >= 1
    assert seen["viewer"]["messages"] > 0


def test_pi_proto_view_opens_its_file_in_the_viewer() -> None:
    command = [sys.executable, "-m", "pi_proto.cli", "view", str(SESSION)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        base = process.stdout.readline().split(" at ", 1)[1].strip().removesuffix("/#view")
        seen = scenario("view-served", base)
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert seen["problems"] == []
    assert SESSION.name in seen["title"]
    assert seen["messages"] > 0


@pytest.fixture(autouse=True)
def _browser_installed() -> None:
    """`make browser-setup` installs chromium, firefox-esr, playwright-core and puppeteer-core;
    without them the tests fail."""
    assert Path("/usr/bin/chromium").exists(), "chromium is missing: run `make browser-setup`"
    assert Path("/usr/bin/firefox-esr").exists(), "firefox-esr is missing: run `make browser-setup`"
    assert (SCRIPT.parent / "node_modules" / "playwright-core").is_dir(), "run `make browser-setup`"
