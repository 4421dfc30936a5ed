"""pi itself is the oracle. pi-agent-core's Agent plays the seed's README round trip against a real
`pi-proto serve`, over pi-ai's pi-messages API and over pi-agent-core's streamProxy; and messages
with every field pi-ai sets convert through our pi-JSON codec and back unchanged, each field typed.

pi's packages and the Node 22 they need are pinned in tests/pi (`make pi-setup` installs them).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import betterproto2
import pytest

import pi_proto as pp
from pi_proto.models.seed import README_REQUEST, README_TEXT
from pi_proto.transcripts.pi_json import message_from_pi, message_to_pi

from .helpers import endless_script, serve_process

PI = Path(__file__).parent / "pi"
NODE = PI / "node_modules" / ".bin" / "node"
TOKEN = "pi-oracle-token"
VIAS = ["pi-messages", "proxy"]
# What each way of reaching the server writes into the header of an assistant message: pi-messages
# the model of its own provider, the proxy the model it forwards (the server's scripted one).
HEADER = {
    "pi-messages": {"api": "pi-messages", "provider": "pi-proto", "model": "scripted-v1"},
    "proxy": {"api": "scripted", "provider": "scripted", "model": "scripted-v1"},
}
TURNS = json.loads((resources.files("pi_proto.models") / "scripts" / "readme.json").read_text(encoding="utf-8"))
Json = dict[str, Any]
# The `read` tool's parameters in tests/pi/agent.mjs.
READ_PARAMETERS = {
    "type": "object",
    "properties": {"path": {"type": "string"}},
    "required": ["path"],
    "additionalProperties": False,
}


def node(script: str, *args: str) -> list[Json]:
    """Run one of tests/pi's scripts with the pinned Node 22: its JSON lines."""
    assert NODE.exists(), f"{NODE} is missing: `make pi-setup` installs Node 22 and pi's packages"
    done = subprocess.run(
        [str(NODE), str(PI / script), *args], capture_output=True, text=True, timeout=60, check=False, cwd=PI
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stderr}"
    return [json.loads(line) for line in done.stdout.splitlines()]


# --- the Agent against the server -----------------------------------------------------------------


@contextmanager
def pi_server(folder: Path, *flags: str) -> Iterator[str]:
    """`pi-proto serve --http-port 0 --token-file F FLAGS`; yields its base URL."""
    token = folder / "token"
    token.write_text(TOKEN + "\n")
    with serve_process("--http-port", "0", "--token-file", str(token), *flags) as (process, _):
        assert process.stdout is not None
        yield "http://" + process.stdout.readline().removeprefix("http on ").strip()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with pi_server(tmp_path_factory.mktemp("pi-oracle")) as url:
        yield url


