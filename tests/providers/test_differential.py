"""pi-ai 1.6's own providers and ours read the same recorded streams, and must agree.

For every case of every provider's CASES, the case's recordings are played to pi's streamSimple
for the API (tests/pi/providers.mjs, on the Node 22 of tests/pi) and to our provider, each on a
replay server of its own, with the same model, context and options. Compared: the requests each
sent (the replay server keeps them), the sequence of events (kind and content index, and the
reason of the terminal one), and the final message, ours written as pi-JSON. What differs on
purpose is listed in differences.json with the reason; a difference not listed fails, naming it,
and so does a listed one that no longer occurs. Values no run can fix in advance (timestamps, the
identity each SDK sends) are normalized first, each for the reason VOLATILE gives.

All the cases of an API run at once: in one Node process for pi, concurrently for ours.
`python -m tests.providers.test_differential [API ...]` rewrites differences.json with what differs
now (for the APIs named, else for all):
each difference keeps its reason, or takes that of the same difference in another case of the API,
or that of one listed at the same path of the same API (indexes aside), or gets none, for a
person to write before the tests pass.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import math
import re
import sys
from collections.abc import Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import pi_proto as pp
from pi_proto.models.providers import APIS, call
from pi_proto.transcripts.pi_json import STOP_REASON_NAMES, THINKING_LEVEL_NAMES, assistant_to_pi, context_to_pi
from pi_proto.transcripts.pi_options import options_to_pi

from .harness import SECRET, ProviderCase, final_message, play
from .replay import RECORDINGS, ReplayServer, Request

pytestmark = pytest.mark.usefixtures("patient_connect")

Json = Any
PI = Path(__file__).parent.parent / "pi"
NODE = PI / "node_modules" / ".bin" / "node"
DIFFERENCES = Path(__file__).parent / "differences.json"


WHATS = ("request", "message", "events")


def module(api: str) -> ModuleType:
    """The API's test module, with its CASES and INFO; imported when its cases run."""
    return importlib.import_module(f".test_{api.replace('-', '_')}", __package__)


# --- normalizing what no run can fix in advance -------------------------------------------------

# Why each normalized value differs between any two runs; a value is replaced by `<name>`.
VOLATILE = {
    "timestamp": "of the message and of its diagnostics: ours is the pinned clock of the tests, pi's is Date.now()",
    "durationMs": "measured by the run",
    "clock id": "a Gemini tool call without an id gets `<name>_<clock>_<n>`, of each side's clock",
    "stack": "a diagnostic's error stack names the files of the run",
    "replay server": "each case's replay server has a port of its own, which a diagnostic's url names",
    "sdk headers": "each side's SDK names itself, its version and its runtime (user-agent, x-stainless-*, "
    "x-goog-api-client): left out",
    "transport headers": "each HTTP client's own for its connection: host (each replay server has its own port), "
    "content-length (follows the body, compared itself), connection, accept-encoding, accept-language and "
    "sec-fetch-mode (Node's fetch adds the last two): left out",
    "sigv4": "a SigV4 signature covers the request's time and the headers each SDK chooses to sign: authorization "
    "keeps its scheme, key id, region and service, with <date>, <signed headers> and <signature>; x-amz-date becomes "
    "<x-amz-date>; the JavaScript SDK's x-amz-content-sha256 (the body's hash, which botocore signs without "
    "sending) and x-amz-user-agent (its identity) are left out",
    "sdk attempts": "amz-sdk-invocation-id is random for each call, and amz-sdk-request counts the attempts of each "
    "SDK's own retry strategy: each becomes <name>",
}
SDK_HEADERS = re.compile(r"^(user-agent|x-stainless-.*|x-goog-api-client)$")
TRANSPORT_HEADERS = ("host", "content-length", "connection", "accept-encoding", "accept-language", "sec-fetch-mode")


SIGV4 = re.compile(r"^(AWS4-HMAC-SHA256 Credential=[^/]+)/\d{8}/([^,]+), SignedHeaders=[^,]+, Signature=[0-9a-f]+$")
SIGV4_LEFT_OUT = ("x-amz-content-sha256", "x-amz-user-agent")
SIGV4_VOLATILE = ("x-amz-date", "amz-sdk-invocation-id", "amz-sdk-request")
CLOCK_ID = re.compile(r"^(.+)_\d{13}_(\d+)$")
REPLAY_SERVER = re.compile(r"http://127\.0\.0\.1:\d+")


