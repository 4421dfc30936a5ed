"""Message rules: the schema's protovalidate rules, then its JSON text rules.

Every rule that fits one message is a `buf.validate` annotation in proto/pi/ai/v1, enforced here
by protovalidate. What an annotation cannot say is whether a string holds the JSON that the
field's `pi.ai.v1.json` option asks for; json_text.py checks that, once a message passes the
annotations. A broken rule is a Violation: the field's path from the checked message, the rule's
id and a detail, e.g. `context.messages[2].assistant.content[1].tool_call.arguments_json`,
`json.object`, "must hold a JSON object, got an array". The rules of a stream of events live with
the Accumulator that applies them.
"""

from __future__ import annotations

import json
from typing import Any

import betterproto2
import protovalidate
from google.protobuf.message import Message as UpbMessage

from .codec import to_upb
from .json_text import json_violations
from .violation import ValidationError, Violation

__all__ = ["ValidationError", "Violation", "check", "violations"]


def violations(message: betterproto2.Message | UpbMessage) -> list[Violation]:
    """Every broken rule of a message: the protovalidate rules, or if they all hold, the JSON text rules."""
    upb = message if isinstance(message, UpbMessage) else to_upb(message)
    found = [_violation(item.proto) for item in protovalidate.collect_violations(upb)]
    return found or list(json_violations(upb))


def check(message: betterproto2.Message | UpbMessage) -> None:
    """Raise ValidationError if the message breaks any rule."""
    found = violations(message)
    if found:
        raise ValidationError(found)


def _violation(proto: Any) -> Violation:
    path = []
    for element in proto.field.elements if proto.field is not None else ():
        step = element.field_name
        subscript = element.subscript
        if subscript is not None:
            step += f"[{json.dumps(subscript.value) if subscript.field == 'string_key' else subscript.value}]"
        path.append(step)
    return Violation(".".join(path), proto.rule_id, proto.message)
