"""ScriptedModel: plays scripted assistant turns as event streams, deterministically."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from .._gen.types.pi.ai.v1 import (
    AgentContext,
    AssistantMessage,
    GenerationOptions,
    InputKind,
    Model,
    ModelCost,
    ModelEvent,
    StartEvent,
    StopReason,
)
from ..ir.events import events_of
from ..ir.messages import now_ms
from ..stream.accumulator import Accumulator
from ..stream.event_stream import AssistantMessageEventStream
from ..stream.schedule import check_interval
from ..transcripts.pi_json import PiJsonError, assistant_from_pi
from ..wire.files import read_regular_file

MAX_SCRIPT_BYTES = 64 * 1024 * 1024  # a script is read whole; a larger one is refused, naming the file


class ScriptError(ValueError):
    """A script the model cannot play, e.g. a turn whose stream would break a stream rule."""


class ScriptedModel:
    """A model that plays a script of assistant turns.

    Call k of a conversation plays turn k: the turn is chosen by the number of assistant messages
    already in the context, so the model keeps no state between calls and serves any number of
    concurrent conversations. A call past the last turn yields an `error` event saying so.

    The turns are checked when the model is made, with the rules their streams will be checked
    with: a turn that could never play is refused here (ScriptError), not at every call.
    """

    def __init__(
        self,
        turns: Sequence[AssistantMessage],
        *,
        id: str = "scripted-v1",
        delta_size: int = 8,
        delay: float = 0.0,
    ) -> None:
        if delta_size < 1:
            raise ValueError(f"delta_size must be at least 1, got {delta_size}")
        check_interval(delay, "delay")
        if not turns:
            raise ScriptError("the script has no turns: every call would fail")
        for number, turn in enumerate(turns, 1):
            _check_playable(turn, number, delta_size)
        self.info = Model(
            id=id,
            name="Scripted turns",
            api="scripted",
            provider="scripted",
            input=[InputKind.TEXT, InputKind.IMAGE],
            cost=ModelCost(),
        )
        self.turns = list(turns)
        self.delta_size = delta_size
        self.delay = delay

    @classmethod
    def from_file(cls, path: str | Path, **options: int | float | str) -> ScriptedModel:
        """Load a script: a JSON list of assistant messages in pi-JSON form."""
        path = Path(path)
        try:
            script = json.loads(read_regular_file(path, MAX_SCRIPT_BYTES))
        except ValueError as error:  # the file's, UnicodeDecodeError and JSONDecodeError are ValueErrors
            raise ValueError(f"{path}: cannot read the script: {error}") from None
        if not isinstance(script, list):
            raise ValueError(f"{path}: a script is a JSON list of assistant messages")
        try:
            turns = [_turn_from_pi(turn, f"turn {number}") for number, turn in enumerate(script, 1)]
            return cls(turns, **options)  # type: ignore[arg-type]
        except (PiJsonError, ScriptError) as error:  # not the options' errors: they are no fault of the file
            raise ValueError(f"{path}: {error}") from None

    @classmethod
    def readme(cls, **options: int | float | str) -> ScriptedModel:
        """The default script: the seed's README round trip (read README.md, then name the project)."""
        with resources.as_file(resources.files(__package__) / "scripts" / "readme.json") as path:
            return cls.from_file(path, **options)

    def stream(self, context: AgentContext, options: GenerationOptions | None = None) -> AssistantMessageEventStream:
        """Play the turn this context calls for, each event `delay` seconds after the one before
        it was due."""
        played = sum(1 for message in context.messages if message.assistant is not None)
        events = AssistantMessageEventStream()
        if played >= len(self.turns):
            events.drive(self._refuse(events, played))
            return events
        turn = copy.deepcopy(self.turns[played])
        if turn.timestamp == 0:
            turn.timestamp = now_ms()
        events.play(events_of(turn, self.delta_size), self.delay)
        return events

    async def _refuse(self, events: AssistantMessageEventStream, turn_index: int) -> None:
        header = AssistantMessage(api="scripted", provider="scripted", model=self.info.id, timestamp=now_ms())
        events.push(ModelEvent(start=StartEvent(header=header)))
        events.fail(StopReason.ERROR, f"the script has no turn {turn_index + 1}: it has {len(self.turns)} turns")


def _turn_from_pi(value: Any, where: str) -> AssistantMessage:
    """One turn of a script file: an assistant message (assistant_from_pi reads any role as one)."""
    # A missing role, or a turn that is no object, is assistant_from_pi's to report.
    role = value.get("role", "assistant") if isinstance(value, Mapping) else "assistant"
    if role != "assistant":
        raise PiJsonError(f"{where}.role", f"a script holds assistant messages, got {role!r}")
    return assistant_from_pi(value, where)


def _check_playable(turn: AssistantMessage, number: int, delta_size: int) -> None:
    """Raise ScriptError unless `turn` streams within the stream rules: its events go through an
    Accumulator, as they will through every stream that plays them."""
    if turn.stop_reason == StopReason.UNSPECIFIED:
        raise ScriptError(f"turn {number}: the stop reason is not set")
    accumulator = Accumulator()
    try:
        for event in events_of(turn, delta_size):
            accumulator.apply(event)
    except ValueError as error:  # a broken stream rule (StreamProtocolError), or a block with nothing set
        raise ScriptError(f"turn {number}: {error}") from None
