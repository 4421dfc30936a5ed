"""The digest a terminal event carries of the content its stream built (DoneEvent.content_sha256)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from .._gen.types.pi.ai.v1 import AssistantContent, AssistantMessage
from ..wire.codec import encode


def content_sha256(content: Sequence[AssistantContent]) -> bytes:
    """SHA-256 of the encoding of an AssistantMessage holding only `content`: what the sender and
    every receiver compute alike, since each block's fields are written in field-number order."""
    return hashlib.sha256(encode(AssistantMessage(content=list(content)))).digest()
