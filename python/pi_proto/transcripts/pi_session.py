"""The lines of a pi session file, typed: a message entry, the header, and every entry type
pi-coding-agent defines (a model change, a compaction, a label, ...), with each line's `id`,
`parentId` and `timestamp` on its TranscriptEntry so the session's tree can be walked.

An entry of a type that has no body here keeps its keys in `SessionEntry.fields_json`. Each type's
keys are written in the order pi's session manager writes them, which the schema gives as the
`modelled_keys` of the body's `extra_json` (so the writer has no table of its own).

A whole file is read by `session_from_pi`, one entry a line: a line that is not one JSON entry (a
blank line, text that is not JSON, JSON that is not an object, two entries run together) is kept
byte for byte as an `unparsed_line`, with a SessionWarning naming it, and `session_to_pi` writes it
back as it was. pi's own loader skips such a line; refusing the file would lose the rest of it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .._gen.pb2.pi.ai.v1 import transcript_pb2
from .._gen.types.google.protobuf import NullValue
from .._gen.types.pi.ai.v1 import (
    AssistantContent,
    BranchSummary,
    Compaction,
    ContentBlock,
    ContextEdit,
    ContextReplacement,
    CustomEntry,
    CustomMessageEntry,
    ImageContent,
    Label,
    ModelChange,
    SessionEntry,
    SessionHeader,
    SessionInfo,
    TextContent,
    ThinkingLevelChange,
    TranscriptEntry,
    UsageRecord,
)
from ..ir.messages import dump_json, load_json
from ..wire.json_text import modelled_keys
from .pi_json import (
    JsonObject,
    PiJsonError,
    _assistant_block,
    _assistant_block_to_pi,
    _at,
    _in_order,
    _media_block,
    _media_block_to_pi,
    _put,
    _Reader,
    _system_from_pi,
    _system_to_pi,
    _type_name,
    _usage,
    _usage_to_pi,
    _user_content,
    _user_content_to_pi,
    _with_extra,
    message_from_pi,
    message_to_pi,
    pi_reader,
    pi_writer,
)

_BASE = ("type", "id", "parentId", "timestamp")  # what an entry of an untyped type is written with


@functools.cache
def _keys(name: str) -> tuple[str, ...]:
    field = "session_json" if name == "TranscriptEntry" else "extra_json"  # a message entry's unmodelled keys
    return modelled_keys(transcript_pb2.DESCRIPTOR.message_types_by_name[name], field)


# --- reading -------------------------------------------------------------------------------------


@pi_reader
def entry_from_pi(value: Any, where: str = "entry") -> TranscriptEntry:
    """Convert one line of a pi session file, or one bare pi-JSON message."""
    if not isinstance(value, Mapping):
        raise PiJsonError(where, f"expected an object, got {_type_name(value)}")
    if "role" in value:
        return TranscriptEntry(message=message_from_pi(value, where))
    kind = value.get("type")
    if kind == "message" and "message" in value:
        read = _Reader(value, where, _keys("TranscriptEntry"))
        entry = _placed(read, message=message_from_pi(value["message"], _at(where, "message")))
        placed = entry.id is not None or entry.parent_id is not None or entry.root is not None
        entry.session_json = read.extra_json() or ("" if placed or entry.timestamp is not None else "{}")
        return entry
    if not isinstance(kind, str) or not kind:
        raise PiJsonError(where, "neither a message (no 'role') nor a session entry (no 'type')")
    if (body := _BODIES.get(kind)) is None:
        read = _Reader(value, where, _BASE)
        entry = _placed(read)
        entry.session_entry = SessionEntry(type=kind, fields_json=read.extra_json())
        return entry
    member, message_type, read_body = body
    read = _Reader(value, where, _keys(message_type))
    entry = _placed(read)
    typed = read_body(read)
    typed.extra_json = read.extra_json()
    entry.session_entry = SessionEntry(type=kind, **{member: typed})
    return entry


def _placed(read: _Reader, **entry: Any) -> TranscriptEntry:
    """A TranscriptEntry with the line's id, parent and timestamp, each where its type has it."""
    read.string("type")
    parent: dict[str, Any] = {}
    if "parentId" in read.known and "parentId" in read.obj:
        if read.obj["parentId"] is None:
            parent["root"] = NullValue.NULL_VALUE
        else:
            parent["parent_id"] = read.string("parentId")
    return TranscriptEntry(
        **entry,
        id=read.optional_string("id") if "id" in read.known else None,
        timestamp=read.optional_string("timestamp") if "timestamp" in read.known else None,
        **parent,
    )