@pytest.fixture(scope="module")
def endless_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server whose answer is still streaming when the Agent aborts, however slow the machine."""
    folder = tmp_path_factory.mktemp("pi-oracle-endless")
    with pi_server(folder, "--script", str(endless_script(folder)), "--delta-size", "1", "--delay", "0.05") as url:
        yield url


@dataclass
class Run:
    events: list[Json]  # what the Agent's subscriber saw, in order
    tools: list[Json]  # each run of the `read` tool: its call id and arguments
    messages: list[Json]  # the Agent's messages at the end
    error_message: str | None  # the Agent's state.errorMessage at the end


def run_agent(url: str, via: str, *, token: str = TOKEN, model: str = "scripted-v1", abort: bool = False) -> Run:
    config = {
        "via": via,
        "url": url,
        "token": token,
        "model": model,
        "prompt": README_REQUEST,
        "readme": README_TEXT,
        "abort": abort,
    }
    lines = node("agent.mjs", json.dumps(config))
    *streamed, last = lines
    assert set(last) == {"messages", "errorMessage"}, last
    return Run(
        events=[line["event"] for line in streamed if "event" in line],
        tools=[line["tool"] for line in streamed if "tool" in line],
        messages=last["messages"],
        error_message=last["errorMessage"],
    )


def settled(message: Json) -> Json:
    """The message without the fields a run cannot fix in advance, checked for their type."""
    out = dict(message)
    assert type(out.pop("timestamp")) is int, message
    if message["role"] in ("assistant", "toolResult"):  # measured by pi for both
        assert type(out.pop("durationMs")) is int, message
    return out


def runs(items: list[str]) -> list[str]:
    """`items` with each run of one repeated item given once, as `item+`."""
    out: list[str] = []
    for item in items:
        if out and out[-1] in (item, f"{item}+"):
            out[-1] = f"{item}+"
        else:
            out.append(item)
    return out


def full_usage(usage: Json) -> Json:
    """The scripted turn's usage as pi's Usage type has it: every count, and a cost (none here)."""
    zero_cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cost": zero_cost, **usage}


def assistant(via: str, turn: Json) -> Json:
    """What the Agent keeps of a scripted turn: pi's own header, the turn's content and usage."""
    return {
        "role": "assistant",
        "content": turn["content"],
        **HEADER[via],
        "usage": full_usage(turn["usage"]),
        "stopReason": turn["stopReason"],
        "thinkingLevel": "off",
    }


def ending(run: Run) -> Json:
    """The run's last message, an assistant's, after which the Agent said no more."""
    assert run.events[-1]["type"] == "agent_end"
    last = run.messages[-1]
    assert last["role"] == "assistant"
    assert run.error_message == last.get("errorMessage")
    return last


@pytest.mark.parametrize("via", VIAS)
def test_the_readme_round_trip(server: str, via: str) -> None:
    run = run_agent(server, via)

    assert run.tools == [{"toolCallId": "call_1", "params": {"path": "README.md"}}]
    assert run.error_message is None
    assert [message["role"] for message in run.messages] == ["system", "user", "assistant", "toolResult", "assistant"]
    system, user, first, result, second = run.messages
    assert settled(system) == {
        "role": "system",
        "content": "You are a helpful assistant.",
        "toolsAdded": [{"name": "read", "description": "Read a file of the project.", "parameters": READ_PARAMETERS}],
    }
    assert settled(user) == {"role": "user", "content": [{"type": "text", "text": README_REQUEST}]}
    assert settled(first) == assistant(via, TURNS[0])
    assert settled(result) == {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "read",
        "content": [{"type": "text", "text": README_TEXT}],
        "details": {},
        "isError": False,
    }
    assert settled(second) == assistant(via, TURNS[1])

    assert runs([event["type"] for event in run.events]) == [
        "agent_start",
        "turn_start",
        *("message_start", "message_end"),  # the prompt
        *("message_start", "message_update+", "message_end"),  # the first answer, streamed
        *("tool_execution_start", "tool_execution_end", "message_start", "message_end"),  # read
        "turn_end",
        "turn_start",
        *("message_start", "message_update+", "message_end"),  # the second answer, streamed
        "turn_end",
        "agent_end",
    ]
    # Each answer's updates, as pi's stream built them: deltas that add up to the turn's content.
    turns: list[list[Json]] = []
    for event in run.events:
        if event["type"] == "message_start" and event["message"]["role"] == "assistant":
            turns.append([])
        elif event["type"] == "message_update":
            turns[-1].append(event)
    kinds = [runs([u["assistantMessageEvent"]["type"] for u in turn]) for turn in turns]
    assert kinds[0] == ["text_start", "text_delta+", "text_end", "toolcall_start", "toolcall_delta+", "toolcall_end"]
    assert kinds[1] == ["text_start", "text_delta+", "text_end"]

    def deltas(turn: list[Json], kind: str) -> str:
        return "".join(u["assistantMessageEvent"]["delta"] for u in turn if u["assistantMessageEvent"]["type"] == kind)

    assert deltas(turns[0], "text_delta") == TURNS[0]["content"][0]["text"]
    assert json.loads(deltas(turns[0], "toolcall_delta")) == {"path": "README.md"}
    assert deltas(turns[1], "text_delta") == TURNS[1]["content"][0]["text"]
    for turn, script in zip(turns, TURNS, strict=True):
        assert turn[-1]["message"]["content"] == script["content"]


@pytest.mark.parametrize("via", VIAS)
def test_a_wrong_token_ends_in_an_error_naming_401(server: str, via: str) -> None:
    run = run_agent(server, via, token="not-the-token")
    last = ending(run)
    assert last["stopReason"] == "error"
    assert "401" in last["errorMessage"]
    assert run.tools == []


@pytest.mark.parametrize("via", VIAS)
def test_an_unknown_model_ends_in_an_error_naming_it(server: str, via: str) -> None:
    run = run_agent(server, via, model="no-such-model")
    last = ending(run)
    assert last["stopReason"] == "error"
    assert "no-such-model" in last["errorMessage"]
    assert run.tools == []


@pytest.mark.parametrize("via", VIAS)
def test_an_abort_mid_stream_ends_the_answer_aborted(endless_server: str, via: str) -> None:
    run = run_agent(endless_server, via, abort=True)
    last = ending(run)
    assert last["stopReason"] == "aborted"
    # The first answer ended there: no tool ran, and no other answer was asked for.
    assert [message["role"] for message in run.messages] == ["system", "user", "assistant"]
    assert run.tools == []
    assert any(event["type"] == "message_update" for event in run.events)


# --- pi's messages through our codec --------------------------------------------------------------


@dataclass
class Samples:
    texts: dict[str, str]  # name -> JSON.stringify's text of the message
    declared: dict[str, list[str]]  # pi-ai's object type -> the fields it declares


@pytest.fixture(scope="module")
def samples() -> Samples:
    *lines, last = node("messages.mjs")
    return Samples(texts={line["name"]: line["text"] for line in lines}, declared=last["declared"])


BLOCKS = {"text": "TextContent", "thinking": "ThinkingContent", "image": "ImageContent", "toolCall": "ToolCall"}
ROLES = {
    "system": "SystemMessage",
    "user": "UserMessage",
    "assistant": "AssistantMessage",
    "toolResult": "ToolResultMessage",
}


def typed_objects(message: Json) -> Iterator[tuple[str, Json]]:
    """Each object of a pi message with the name of its type in pi-ai's declarations."""
    yield ROLES[message["role"]], message
    if isinstance(message["content"], list):
        for block in message["content"]:
            yield BLOCKS[block["type"]], block
    for tool in message.get("toolsAdded", []):
        yield "Tool", tool
        if "constrainedSampling" in tool:
            yield "ConstrainedSamplingConfig", tool["constrainedSampling"]
    for tool in message.get("toolsRemoved", []):
        yield "ToolReference", tool
    if "usage" in message:
        yield "Usage", message["usage"]
        yield "Usage.cost", message["usage"]["cost"]
    if "deferred" in message:
        yield "DeferredHandle", message["deferred"]
    for diagnostic in message.get("diagnostics", []):
        yield "AssistantMessageDiagnostic", diagnostic
        if "error" in diagnostic:
            yield "DiagnosticErrorInfo", diagnostic["error"]
    if "nestedCalls" in message:
        yield "NestedToolCalls", message["nestedCalls"]
        for call in message["nestedCalls"]["calls"]:
            yield "NestedToolCallRecord", call


