"""The JSON text rules: a string field marked with the `pi.ai.v1.json` option holds JSON text of
the shape the option asks for (json.proto), strict JSON that every runtime reads alike: no NaN or
Infinity, no duplicate keys, nesting at most MAX_JSON_DEPTH deep, numbers a double holds."""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message as UpbMessage

from .._gen.pb2.buf.validate import validate_pb2
from .._gen.pb2.pi.ai.v1 import json_pb2
from .violation import Violation

# Objects and arrays in JSON text nest at most this deep (the JsonText option's comment says so).
MAX_JSON_DEPTH = 64


def json_violations(message: UpbMessage) -> Iterator[Violation]:
    """The JSON text rules of every field marked with the `pi.ai.v1.json` option, in field order."""
    yield from _walk(message, [])


_JSON_OPTION: Any = json_pb2.json  # the stubs do not type extensions
_FIELD_RULES: Any = validate_pb2.field


@dataclass(frozen=True)
class _Text:
    field: str
    object_required: bool
    empty_allowed: bool
    has_presence: bool
    modelled_keys: frozenset[str]  # keys an extra_json text must not hold


@dataclass(frozen=True)
class _Plan:
    texts: tuple[_Text, ...]
    singles: tuple[str, ...]  # message fields that hold JSON text somewhere inside
    lists: tuple[str, ...]  # repeated message fields that do


@functools.cache
def _plan(descriptor: Descriptor) -> _Plan:
    texts: list[_Text] = []
    singles: list[str] = []
    lists: list[str] = []
    for field in descriptor.fields:
        options = field.GetOptions()
        if options.Extensions[_FIELD_RULES].ignore == validate_pb2.IGNORE_ALWAYS:
            continue  # unfinished messages (a partial, a start header): no rule applies inside
        if options.HasExtension(_JSON_OPTION):
            rule: json_pb2.JsonText = options.Extensions[_JSON_OPTION]
            shape_is_object = rule.shape == json_pb2.JSON_SHAPE_OBJECT
            keys = frozenset(rule.modelled_keys)
            texts.append(_Text(field.name, shape_is_object, rule.empty_allowed, field.has_presence, keys))
        elif field.message_type is not None and _holds_json(field.message_type):
            (lists if field.is_repeated else singles).append(field.name)
    return _Plan(tuple(texts), tuple(singles), tuple(lists))


@functools.cache
def _holds_json(descriptor: Descriptor) -> bool:
    plan = _plan(descriptor)  # the schema has no recursive messages
    return bool(plan.texts or plan.singles or plan.lists)


def _walk(message: UpbMessage, path: list[str]) -> Iterator[Violation]:
    plan = _plan(message.DESCRIPTOR)
    for rule in plan.texts:
        if rule.has_presence and not message.HasField(rule.field):
            continue
        text = getattr(message, rule.field)
        if not text and rule.empty_allowed:
            continue
        problem = json_text_problem(text, object_required=rule.object_required)
        if problem is None and rule.modelled_keys:
            problem = _modelled_key_problem(text, rule.modelled_keys)
        if problem is not None:
            yield Violation(".".join([*path, rule.field]), *problem)
    for name in plan.singles:
        if message.HasField(name):
            yield from _walk(getattr(message, name), [*path, name])
    for name in plan.lists:
        for index, item in enumerate(getattr(message, name)):
            yield from _walk(item, [*path, f"{name}[{index}]"])


