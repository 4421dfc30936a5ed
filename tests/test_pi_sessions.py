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
    assert len(SESSIONS) >= 15
    assert types >= {
        "session", "model_change", "thinking_level_change", "message", "compaction", "branch_summary", "label",
        "session_info", "custom", "custom_message", "context_edit", "role:system", "role:user", "role:assistant",
        "role:toolResult", "role:bashExecution",
    }  # fmt: skip


@pytest.mark.parametrize("path", SESSIONS, ids=[path.name for path in SESSIONS])
def test_every_line_comes_back_byte_for_byte(path: Path) -> None:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        entry = pp.decode(pp.TranscriptEntry, pp.encode(pp.entry_from_pi(pp.load_json(line), f"line {number}")))
        assert pp.dump_json(pp.entry_to_pi(entry)) == line, f"{path.name}: line {number}"


@pytest.mark.parametrize("path", SESSIONS, ids=[path.name for path in SESSIONS])
@pytest.mark.parametrize("through", [".binpb", ".json"])
def test_convert_and_back_is_byte_for_byte(path: Path, through: str, tmp_path: Path) -> None:
    """Through binary and through ProtoJSON (where a root entry's parent is `"root": null`)."""
    converted, back = tmp_path / f"session{through}", tmp_path / "session.jsonl"
    convert(path, converted)
    convert(converted, back)
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


_BODIES = (
    "header", "thinking_level_change", "model_change", "usage", "compaction", "branch_summary", "custom",
    "custom_message", "label", "session_info", "context_edit",
)  # fmt: skip


def _body(entry: pp.TranscriptEntry) -> str | None:
    assert entry.session_entry is not None
    return next((member for member in _BODIES if getattr(entry.session_entry, member) is not None), None)


@pytest.mark.parametrize("path", SESSIONS, ids=[path.name for path in SESSIONS])
def test_every_entry_pi_wrote_is_typed(path: Path) -> None:
    """No entry of pi's own types is left as JSON text: each has its body, id and timestamp."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        entry = pp.entry_from_pi(pp.load_json(line))
        assert entry.id is not None, f"line {number}"
        assert entry.timestamp is not None, f"line {number}"
        if entry.session_entry is None:
            assert entry.session_json == "", f"line {number}: the envelope is typed"
            continue
        body = _body(entry)
        assert body is not None, f"line {number}: {entry.session_entry.type} is untyped"
        assert entry.session_entry.fields_json == ""
        assert getattr(entry.session_entry, body).extra_json == "", f"line {number}: keys left untyped"


def test_the_tree_is_walked_without_json() -> None:
    """branch.jsonl: each parent is an earlier entry, there is one root, the summary's fromId is in the tree."""
    entries = [pp.entry_from_pi(pp.load_json(line)) for line in (FIXTURES / "branch.jsonl").read_text().splitlines()]
    seen: set[str] = set()
    roots = 0
    for entry in entries[1:]:  # the header is the session's, not the tree's
        assert entry.id is not None
        if entry.root is not None:
            roots += 1
        else:
            assert entry.parent_id in seen, entry
        seen.add(entry.id)
    assert roots == 1
    (summary,) = [
        entry.session_entry.branch_summary
        for entry in entries
        if entry.session_entry and _body(entry) == "branch_summary"
    ]
    assert summary is not None
    assert summary.from_id in seen
    assert summary.usage is not None
    assert summary.usage.total_tokens == 52


def test_an_edited_entry_writes_what_was_set() -> None:
    line = (
        '{"type":"label","id":"74d38200","parentId":"50667f34","timestamp":"2026-12-02T06:19:59.678Z",'
        '"targetId":"50667f34","label":"checkpoint-1"}'
    )
    entry = pp.entry_from_pi(pp.load_json(line))
    assert entry.session_entry is not None
    assert entry.session_entry.label is not None
    entry.session_entry.label.label = "checkpoint-2"
    entry.parent_id = "74d38100"
    written = pp.dump_json(pp.entry_to_pi(entry))
    assert written == line.replace("checkpoint-1", "checkpoint-2").replace(
        '"parentId":"50667f34"', '"parentId":"74d38100"'
    )


def test_an_unknown_entry_type_round_trips_with_its_place_typed() -> None:
    line = (
        '{"type":"bookmark","id":"77aa88bb","parentId":null,"timestamp":"2026-12-02T06:20:00.487Z",'
        '"note":"here","at":[1,2.5]}'
    )
    entry = pp.decode(pp.TranscriptEntry, pp.encode(pp.entry_from_pi(pp.load_json(line))))
    assert entry.session_entry is not None
    assert _body(entry) is None
    assert (entry.id, entry.root is not None) == ("77aa88bb", True)
    assert json.loads(entry.session_entry.fields_json) == {"note": "here", "at": [1, 2.5]}
    assert pp.dump_json(pp.entry_to_pi(entry)) == line


def test_a_bad_parent_is_refused_at_its_key() -> None:
    with pytest.raises(pp.PiJsonError) as raised:
        pp.entry_from_pi({"type": "label", "id": "a", "parentId": 7, "timestamp": "t"})
    assert raised.value.path == "entry.parentId"


@pytest.mark.parametrize("path", SESSIONS, ids=[path.name for path in SESSIONS])
def test_a_whole_file_reads_one_entry_a_line_and_writes_back_the_same_text(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    warnings: list[pp.SessionWarning] = []
    entries = pp.session_from_pi(text, warnings)
    assert (len(entries), warnings) == (text.count("\n"), [])
    assert pp.session_to_pi(pp.decode(pp.TranscriptEntry, pp.encode(entry)) for entry in entries) == text


def test_a_line_pi_wrote_with_two_entries_run_together_is_kept_and_named() -> None:
    """The session files pi committed to its own repository (fixtures/pi-sessions/README.md): pi's
    loader skips the line, with both entries on it; the reader keeps it as it is, and says so."""
    for name, bad in (("entries-run-together-message.jsonl", 4), ("entries-run-together-compaction.jsonl", 5)):
        text = (FIXTURES.parent / "pi-sessions" / name).read_text(encoding="utf-8")
        warnings: list[pp.SessionWarning] = []
        entries = pp.session_from_pi(text, warnings)
        assert [warning.line for warning in warnings] == [bad], name
        assert warnings[0].message.startswith("not one JSON entry (not JSON: Extra data"), name
        assert entries[bad - 1].unparsed_line == text.splitlines()[bad - 1], name
        back = [pp.decode_json(pp.TranscriptEntry, pp.to_json(entry)) for entry in entries]  # through ProtoJSON
        assert pp.session_to_pi(back) == text, name
    with pytest.raises(pp.SessionLineError) as raised:  # JSON of no entry is refused, naming its line
        pp.session_from_pi('{"type":"session","id":"s"}\n\n{"type":"label","parentId":7}\n')
    assert (raised.value.line, raised.value.path, str(raised.value)[:8]) == (3, "entry.parentId", "line 3: ")
    with pytest.raises(pp.PiJsonError, match="unparsed_line: a line that is not one JSON entry has no object"):
        pp.entry_to_pi(pp.TranscriptEntry(unparsed_line="}{"))