def _header(read: _Reader) -> SessionHeader:
    return SessionHeader(
        version=read.optional_integer("version"),
        cwd=read.optional_string("cwd"),
        parent_session=read.optional_string("parentSession"),
    )


def _thinking_level_change(read: _Reader) -> ThinkingLevelChange:
    return ThinkingLevelChange(thinking_level=read.optional_string("thinkingLevel"))


def _model_change(read: _Reader) -> ModelChange:
    return ModelChange(provider=read.optional_string("provider"), model_id=read.optional_string("modelId"))


def _usage_record(read: _Reader) -> UsageRecord:
    return UsageRecord(
        kind=read.optional_string("kind"),
        provider=read.optional_string("provider"),
        model=read.optional_string("model"),
        usage=read.child("usage", _usage),
        note=read.optional_string("note"),
    )


def _compaction(read: _Reader) -> Compaction:
    return Compaction(
        summary=read.optional_string("summary"),
        first_kept_entry_id=read.optional_string("firstKeptEntryId"),
        tokens_before=read.optional_integer("tokensBefore"),
        details_json=read.json_text("details") or "",
        usage=read.child("usage", _usage),
        from_hook=read.optional_boolean("fromHook"),
        system_message=read.child("systemMessage", _system_from_pi),
    )


def _branch_summary(read: _Reader) -> BranchSummary:
    return BranchSummary(
        from_id=read.optional_string("fromId"),
        summary=read.optional_string("summary"),
        details_json=read.json_text("details") or "",
        usage=read.child("usage", _usage),
        from_hook=read.optional_boolean("fromHook"),
    )


def _custom(read: _Reader) -> CustomEntry:
    return CustomEntry(custom_type=read.optional_string("customType"), data_json=read.json_text("data") or "")


def _custom_message(read: _Reader) -> CustomMessageEntry:
    blocks, string_content = _user_content(read) if "content" in read.obj else ([], False)
    return CustomMessageEntry(
        custom_type=read.optional_string("customType"),
        content=blocks,
        string_content=string_content,
        display=read.optional_boolean("display"),
        details_json=read.json_text("details") or "",
    )


def _label(read: _Reader) -> Label:
    return Label(target_id=read.optional_string("targetId"), label=read.optional_string("label"))


def _session_info(read: _Reader) -> SessionInfo:
    return SessionInfo(name=read.optional_string("name"))


def _context_edit(read: _Reader) -> ContextEdit:
    replacement = read.obj.get("replacement")
    return ContextEdit(
        target_id=read.optional_string("targetId"),
        replacement=None if replacement is None else _replacement(replacement, _at(read.where, "replacement")),
    )


def _replacement(value: Any, where: str) -> ContextReplacement:
    read = _Reader(value, where, _keys("ContextReplacement"))
    content = value.get("content")
    if isinstance(content, str):
        blocks = [ContentBlock(text=TextContent(text=content))]
    else:
        blocks = read.items("content", _content_block)
    return ContextReplacement(content=blocks, string_content=isinstance(content, str), extra_json=read.extra_json())


def _content_block(value: Any, where: str) -> ContentBlock:
    """A block of any role's content: what a context edit may put in place of a message's."""
    if isinstance(value, Mapping) and value.get("type") == "image":
        image = _media_block(value, where)
        assert isinstance(image, ImageContent)
        return ContentBlock(image=image)
    block = _assistant_block(value, where)
    return ContentBlock(text=block.text, thinking=block.thinking, tool_call=block.tool_call)


# The typed entry types: pi's type name -> (SessionEntry's member, its message, its reader).
_BODIES: dict[str, tuple[str, str, Callable[[_Reader], Any]]] = {
    "session": ("header", "SessionHeader", _header),
    "thinking_level_change": ("thinking_level_change", "ThinkingLevelChange", _thinking_level_change),
    "model_change": ("model_change", "ModelChange", _model_change),
    "usage": ("usage", "UsageRecord", _usage_record),
    "compaction": ("compaction", "Compaction", _compaction),
    "branch_summary": ("branch_summary", "BranchSummary", _branch_summary),
    "custom": ("custom", "CustomEntry", _custom),
    "custom_message": ("custom_message", "CustomMessageEntry", _custom_message),
    "label": ("label", "Label", _label),
    "session_info": ("session_info", "SessionInfo", _session_info),
    "context_edit": ("context_edit", "ContextEdit", _context_edit),
}


