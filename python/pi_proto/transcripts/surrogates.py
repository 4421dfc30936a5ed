"""Lone surrogates: text pi writes that a protobuf string cannot hold.

JavaScript strings are UTF-16, and pi writes whatever they hold: a stream cut inside a surrogate
pair leaves a lone surrogate, which JSON.stringify writes as an escape (`"\\ud83d"`). Protobuf
strings are UTF-8, which has no lone surrogates. So the pi-JSON codec maps each of the 2,048
surrogates U+D800 + k to U+10F800 + k, the top of plane 16 (private use), when it reads, and back
when it writes. To keep that reversible, a character of that range in the text itself (U+10F7FF
to U+10FFFF) is read as U+10F7FF followed by itself. Every runtime's pi-JSON codec maps the same
way (the conformance corpus's `pi_json/lone-surrogate*` cases pin it).
"""

from __future__ import annotations

import re
from typing import Any

SURROGATES = 0xD800
MAPPED = 0x10F800  # where surrogate U+D800 + k goes: U+10F800 + k
ESCAPE = "\U0010f7ff"  # in front of a character of the mapped range that was in the text itself
_TO_PROTO = re.compile("[\ud800-\udfff\U0010f7ff-\U0010ffff]")
_FROM_PROTO = re.compile("\U0010f7ff[\U0010f7ff-\U0010ffff]?|[\U0010f800-\U0010ffff]")
# What _FROM_PROTO can match starts with one of these: a character class, which re scans for
# several times faster than it tries _FROM_PROTO's alternatives at every place of a long text.
_MAPPED = re.compile("[\U0010f7ff-\U0010ffff]")


# Every character either pattern looks for is beyond ASCII, and str.isascii() answers from a flag
# Python keeps, without reading the text: most text is ASCII and skips the scan.


def to_proto(text: str) -> str:
    """`text` as a protobuf string holds it."""
    return text if text.isascii() or _TO_PROTO.search(text) is None else _TO_PROTO.sub(_mapped, text)


def from_proto(text: str) -> str:
    """The text `to_proto` mapped, as it was."""
    return text if text.isascii() or _MAPPED.search(text) is None else _FROM_PROTO.sub(_unmapped, text)


def has_mapped(text: str) -> bool:
    """Whether from_proto may change `text`: it holds a character of the mapped range."""
    return not text.isascii() and _MAPPED.search(text) is not None


def to_proto_value(value: Any) -> Any:
    """A parsed JSON value with every string (keys too) mapped by to_proto."""
    return _walk(value, to_proto, _TO_PROTO)


def from_proto_value(value: Any) -> Any:
    """A JSON value with every string (keys too) mapped back by from_proto."""
    return _walk(value, from_proto, _MAPPED)


def _mapped(found: re.Match[str]) -> str:
    char = found.group()
    return chr(MAPPED + ord(char) - SURROGATES) if ord(char) < 0xE000 else ESCAPE + char


def _unmapped(found: re.Match[str]) -> str:
    text = found.group()
    if text[0] == ESCAPE:
        return text[1:] or text  # an escaped character of the range; a lone ESCAPE stays
    return chr(SURROGATES + ord(text) - MAPPED)


def _walk(value: Any, change: Any, pattern: re.Pattern[str]) -> Any:
    if type(value) is str:
        return value if value.isascii() or pattern.search(value) is None else change(value)
    if type(value) is dict:
        return {_walk(key, change, pattern): _walk(item, change, pattern) for key, item in value.items()}
    if type(value) is list:
        return [_walk(item, change, pattern) for item in value]
    return value
