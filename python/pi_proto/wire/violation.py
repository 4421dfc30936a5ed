"""A broken rule of a message, and the error that lists them: what the schema's rules
(validate.py) and its JSON text rules (json_text.py) report."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Violation:
    """One broken rule: where, which rule, and what is wrong."""

    field_path: str  # from the checked message, e.g. "context.messages[0].user.content[1].block"
    rule_id: str  # e.g. "string.min_len", "required", "json.syntax"
    detail: str

    def __str__(self) -> str:
        return f"{self.field_path or 'the message'}: {self.detail} [{self.rule_id}]"


class ValidationError(ValueError):
    """A message that breaks one or more rules; `violations` lists them."""

    def __init__(self, violations: list[Violation]) -> None:
        super().__init__("; ".join(str(violation) for violation in violations))
        self.violations = tuple(violations)