# --- writing -------------------------------------------------------------------------------------


@pi_writer
def entry_to_pi(entry: TranscriptEntry) -> JsonObject:
    """Convert a transcript entry back to its line: a session file's entry if it came from one."""
    if entry.unparsed_line is not None:
        raise PiJsonError("TranscriptEntry.unparsed_line", "a line that is not one JSON entry has no object to write")
    if (session_entry := entry.session_entry) is not None:
        out = _placed_to_pi(session_entry.type, entry)
        for member, message_type, _ in _BODIES.values():
            if (typed := getattr(session_entry, member)) is not None:
                _WRITERS[member](out, typed)
                return _finish(out, typed.extra_json, message_type)
        return _with_extra(out, session_entry.fields_json, "SessionEntry", _BASE)  # written in _BASE order
    if entry.message is None:
        raise PiJsonError("TranscriptEntry", "no entry is set")
    message = message_to_pi(entry.message)
    placed = entry.id is not None or entry.parent_id is not None or entry.root is not None
    if not (placed or entry.timestamp is not None or entry.session_json):
        return message
    out = _placed_to_pi("message", entry)
    out["message"] = message
    return _finish(out, entry.session_json, "TranscriptEntry")


def _finish(out: JsonObject, extra_json: str, message_type: str) -> JsonObject:
    """`out` with the line's extras, its keys in the order pi writes the type's."""
    keys = _keys(message_type)
    return _with_extra(out, extra_json, message_type, keys) if extra_json else _in_order(out, keys)


def _placed_to_pi(kind: str, entry: TranscriptEntry) -> JsonObject:
    out: JsonObject = {"type": kind}
    _put(out, "id", entry.id)
    if entry.parent_id is not None:
        out["parentId"] = entry.parent_id
    elif entry.root is not None:
        out["parentId"] = None
    _put(out, "timestamp", entry.timestamp)
    return out


def _json(out: JsonObject, key: str, text: str) -> None:
    """Write a JSON-text field: empty leaves the key out."""
    if text:
        out[key] = json.loads(text)


def _header_to_pi(out: JsonObject, header: SessionHeader) -> None:
    _put(out, "version", header.version)
    _put(out, "cwd", header.cwd)
    _put(out, "parentSession", header.parent_session)


def _thinking_level_change_to_pi(out: JsonObject, change: ThinkingLevelChange) -> None:
    _put(out, "thinkingLevel", change.thinking_level)


def _model_change_to_pi(out: JsonObject, change: ModelChange) -> None:
    _put(out, "provider", change.provider)
    _put(out, "modelId", change.model_id)


def _usage_record_to_pi(out: JsonObject, record: UsageRecord) -> None:
    _put(out, "kind", record.kind)
    _put(out, "provider", record.provider)
    _put(out, "model", record.model)
    if record.usage is not None:
        out["usage"] = _usage_to_pi(record.usage)
    _put(out, "note", record.note)


def _compaction_to_pi(out: JsonObject, compaction: Compaction) -> None:
    _put(out, "summary", compaction.summary)
    _put(out, "firstKeptEntryId", compaction.first_kept_entry_id)
    _put(out, "tokensBefore", compaction.tokens_before)
    _json(out, "details", compaction.details_json)
    if compaction.usage is not None:
        out["usage"] = _usage_to_pi(compaction.usage)
    _put(out, "fromHook", compaction.from_hook)
    if compaction.system_message is not None:
        out["systemMessage"] = _system_to_pi(compaction.system_message)


def _branch_summary_to_pi(out: JsonObject, summary: BranchSummary) -> None:
    _put(out, "fromId", summary.from_id)
    _put(out, "summary", summary.summary)
    _json(out, "details", summary.details_json)
    if summary.usage is not None:
        out["usage"] = _usage_to_pi(summary.usage)
    _put(out, "fromHook", summary.from_hook)


def _custom_to_pi(out: JsonObject, custom: CustomEntry) -> None:
    _put(out, "customType", custom.custom_type)
    _json(out, "data", custom.data_json)


def _custom_message_to_pi(out: JsonObject, custom: CustomMessageEntry) -> None:
    _put(out, "customType", custom.custom_type)
    out["content"] = _user_content_to_pi(custom.content, custom.string_content)
    _put(out, "display", custom.display)
    _json(out, "details", custom.details_json)


def _label_to_pi(out: JsonObject, label: Label) -> None:
    _put(out, "targetId", label.target_id)
    _put(out, "label", label.label)


