"""ScriptedModel: plays scripted assistant turns as event streams, deterministically."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from ._gen.types.pi.ai.v1 import (
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
from .events import events_of
from .messages import now_ms
from .pi_json import PiJsonError, assistant_from_pi
from .stream import AssistantMessageEventStream


class ScriptedModel:
    """A model that plays a script of assistant turns.

    Call k of a conversation plays turn k: the turn is chosen by the number of assistant messages
    already in the context, so the model keeps no state between calls and serves any number of
    concurrent conversations. A call past the last turn yields an `error` event saying so.
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
        for number, turn in enumerate(turns, 1):
            if turn.stop_reason == StopReason.UNSPECIFIED:
                raise ValueError(f"turn {number}: the stop reason is not set")
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
            script = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"{path}: cannot read the script: {error}") from None
        if not isinstance(script, list):
            raise ValueError(f"{path}: a script is a JSON list of assistant messages")
        try:
            turns = [assistant_from_pi(turn, f"turn {number}") for number, turn in enumerate(script, 1)]
        except PiJsonError as error:
            raise ValueError(f"{path}: {error}") from None
        return cls(turns, **options)  # type: ignore[arg-type]

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
