"""The numbers of a wire stream's events (ModelEvent.seq), checked by its receiver (rule `sequence`)."""

from __future__ import annotations

from .._gen.types.pi.ai.v1 import ModelEvent, StreamRule
from ..ir.events import delta_of
from .accumulator import StreamProtocolError


class Numbering:
    """Which events of a numbered stream to apply: each once, none missing.

    The first event says whether the stream is numbered. In a numbered one, an event numbered at
    or below the last applied is a repeat, which a resumed server may send, and is dropped; one
    further on than the next breaks rule `sequence`, except a merged delta when the stream asked
    for `coalesce_deltas`. `last` is what a client resumes after.
    """

    def __init__(self, *, coalesced: bool = False) -> None:
        self.coalesced = coalesced
        self.last = 0
        self._numbered: bool | None = None

    def admit(self, event: ModelEvent, index: int) -> bool:
        """Whether to apply `event`, the stream's event `index`; False for a repeat; raises
        StreamProtocolError for a gap."""
        seq = event.seq
        if self._numbered is None:
            self._numbered = seq != 0
        if not self._numbered:
            if seq:
                raise StreamProtocolError(index, StreamRule.SEQUENCE, f"event numbered {seq} in a stream not numbered")
            return True
        if seq == 0:
            raise StreamProtocolError(index, StreamRule.SEQUENCE, "event without a number in a numbered stream")
        if seq <= self.last:
            return False
        merged = self.coalesced and delta_of(event) is not None
        if seq != self.last + 1 and not merged:
            raise StreamProtocolError(
                index, StreamRule.SEQUENCE, f"event {self.last + 1} is missing: the next event is numbered {seq}"
            )
        self.last = seq
        return True