def json_text_problem(text: str, *, object_required: bool = False) -> tuple[str, str] | None:
    """What is wrong with JSON text, as (rule id, detail); None when nothing is.

    RFC 8259 text, as JSON.parse reads it: no NaN or Infinity, every number within a double's
    range, at most MAX_JSON_DEPTH levels of objects and arrays; a duplicate key is allowed.
    """
    try:
        value = json.loads(text, parse_constant=_not_json)
    except json.JSONDecodeError as error:
        return "json.syntax", f"not valid JSON: {error}"
    except RecursionError:  # nested beyond Python's own limit: a syntax error anywhere still comes first
        if (problem := _syntax_error(text)) is not None:
            return "json.syntax", problem
        return "json.depth", f"nested deeper than {MAX_JSON_DEPTH}"
    except ValueError as error:  # an integer too long for int(), or a constant _not_json refused
        if isinstance(error, _Constant):
            return "json.syntax", str(error)
        return "json.number", "holds a number beyond the range of a double"
    depth, in_range = _measure(value)
    if depth > MAX_JSON_DEPTH:
        return "json.depth", f"nested {depth} deep, deeper than {MAX_JSON_DEPTH}"
    if not in_range:
        return "json.number", "holds a number beyond the range of a double"
    if object_required and not isinstance(value, dict):
        return "json.object", f"must hold a JSON object, got {json_type(value)}"
    return None


def _modelled_key_problem(text: str, modelled: frozenset[str]) -> tuple[str, str] | None:
    """The first key of an extra_json object that its message models, unless it holds an empty
    array or object (which a repeated field cannot tell from none)."""
    for key, value in json.loads(text).items():
        if key in modelled and value not in ([], {}):
            return "json.extra", f"holds {key!r}, a key the message models as a field"
    return None


_TOKEN = re.compile(
    r"[ \t\n\r]*(?:(?P<open>[\[{])|(?P<close>[\]}])|(?P<comma>,)|(?P<colon>:)"
    r'|(?P<string>"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*")'
    r"|(?P<scalar>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null))"
)


def _syntax_error(text: str) -> str | None:
    """Where text too deep for json.loads breaks JSON's grammar, if it does; without recursion."""
    stack: list[str] = []  # open containers
    expect = "value"  # what may come next: "value", "key", "colon", "after"; "value?" and "key?" may also close
    at = 0
    text = text.rstrip(" \t\n\r")
    while at < len(text):
        token = _TOKEN.match(text, at)
        if token is None:
            return f"not valid JSON at character {at}"
        at, kind = token.end(), token.lastgroup or ""
        inner = stack[-1] if stack else ""
        if kind == "open" and expect in ("value", "value?"):
            stack.append(token.group(kind))
            expect = "key?" if token.group(kind) == "{" else "value?"
        elif kind == "close" and expect in ("after", "key?" if inner == "{" else "value?") and inner:
            stack.pop()
            expect = "after"
        elif kind == "string" and expect in ("key", "key?"):
            expect = "colon"
        elif kind in ("string", "scalar") and expect in ("value", "value?"):
            expect = "after"
        elif kind == "colon" and expect == "colon":
            expect = "value"
        elif kind == "comma" and expect == "after" and inner:
            expect = "key" if inner == "{" else "value"
        else:
            return f"not valid JSON at character {token.start(kind)}"
        if not stack and expect == "after" and at < len(text):
            return f"not valid JSON at character {at}: more after the value"
    return None if not stack and expect == "after" else "not valid JSON: the text ends inside a value"


class _Constant(ValueError):
    pass


def _not_json(name: str) -> Any:
    raise _Constant(f"{name} is not JSON")


def _measure(value: Any) -> tuple[int, bool]:
    """The nesting depth of parsed JSON and whether every number fits a double, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
        elif (isinstance(item, float) and math.isinf(item)) or (
            isinstance(item, int) and abs(item) > 2**53 and not _fits_double(item)
        ):
            return deepest, False
    return deepest, True


def _fits_double(number: int) -> bool:
    try:
        float(number)
    except OverflowError:
        return False
    return True


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type: object, array, string, number, boolean or null."""
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return "a string" if isinstance(value, str) else "a number"


@functools.cache
def modelled_keys(descriptor: Descriptor, field: str = "extra_json") -> tuple[str, ...]:
    """The keys of pi's object that `descriptor`'s message models, in the order pi writes them:
    the `modelled_keys` of the JsonText option of its `field`."""
    return tuple(descriptor.fields_by_name[field].GetOptions().Extensions[_JSON_OPTION].modelled_keys)