def test_the_samples_set_every_field_pi_declares(samples: Samples) -> None:
    """The guard's reach: a field pi-ai gains fails here, until tests/pi/messages.mjs sets it."""
    seen: dict[str, set[str]] = defaultdict(set)
    for text in samples.texts.values():
        for name, obj in typed_objects(json.loads(text)):
            seen[name].update(obj)
    assert seen.keys() == samples.declared.keys()
    unset = [f"{name}.{field}" for name, fields in samples.declared.items() for field in set(fields) - seen[name]]
    assert not unset, f"pi-ai declares fields that no message of tests/pi/messages.mjs sets: {sorted(unset)}"
    undeclared = [f"{name}.{field}" for name, fields in seen.items() for field in fields - set(samples.declared[name])]
    assert not undeclared, f"tests/pi/messages.mjs sets fields pi-ai does not declare: {undeclared}"


def through_the_wire(message: pp.AgentMessage) -> pp.AgentMessage:
    return pp.decode(pp.AgentMessage, pp.encode(message))


def untyped(message: betterproto2.Message, path: str) -> Iterator[str]:
    """Where a converted message keeps pi's keys untyped: an `extra_json`, or a whole CustomMessage."""
    if isinstance(message, pp.CustomMessage):
        yield f"{path}: role {message.role!r} kept as a CustomMessage"
        return
    for field in dataclasses.fields(message):  # type: ignore[arg-type]
        value = getattr(message, field.name)
        if field.name == "extra_json" and value:
            # The codec's own key ($order) says how to write the object, not what pi set.
            keys = sorted(key for key in json.loads(value) if not key.startswith("$"))
            if keys:
                yield f"{path} ({type(message).__name__}): {keys}"
        for i, item in enumerate(value if isinstance(value, list) else [value]):
            if isinstance(item, betterproto2.Message):
                yield from untyped(item, f"{path}.{field.name}" + (f"[{i}]" if isinstance(value, list) else ""))