def settled_message(message: Json) -> Json:
    """A pi-JSON assistant message with its volatile values replaced."""
    if message is None:
        return None
    out = dict(message)
    for key in ("timestamp", "durationMs"):
        if key in out:
            out[key] = f"<{key}>"
    out["content"] = [settled_block(block) for block in out["content"]]
    if "diagnostics" in out:
        out["diagnostics"] = [settled_diagnostic(diagnostic) for diagnostic in out["diagnostics"]]
    return out


def settled_block(block: Json) -> Json:
    if block["type"] != "toolCall" or not CLOCK_ID.match(block["id"]):
        return block
    return {**block, "id": CLOCK_ID.sub(r"\1_<clock>_\2", block["id"])}


def settled_diagnostic(diagnostic: Json) -> Json:
    out = {**diagnostic, "timestamp": "<timestamp>"}
    if "stack" in out.get("error", {}):
        out["error"] = {**out["error"], "stack": "<stack>"}
    if "details" in out:
        details = {key: without_port(value) for key, value in out["details"].items()}
        out["details"] = {**details, **({"timestampMs": "<timestamp>"} if "timestampMs" in details else {})}
    return out


def without_port(value: Json) -> Json:
    return REPLAY_SERVER.sub("<replay server>", value) if isinstance(value, str) else value


def settled_request(request: Request) -> Json:
    """What a request sent, its headers without those of the SDK's identity and of the transport, and
    its SigV4 signature settled."""
    headers = {
        name: settled_header(name, value)
        for name, value in sorted(request.headers.items())
        if not SDK_HEADERS.match(name) and name not in TRANSPORT_HEADERS and name not in SIGV4_LEFT_OUT
    }
    return {"method": request.method, "path": request.path, "headers": headers, "body": request.body}


def settled_header(name: str, value: str) -> str:
    if name in SIGV4_VOLATILE:
        return f"<{name}>"
    if name == "authorization":
        return SIGV4.sub(r"\1/<date>/\2, SignedHeaders=<signed headers>, Signature=<signature>", value)
    return value


# --- our shapes as pi's ---------------------------------------------------------------------------

INPUTS = {pp.InputKind.TEXT: "text", pp.InputKind.IMAGE: "image"}
# Tool choices as each API's pi code takes them (its `toolChoice` is the provider's own shape); a
# named tool is each API's own object (pi_tool_choice).
CHOICES = {
    "anthropic-messages": ("auto", "none", "any"),
    "google-generative-ai": ("auto", "none", "any"),
    "openai-completions": ("auto", "none", "required"),
    "openai-responses": ("auto", "none", "required"),
    "azure-openai-responses": ("auto", "none", "required"),
    "google-vertex": ("auto", "none", "any"),
    "mistral-conversations": ("auto", "none", "any"),
    "bedrock-converse-stream": ("auto", "none", "any"),
    "pi-messages": ("auto", "none", "required"),
}
MODES = (pp.ToolChoiceMode.AUTO, pp.ToolChoiceMode.NONE, pp.ToolChoiceMode.REQUIRED)


def pi_model(model: pp.Model, config: dict[str, Any], base_url: str) -> Json:
    """The served model as a pi Model, with the case's compat switches and headers."""
    # A config's key and environment are pi's `apiKey` and `env` options (pi_options).
    shaped = {"compat", "headers", "api_key", "environment"}
    assert set(config) <= shaped, f"no pi shape for the model config {sorted(config)}"
    cost = model.cost or pp.ModelCost()
    out: Json = {
        "id": model.id,
        "name": model.name,
        "api": model.api,
        "provider": model.provider,
        "baseUrl": base_url,
        "reasoning": model.reasoning,
        "input": [INPUTS[kind] for kind in model.input],
        "cost": {
            "input": cost.input,
            "output": cost.output,
            "cacheRead": cost.cache_read,
            "cacheWrite": cost.cache_write,
        },
        "contextWindow": model.context_window,
        "maxTokens": model.max_tokens,
    }
    if model.thinking_level_map:
        out["thinkingLevelMap"] = {
            THINKING_LEVEL_NAMES[mapping.level]: mapping.value for mapping in model.thinking_level_map
        }  # None: pi's null, a level the model lacks
    if "compat" in config:
        out["compat"] = dict(config["compat"])
    if "headers" in config:
        out["headers"] = dict(config["headers"])
    return out