def _session_info_to_pi(out: JsonObject, info: SessionInfo) -> None:
    _put(out, "name", info.name)


def _context_edit_to_pi(out: JsonObject, edit: ContextEdit) -> None:
    _put(out, "targetId", edit.target_id)
    out["replacement"] = None if edit.replacement is None else _replacement_to_pi(edit.replacement)


def _replacement_to_pi(replacement: ContextReplacement) -> JsonObject:
    content: Any
    blocks = replacement.content
    if replacement.string_content and len(blocks) == 1 and blocks[0].text is not None:
        content = blocks[0].text.text
    else:
        content = [_content_block_to_pi(block) for block in blocks]
    return _with_extra({"content": content}, replacement.extra_json, "ContextReplacement", _keys("ContextReplacement"))


def _content_block_to_pi(block: ContentBlock) -> JsonObject:
    if block.image is not None:
        return _media_block_to_pi(block.image)
    return _assistant_block_to_pi(AssistantContent(text=block.text, thinking=block.thinking, tool_call=block.tool_call))


_WRITERS: dict[str, Callable[[JsonObject, Any], None]] = {
    "header": _header_to_pi,
    "thinking_level_change": _thinking_level_change_to_pi,
    "model_change": _model_change_to_pi,
    "usage": _usage_record_to_pi,
    "compaction": _compaction_to_pi,
    "branch_summary": _branch_summary_to_pi,
    "custom": _custom_to_pi,
    "custom_message": _custom_message_to_pi,
    "label": _label_to_pi,
    "session_info": _session_info_to_pi,
    "context_edit": _context_edit_to_pi,
}


# --- session files -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionWarning:
    """A line of a session file that is not one JSON entry, read as an `unparsed_line`."""

    line: int  # counted from 1
    message: str  # why the line is not one JSON entry


class SessionLineError(PiJsonError):
    """A line of a session file that is JSON of no entry pi-JSON can read: its `line` (from 1), and
    the path and detail of the error on it."""

    def __init__(self, line: int, error: PiJsonError) -> None:
        super().__init__(error.path, error.detail)
        self.args = (f"line {line}: {error}",)
        self.line = line


def session_line_from_pi(line: str) -> tuple[TranscriptEntry, str]:
    """One line of a session file, without its newline: its entry, and why it is not one JSON entry
    ("" when it is). Such a line is an `unparsed_line`, kept as it is; JSON of an object that is no
    entry raises PiJsonError, its path starting at `entry`."""
    try:
        value = load_json(line)
    except json.JSONDecodeError as error:
        return TranscriptEntry(unparsed_line=line), f"not JSON: {error}" if line.strip(" \t\r") else "a blank line"
    except RecursionError:
        return TranscriptEntry(unparsed_line=line), "JSON nested too deep to read"
    except ValueError as error:  # NaN or Infinity, or an integer too long for int()
        return TranscriptEntry(unparsed_line=line), str(error)
    if not isinstance(value, Mapping):
        return TranscriptEntry(unparsed_line=line), f"JSON that is not an object: {_type_name(value)}"
    return entry_from_pi(value, "entry"), ""


def session_line_to_pi(entry: TranscriptEntry) -> str:
    """An entry's line, without its newline: an unparsed line as it was read."""
    if (line := entry.unparsed_line) is None:
        return dump_json(entry_to_pi(entry))  # as pi writes a line: JSON.stringify
    if "\n" in line:
        raise PiJsonError("TranscriptEntry.unparsed_line", "holds a newline, so it would be read back as two lines")
    return line


def session_from_pi(text: str, warnings: list[SessionWarning] | None = None) -> list[TranscriptEntry]:
    """A pi session file's text as its entries, one a line: the entry of line n is entries[n - 1].

    A line that is not one JSON entry is an `unparsed_line`, and a SessionWarning naming it is added
    to `warnings`. A line of JSON that is no entry raises SessionLineError.
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line starts no line after it
    entries = []
    for number, line in enumerate(lines, 1):
        try:
            entry, unparsed = session_line_from_pi(line)
        except PiJsonError as error:
            raise SessionLineError(number, error) from None
        if unparsed and warnings is not None:
            warnings.append(SessionWarning(number, f"not one JSON entry ({unparsed}); kept as it is"))
        entries.append(entry)
    return entries


def session_to_pi(entries: Iterable[TranscriptEntry]) -> str:
    """Entries as the text of a pi session file: each entry's line and a newline, as pi writes them."""
    return "".join(f"{session_line_to_pi(entry)}\n" for entry in entries)
