"""JSON equality that also compares number types: 1 and 1.0 differ, True and 1 differ."""

from __future__ import annotations

from typing import Any


def same_json(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def same_in_javascript(a: Any, b: Any) -> bool:
    """Equal as JSON values under JavaScript's number semantics: a number is a double, so `1` and
    `1.0` are the same value (and `true` is still not `1`)."""
    numbers = (int, float)
    if type(a) in numbers and type(b) in numbers:
        return float(a) == float(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_in_javascript(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_in_javascript(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
