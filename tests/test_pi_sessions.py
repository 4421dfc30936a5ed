"""Session files pi-coding-agent 1.6.0 wrote itself (tests/fixtures/pi-1.6-sessions/, made by
`python -m tests.pi.sessions`) come back byte for byte: line by line through the codec and the
wire, and whole through `pi-proto convert` to binary and back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pi_proto as pp
from pi_proto.transcripts.convert import convert
from pi_proto.transcripts.pi_json import event_from_pi, event_to_pi

FIXTURES = Path(__file__).parent / "fixtures" / "pi-1.6-sessions"
SESSIONS = sorted(path for path in FIXTURES.glob("*.jsonl") if path.name != "events-json-mode.jsonl")


def test_the_fixtures_cover_what_pi_writes() -> None:
    types: set[str] = set()
    for path in SESSIONS:
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            types.add(entry["type"])
            if entry["type"] == "message":
                types.add(f"role:{entry['message']['role']}")
    assert len(SESSIONS) >= 14
    assert types >= {
        "session", "model_change", "thinking_level_change", "message", "compaction", "branch_summary", "label",
        "session_info", "role:system", "role:user", "role:assistant", "role:toolResult", "role:bashExecution",
    }  # fmt: skip


@pytest.mark.parametrize("path", SESSIONS, ids=[path.name for path in SESSIONS])
def test_every_line_comes_back_byte_for_byte(path: Path) -> None:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        entry = pp.decode(pp.TranscriptEntry, pp.encode(pp.entry_from_pi(pp.load_json(line), f"line {number}")))
        assert pp.dump_json(pp.entry_to_pi(entry)) == line, f"{path.name}: line {number}"


@pytest.mark.parametrize("path", SESSIONS, ids=[path.name for path in SESSIONS])
def test_convert_to_binary_and_back_is_byte_for_byte(path: Path, tmp_path: Path) -> None:
    binary, back = tmp_path / "session.binpb", tmp_path / "session.jsonl"
    convert(path, binary)
    convert(binary, back)
    assert back.read_bytes() == path.read_bytes()


def test_pi_1_6_delta_only_events_read_and_write_back_byte_for_byte() -> None:
    """pi's json mode: each `message_update` carries an AssistantMessageEvent without `partial`;
    read, applied (so an `*_end` event's `content` can be written) and written back as pi wrote it."""
    accumulator, updates = pp.Accumulator(), 0
    for line in (FIXTURES / "events-json-mode.jsonl").read_text(encoding="utf-8").splitlines():
        event = pp.load_json(line)
        if event["type"] == "message_start" and event["message"]["role"] == "assistant":
            accumulator = pp.Accumulator()
            accumulator.apply(pp.ModelEvent(start=pp.StartEvent(header=pp.assistant_from_pi(event["message"]))))
        if event["type"] == "message_update":
            update = event["assistantMessageEvent"]
            model_event = event_from_pi(update)
            accumulator.apply(model_event)
            assert pp.dump_json(event_to_pi(model_event, delta_only=True)) == pp.dump_json(update)
            updates += 1
    assert updates == 25
    assert pp.text_of(accumulator.partial) == "README 的标题就是项目名：tiny-pi。"