def pi_tool_choice(api: str, choice: pp.ToolChoice) -> Json:
    if choice.mode != pp.ToolChoiceMode.TOOL:
        return dict(zip(MODES, CHOICES[api], strict=True))[choice.mode]
    assert api != "google-generative-ai", "pi's google-generative-ai names no tool to choose"
    if api in ("anthropic-messages", "bedrock-converse-stream"):
        return {"type": "tool", "name": choice.tool}
    return {"type": "function", "function": {"name": choice.tool}}


def pi_options(api: str, options: pp.GenerationOptions | None, config: dict[str, Any]) -> Json:
    """GenerationOptions as pi's SimpleStreamOptions, with the case's key (the test key unless it
    gives one; none for an empty one), and its environment settings as pi's `env`.

    pi is given the case's options and no more: where our server retries by default and pi does not
    (call.RETRIES), that is a difference; a case that compares the retries asks for them.
    """
    given = options or pp.GenerationOptions()
    assert not given.provider_options_json, "pi's streamSimple takes no provider options"
    assert given.deferred is None, "pi's streamSimple takes no deferred options here"
    key = config.get("api_key", SECRET)
    out: Json = {**({"apiKey": key} if key else {}), **options_to_pi(given)}
    if environment := config.get("environment"):
        out["env"] = dict(environment)
    if given.tool_choice is not None:
        out["toolChoice"] = pi_tool_choice(api, given.tool_choice)
    return out


# --- a run of each side ---------------------------------------------------------------------------


@dataclass
class Outcome:
    """What one side made of a case."""

    requests: list[Json]  # settled_request of each request, in order
    events: list[str]  # "kind", "kind index" or "kind reason" of each event
    message: Json  # the final message as pi-JSON, settled; None without one


def planned(case: ProviderCase, replay: ReplayServer) -> None:
    """Plan the case's replies on `replay`, as harness.play plans them."""
    for index, name in enumerate(case.replies):
        last = index == len(case.replies) - 1
        replay.reply(case.recording(name), cut_after=case.cut_after if last else None)


def our_event(event: pp.ModelEvent) -> str:
    kind, body = pp.event_kind(event)
    if kind in ("done", "error"):
        return f"{kind} {STOP_REASON_NAMES[body.reason]}"
    return kind if kind == "start" else f"{kind} {body.content_index}"


def pi_event(event: Json) -> str:
    if event["type"] in ("done", "error"):
        return f"{event['type']} {event['reason']}"
    return event["type"] if event["type"] == "start" else f"{event['type']} {event['contentIndex']}"


async def ours(case: ProviderCase, info: pp.Model) -> Outcome:
    events, replay = await play(case, info)
    message = assistant_to_pi(final_message(events))
    return Outcome(
        requests=[settled_request(request) for request in replay.requests],
        events=[our_event(event) for event in events],
        message=settled_message(message),
    )


