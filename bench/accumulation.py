"""The accumulator alone: tool-call argument deltas against the same bytes as text deltas.

A receiver applies every event of a stream to its partial message. Text deltas are appended; a
tool call's argument deltas are appended and scanned, so that a reader of the partial sees the
text so far completed into a JSON object. Both must cost time linear in what was received:
the completion is built when the partial is read, not at every delta.

Run: python -m bench.accumulation [--sizes 1 4] (megabytes). Prints, for each size, the seconds
to apply the deltas of a tool call and of a text block of that many bytes in 20-byte deltas,
their ratio, the growth from the smallest size to the largest, and the corpus's partial-JSON
cases fed one character at a time (each completion read once, as the conformance runners do),
against the same characters as text.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import partial_json_parser
import yaml

import pi_proto as pp
from pi_proto.ir.events import events_of

from .timing import timed
from .workloads import ROOT

DELTA_BYTES = 20
PARTIAL_JSON = ROOT / "tests" / "conformance" / "partial_json.yaml"


@dataclass(frozen=True)
class Sizes:
    """Seconds to apply `size` bytes of deltas, as a tool call's arguments and as text."""

    size: int
    arguments: float
    text: float


def arguments_of(size: int) -> str:
    """The arguments of a tool call writing a file: about `size` bytes of JSON text, most of it one
    string with escapes in it, as a model writes a file's content."""
    line = 'line of a file, with "quotes", a tab\there and a backslash \\ in it\n'
    content = line * (size // len(json.dumps(line)) + 1)
    return json.dumps({"path": "notes.md", "content": content, "mode": 420})[:size]


def applying(events: Sequence[pp.ModelEvent]) -> Callable[[], pp.AssistantMessage]:
    def apply() -> pp.AssistantMessage:
        accumulator = pp.Accumulator()
        for event in events:
            accumulator.apply(event)
        return accumulator.partial

    return apply


def deltas(size: int, runs: int = 5) -> Sizes:
    """Apply `size` bytes of 20-byte deltas as a tool call's arguments, then as text (the same
    characters); the best of `runs` each."""
    text = arguments_of(size)
    call = pp.ToolCall(id="call_1", name="write", arguments_json="{}", raw_arguments=text)
    as_arguments = list(events_of(pp.assistant_message(call, timestamp=1), DELTA_BYTES))[:-2]  # still streaming
    partial = applying(as_arguments)()
    assert partial.content[0].tool_call is not None
    assert partial.content[0].tool_call.arguments_json == pp.complete_json(text)  # read once, at the end
    arguments = timed(applying(as_arguments), runs)
    del as_arguments, partial
    as_text = list(events_of(pp.assistant_message(text, timestamp=1), DELTA_BYTES))[:-2]
    assert pp.text_of(applying(as_text)()) == text
    return Sizes(size, arguments, timed(applying(as_text), runs))


def partial_json_cases(rounds: int = 100, runs: int = 3) -> tuple[float, float, int]:
    """(tool call, text, characters): seconds to stream every partial-JSON case of the corpus one
    character per delta, `rounds` times, reading each case's completion once at its end; and the
    same characters as text deltas, reading the text."""
    cases = [case["partialJson"] for case in yaml.safe_load(PARTIAL_JSON.read_text(encoding="utf-8"))["cases"]]
    start = pp.ModelEvent(start=pp.StartEvent(header=pp.AssistantMessage()))

    def streamed(opening: pp.ModelEvent, delta: Callable[[str], pp.ModelEvent]) -> list[list[pp.ModelEvent]]:
        return [[start, opening, *map(delta, case.get("text", ""))] for case in cases]

    calls = streamed(
        pp.ModelEvent(toolcall_start=pp.ToolCallStartEvent(id="c", name="n")),
        lambda char: pp.ModelEvent(toolcall_delta=pp.ToolCallDeltaEvent(delta=char)),
    )
    texts = streamed(
        pp.ModelEvent(text_start=pp.TextStartEvent()),
        lambda char: pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta=char)),
    )

    def completions() -> list[str]:
        read = []
        for events in calls:
            accumulator = pp.Accumulator()
            for event in events:
                accumulator.apply(event)
            call = accumulator.partial.content[0].tool_call
            assert call is not None
            read.append(call.arguments_json or "")
        return read

    def text() -> list[str]:
        read = []
        for events in texts:
            accumulator = pp.Accumulator()
            for event in events:
                accumulator.apply(event)
            read.append(pp.text_of(accumulator.partial))
        return read

    assert completions() == [case["completed"] for case in cases]
    characters = sum(len(case.get("text", "")) for case in cases) * rounds
    as_calls = timed(lambda: [completions() for _ in range(rounds)], runs)
    as_text = timed(lambda: [text() for _ in range(rounds)], runs)
    return as_calls, as_text, characters


def versus_library(size: int = 50_000, runs: int = 3) -> tuple[float, float]:
    """(ours, the library): seconds to show a tool call's arguments of `size` bytes completed after
    each 20-byte delta, as a client rendering every partial does: ours through the Accumulator,
    reading the partial's arguments_json at each delta; partial-json-parser (the PyPI library that
    completes every corpus case to the same JSON value, refusing NaN) parsing the text so far each
    time. A library cannot resume where it stopped, so its time grows with the square of the size."""
    text = arguments_of(size)
    pieces = [text[at : at + DELTA_BYTES] for at in range(0, len(text), DELTA_BYTES)]

    def ours() -> str:
        accumulator = pp.Accumulator()
        accumulator.apply(pp.ModelEvent(start=pp.StartEvent(header=pp.AssistantMessage())))
        accumulator.apply(pp.ModelEvent(toolcall_start=pp.ToolCallStartEvent(id="c", name="n")))
        shown = ""
        for piece in pieces:
            accumulator.apply(pp.ModelEvent(toolcall_delta=pp.ToolCallDeltaEvent(delta=piece)))
            call = accumulator.partial.content[0].tool_call
            assert call is not None
            shown = call.arguments_json or ""
        return shown

    def library() -> str:
        so_far, shown = "", ""
        for piece in pieces:
            so_far += piece
            shown = json.dumps(partial_json_parser.loads(so_far, parser=_no_constants))
        return shown

    assert json.loads(ours()) == json.loads(library()) == json.loads(text)
    return timed(ours, runs), timed(library, 1)  # seconds each: one run is plenty


def _no_constants(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=float, nargs="+", default=[1, 4], help="megabytes (default: 1 4)")
    args = parser.parse_args()
    measured = [deltas(int(megabytes * 1_000_000)) for megabytes in args.sizes]
    for sizes in measured:
        print(
            f"{sizes.size:>10,} bytes in {DELTA_BYTES}-byte deltas: tool call {sizes.arguments:.3f} s, "
            f"text {sizes.text:.3f} s, ratio {sizes.arguments / sizes.text:.2f}"
        )
    first, last = measured[0], measured[-1]
    if last.size > first.size:
        print(
            f"{last.size / first.size:.1f}x the bytes: tool call {last.arguments / first.arguments:.2f}x the time, "
            f"text {last.text / first.text:.2f}x"
        )
    as_calls, as_text, characters = partial_json_cases()
    print(
        f"partial-JSON cases, {characters:,} characters one per delta: tool call {as_calls:.3f} s, "
        f"text {as_text:.3f} s, ratio {as_calls / as_text:.2f}"
    )


if __name__ == "__main__":
    main()