def test_every_field_of_pis_messages_is_typed(samples: Samples) -> None:
    problems = []
    for name, text in samples.texts.items():
        try:
            message = through_the_wire(message_from_pi(json.loads(text)))
        except pp.PiJsonError as error:
            problems.append(f"{name}: refused: {error}")
            continue
        problems += [f"{name}: {where}" for where in untyped(message, "message")]
        problems += [f"{name}: breaks {violation}" for violation in pp.violations(message)]
    assert not problems, "pi's fields that our schema does not type:\n" + "\n".join(problems)


def difference(ours: Any, pis: Any, path: str) -> str | None:
    """Where our JSON differs from pi's, key order aside; None when only the order differs."""
    if type(ours) is not type(pis):
        return f"{path}: pi wrote {json.dumps(pis)[:80]}, we wrote {json.dumps(ours)[:80]}"
    if isinstance(pis, dict):
        if ours.keys() != pis.keys():
            return f"{path}: pi's keys {sorted(pis)}, ours {sorted(ours)}"
        found = (difference(ours[key], pis[key], f"{path}.{key}") for key in pis)
        return next((where for where in found if where), None)
    if isinstance(pis, list):
        if len(ours) != len(pis):
            return f"{path}: pi wrote {len(pis)} items, we wrote {len(ours)}"
        found = (difference(a, b, f"{path}[{i}]") for i, (a, b) in enumerate(zip(ours, pis, strict=True)))
        return next((where for where in found if where), None)
    return None if ours == pis else f"{path}: pi wrote {json.dumps(pis)[:80]}, we wrote {json.dumps(ours)[:80]}"


def order(ours: Any, pis: Any, path: str) -> str:
    """Where the keys of two equal values come in another order."""
    if isinstance(pis, dict) and list(ours) != list(pis):
        return f"{path}: the same keys, but pi's order is {list(pis)}, ours {list(ours)}"
    pairs = [(f"{path}.{key}", ours[key], pis[key]) for key in pis] if isinstance(pis, dict) else []
    if isinstance(pis, list):
        pairs = [(f"{path}[{i}]", a, b) for i, (a, b) in enumerate(zip(ours, pis, strict=True))]
    return next((found for where, a, b in pairs if (found := order(a, b, where))), "")


def test_every_message_of_pis_converts_back_to_the_same_text(samples: Samples) -> None:
    problems = []
    for name, text in samples.texts.items():
        try:
            back = pp.dump_json(message_to_pi(through_the_wire(message_from_pi(json.loads(text)))))
        except pp.PiJsonError as error:
            problems.append(f"{name}: refused: {error}")
            continue
        if back != text:
            ours, pis = json.loads(back), json.loads(text)
            problems.append(f"{name}: {difference(ours, pis, 'message') or order(ours, pis, 'message')}")
    assert not problems, "pi's messages that do not convert back unchanged:\n" + "\n".join(problems)