async def node(api: str, jobs: list[Json]) -> list[Json]:
    """Run tests/pi/providers.mjs on the jobs: its JSON lines."""
    assert NODE.exists(), f"{NODE} is missing: `make pi-setup` installs Node 22 and pi's packages"
    process = await asyncio.create_subprocess_exec(
        str(NODE),
        str(PI / "providers.mjs"),
        cwd=PI,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    request = json.dumps({"api": api, "jobs": jobs}).encode()
    stdout, stderr = await asyncio.wait_for(process.communicate(request), 300)  # a hang guard
    assert process.returncode == 0, f"providers.mjs failed:\n{stderr.decode()}"
    return [json.loads(line) for line in stdout.decode().splitlines()]


async def pis(api: str, cases: list[ProviderCase], info: pp.Model) -> dict[str, Outcome]:
    """Each case played to pi's provider code, all in one Node process."""
    async with AsyncExitStack() as stack:
        replays = [await stack.enter_async_context(ReplayServer()) for _ in cases]
        jobs = []
        for case, replay in zip(cases, replays, strict=True):
            planned(case, replay)
            jobs.append(
                {
                    "name": case.name,
                    "model": pi_model(case.model or info, dict(case.config), replay.base_url),
                    "context": context_to_pi(case.context),
                    "options": pi_options(api, case.options, dict(case.config)),
                }
            )
        lines = await node(api, jobs)
    out = {}
    for case, replay in zip(cases, replays, strict=True):
        own = [line for line in lines if line["job"] == case.name]
        thrown = [line["thrown"] for line in own if "thrown" in line]
        assert not thrown, f"{case.name}: pi's streamSimple threw {thrown[0]}"
        out[case.name] = Outcome(
            requests=[settled_request(request) for request in replay.requests],
            events=[pi_event(line["event"]) for line in own if "event" in line],
            message=settled_message(next(line["message"] for line in own if "message" in line)),
        )
    return out


# --- the differences ------------------------------------------------------------------------------

ABSENT = object()  # no value at a path; a difference leaves out the side that has none


def step(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$]*", key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def same(a: Any, b: Any) -> bool:
    """Equal JSON leaves; numbers as JavaScript has them (1 and 1.0 are one number)."""
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return a == b or (math.isnan(a) and math.isnan(b))
    return type(a) is type(b) and a == b


def leaves(ours: Any, pis: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """Each path where two JSON values differ, with the value of each side there (or ABSENT).
    Lists of two lengths differ as a whole: item by item, one added item would shift the rest."""
    if isinstance(ours, dict) and isinstance(pis, dict):
        for key in [*pis, *(key for key in ours if key not in pis)]:
            yield from leaves(ours.get(key, ABSENT), pis.get(key, ABSENT), step(path, key))
    elif isinstance(ours, list) and isinstance(pis, list) and len(ours) == len(pis):
        for index, (mine, theirs) in enumerate(zip(ours, pis, strict=True)):
            yield from leaves(mine, theirs, step(path, index))
    elif not equal(ours, pis):
        yield path, ours, pis


def equal(ours: Any, pis: Any) -> bool:
    if isinstance(ours, dict) and isinstance(pis, dict):
        return ours.keys() == pis.keys() and all(equal(ours[key], pis[key]) for key in ours)
    if isinstance(ours, list) and isinstance(pis, list):
        return len(ours) == len(pis) and all(equal(a, b) for a, b in zip(ours, pis, strict=True))
    return same(ours, pis)


def sequence(ours: list[str], pis: list[str]) -> Iterator[tuple[str, Any, Any]]:
    """Where two event sequences part: from the first event that differs, the rest of each."""
    start = next((i for i, (a, b) in enumerate(zip(ours, pis, strict=False)) if a != b), min(len(ours), len(pis)))
    if ours[start:] or pis[start:]:
        yield f"[{start}:]", ours[start:], pis[start:]


def entry(api: str, case: str, what: str, path: str, ours: Any, pis: Any) -> Json:
    out: Json = {"api": api, "case": case, "what": what, "path": path}
    if ours is not ABSENT:
        out["ours"] = ours
    if pis is not ABSENT:
        out["pi"] = pis
    return out


def differences(api: str, name: str, ours: Outcome, pis: Outcome) -> list[Json]:
    found = [entry(api, name, "request", *d) for d in leaves(ours.requests, pis.requests)]
    found += [entry(api, name, "message", *d) for d in leaves(ours.message, pis.message)]
    found += [entry(api, name, "events", *d) for d in sequence(ours.events, pis.events)]
    return found


def listed(*, reasoned: bool = True) -> list[Json]:
    """The listed differences; each must have its reason, unless `reasoned` is false (a rewrite
    keeps those still waiting for one)."""
    document = json.loads(DIFFERENCES.read_text(encoding="utf-8"))
    entries: list[Json] = document["differences"]
    for item in entries:
        assert item["what"] in WHATS, item
        assert item.get("reason") or not reasoned, f"a listed difference needs its reason: {item}"
    return entries


def without_reason(item: Json) -> Json:
    return {name: value for name, value in item.items() if name != "reason"}


def fingerprint(item: Json) -> str:
    """A difference as text, to find it among others."""
    return json.dumps(item, sort_keys=True)


def test_every_recording_is_played_by_a_case() -> None:
    played = {case.recording(name) for api in APIS for case in module(api).CASES for name in case.replies}
    unplayed = sorted(str(path.relative_to(RECORDINGS)) for path in RECORDINGS.glob("*/*.http") if path not in played)
    assert not unplayed, f"recordings no case plays, so pi never reads them: {unplayed}"


def test_every_listed_difference_names_a_case_and_is_listed_once() -> None:
    names = {case.name for api in APIS for case in module(api).CASES}
    keys = [fingerprint(without_reason(item)) for item in listed()]
    assert len(keys) == len(set(keys)), "a difference is listed twice"
    unknown = [item for item in listed() if f"{item['api']}/{item['case']}" not in names]
    assert not unknown, f"listed differences of no case: {unknown}"


async def found(api: str) -> list[Json]:
    """Every difference of pi's and our run of each case of the API."""
    cases: list[ProviderCase] = module(api).CASES
    info: pp.Model = module(api).INFO
    pi_side, our_side = await asyncio.gather(
        pis(api, cases, info), asyncio.gather(*(ours(case, info) for case in cases))
    )
    out = []
    for case, mine in zip(cases, our_side, strict=True):
        out += differences(api, case.name.split("/", 1)[1], mine, pi_side[case.name])
    return out


@pytest.mark.parametrize("api", APIS)
async def test_pi_and_ours_differ_only_where_listed(api: str) -> None:
    found_now = await found(api)
    expected = [without_reason(item) for item in listed() if item["api"] == api]
    listed_now = {fingerprint(item) for item in expected}
    found_keys = {fingerprint(item) for item in found_now}
    unlisted = [item for item in found_now if fingerprint(item) not in listed_now]
    gone = [item for item in expected if fingerprint(item) not in found_keys]
    problems = [f"not listed in {DIFFERENCES.name}:\n{json.dumps(item, ensure_ascii=False)}" for item in unlisted]
    problems += [f"listed, but no longer differs:\n{json.dumps(item, ensure_ascii=False)}" for item in gone]
    assert not problems, "\n".join(problems)


# --- rewriting differences.json -------------------------------------------------------------------


def pattern(item: Json) -> tuple[str, str, str]:
    """Where a difference is, its indexes aside: differences there share a reason."""
    return item["api"], item["what"], re.sub(r"\[\d+:?\]", "[]", item["path"])


def alike(item: Json) -> str:
    """A difference as text without its case: the same difference in another case shares its reason."""
    return fingerprint({name: value for name, value in item.items() if name not in ("case", "reason")})


async def update(apis: list[str]) -> None:
    """Rewrite the differences of `apis` (every API's when none is named), keeping the others'."""
    call.BACKOFF_SECONDS = 0.0  # as conftest.py has it for the tests
    old = listed(reasoned=False)
    reasons = {fingerprint(without_reason(item)): item["reason"] for item in old}
    by_values = {alike(item): item["reason"] for item in old}
    by_pattern = {pattern(item): item["reason"] for item in old}
    rewritten = apis or list(APIS)
    entries = []
    for api in APIS:
        if api not in rewritten:
            entries += [item for item in old if item["api"] == api]
            continue
        for item in await found(api):
            reason = reasons.get(fingerprint(item)) or by_values.get(alike(item)) or by_pattern.get(pattern(item), "")
            entries.append({**item, "reason": reason})
    text = json.dumps({"differences": entries}, indent=2, ensure_ascii=False)
    DIFFERENCES.write_text(text + "\n", encoding="utf-8")
    unreasoned = sum(1 for item in entries if not item["reason"])
    print(f"{DIFFERENCES}: {len(entries)} differences, {unreasoned} without a reason")


if __name__ == "__main__":
    asyncio.run(update(sys.argv[1:]))
