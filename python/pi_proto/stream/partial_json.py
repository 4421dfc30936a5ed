"""Tool-call argument text cut short, completed into the text of a JSON object.

While a tool call streams, a receiver's partial shows its arguments so far (pi.ai.v1's
ToolCallDeltaEvent says how): an unfinished string is closed (an escape cut short is dropped), a
number cut short keeps its longest prefix that is a number, a cut-short true, false or null is
completed, a member or element that has not reached its value is dropped, and open arrays and
objects are closed. Text that cannot complete into a JSON object gives "{}".

`Completion` reads the text as it grows, from where it stopped, and keeps only the state the
completion needs, so a call whose arguments arrive in many deltas costs time linear in their
length to scan. Building the completed text copies it, so the accumulator builds it only when
the partial's arguments are read, not at every delta.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

EMPTY = "{}"
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
# What a number can start with: more characters may still make it a number.
_NUMBER_START = re.compile(r"-?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?(?:(?<=[0-9])[eE][+-]?[0-9]*)?)?")
_NUMBER_CHARS = frozenset("0123456789+-.eE")
# Runs read at once rather than a character at a time: most of a long argument is inside strings.
_STRING_STOP = re.compile(r'["\\\x00-\x1f]')  # what ends a run of plain string characters
_NUMBER_RUN = re.compile(r"[0-9+\-.eE]+")
_LITERALS = ("true", "false", "null")
_WHITESPACE = frozenset(" \t\n\r")
_ESCAPES = frozenset('"\\/bfnrtu')
_HEX = frozenset("0123456789abcdefABCDEF")

# What an open container waits for next.
_KEY_OR_END, _KEY, _COLON, _VALUE, _VALUE_OR_END, _AFTER_VALUE = range(6)


@dataclass
class _Container:
    closer: str  # "}" or "]"
    state: int
    keep: int  # the text up to here is whole: cut here to drop an unfinished member


@dataclass
class Completion:
    """The completion of one tool call's argument text, read as the text grows.

    It keeps no reference to the text: the caller passes it in, so the caller's string is the only
    one and CPython can grow it in place.
    """

    _at: int = 0  # how far the text has been read
    _stack: list[_Container] = field(default_factory=list)
    _token: str = ""  # "string", "key", "number", "literal" or "" between tokens
    _token_start: int = 0
    _escape: int = 0  # inside a string: 0, or how many characters of an escape were read
    _escape_start: int = 0
    _started: bool = False  # the top value has begun
    _finished: bool = False  # the top value has ended
    _broken: bool = False  # the text is not a prefix of one JSON object

    def update(self, text: str) -> str:
        """Read `text`, the text so far (what was read before, and more); return its completion."""
        self.read(text)
        return self.completed(text)

    def read(self, text: str) -> None:
        """Read `text`, the text so far (what was read before, and more), from where reading stopped."""
        if self._broken:
            return
        at = self._at
        while at < len(text):
            at = self._step(text, at)
            if self._broken:
                return
        self._at = at

    def completed(self, text: str) -> str:
        """`text`, the text read so far, completed into the text of a JSON object, or "{}"."""
        if self._broken or not self._started:
            return EMPTY
        if self._finished:
            return text
        closers = "".join(container.closer for container in reversed(self._stack))
        inner = self._stack[-1]
        if self._token == "string":
            end = self._escape_start if self._escape else len(text)
            return text[:end] + '"' + closers
        if self._token == "number":
            if _NUMBER_START.fullmatch(text, self._token_start) is None:
                return EMPTY  # no more text can make this a number
            prefix = _NUMBER.match(text, self._token_start, len(text))
            if prefix is not None and prefix.end() > self._token_start:
                return text[: prefix.end()] + closers
            return text[: inner.keep] + closers
        if self._token == "literal":
            word = text[self._token_start :]
            literal = next(candidate for candidate in _LITERALS if candidate.startswith(word))
            return text[: self._token_start] + literal + closers
        return text[: inner.keep] + closers

    def _step(self, text: str, at: int) -> int:
        """Read from `at`; return where to read next."""
        char = text[at]
        if self._token in ("string", "key"):
            if not self._escape and (stop := _STRING_STOP.search(text, at)) is not None:
                at = stop.start()
                return self._in_string(text[at], at)
            return len(text) if not self._escape else self._in_string(char, at)
        if self._token == "number":
            if char in _NUMBER_CHARS:
                run = _NUMBER_RUN.match(text, at)
                return run.end() if run is not None else at + 1
            token = text[self._token_start : at]
            if _NUMBER.fullmatch(token) is None:
                self._broken = True
                return at
            self._value_ended(at)
            return at  # the character that ended the number is read as what comes next
        if self._token == "literal":
            word = text[self._token_start : at + 1]
            if not any(candidate.startswith(word) for candidate in _LITERALS):
                self._broken = True
            elif word in _LITERALS:
                self._value_ended(at + 1)
            return at + 1
        if char in _WHITESPACE:
            return at + 1
        if self._finished:
            self._broken = True  # something after the object
            return at
        return self._between_tokens(char, at)

    def _in_string(self, char: str, at: int) -> int:
        if self._escape:
            if self._escape == 1:
                if char not in _ESCAPES:
                    self._broken = True
                self._escape = 2 if char == "u" else 0
            elif char not in _HEX:
                self._broken = True
            else:
                self._escape = 0 if self._escape == 5 else self._escape + 1
            return at + 1
        if char == "\\":
            self._escape, self._escape_start = 1, at
        elif char == '"':
            if self._token == "key":
                self._token = ""
                self._stack[-1].state = _COLON
            else:
                self._value_ended(at + 1)
        elif char < " ":
            self._broken = True  # a raw control character
        return at + 1

    def _between_tokens(self, char: str, at: int) -> int:
        inner = self._stack[-1] if self._stack else None
        state = inner.state if inner is not None else _VALUE
        if inner is None and self._started:
            self._broken = True
        elif state in (_KEY_OR_END, _KEY):
            if char == '"':
                self._token, self._token_start = "key", at
            elif char == "}" and state == _KEY_OR_END:
                self._close(at)
            else:
                self._broken = True
        elif state == _COLON:
            if char == ":":
                assert inner is not None
                inner.state = _VALUE
            else:
                self._broken = True
        elif state in (_VALUE, _VALUE_OR_END):
            if char == "]" and state == _VALUE_OR_END:
                self._close(at)
            else:
                self._value_starts(char, at)
        else:  # after a value: a comma or the container's end
            assert inner is not None
            if char == ",":
                inner.state = _KEY if inner.closer == "}" else _VALUE
            elif char == inner.closer:
                self._close(at)
            else:
                self._broken = True
        return at + 1

    def _value_starts(self, char: str, at: int) -> None:
        if not self._started:
            self._started = True
            if char != "{":
                self._broken = True  # only an object completes into arguments
                return
        if char in "{[":
            state = _KEY_OR_END if char == "{" else _VALUE_OR_END
            self._stack.append(_Container("}" if char == "{" else "]", state, at + 1))
        elif char == '"':
            self._token, self._token_start = "string", at
        elif char in "-0123456789":
            self._token, self._token_start = "number", at
        elif char in "tfn":
            self._token, self._token_start = "literal", at
        else:
            self._broken = True

    def _value_ended(self, end: int) -> None:
        self._token = ""
        inner = self._stack[-1]
        inner.state, inner.keep = _AFTER_VALUE, end

    def _close(self, at: int) -> None:
        self._stack.pop()
        if self._stack:
            self._value_ended(at + 1)
        else:
            self._finished = True


def complete_json(text: str) -> str:
    """The completion of argument text, read at once."""
    return Completion().update(text)
