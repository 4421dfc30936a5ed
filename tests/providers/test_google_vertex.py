"""google-vertex: the official google-genai SDK in Vertex mode against recorded Vertex AI streams,
through our server.

The stream is read by the code google-generative-ai reads with (its tests pin each part kind);
these tests pin what Vertex has of its own: sign-in by API key or by application default
credentials for a project and location, the endpoint, the budgets, and Vertex's error bodies.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import urllib.parse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

import pi_proto as pp
from pi_proto.models.providers import google_vertex
from pi_proto.models.providers.call import Call
from pi_proto.models.providers.catalog import ModelConfig

from .expect import NO_USAGE, Expected, Response, text, thinking, tool_call
from .harness import (
    CLOCK_MS,
    READ,
    RETRYING,
    SECRET,
    by_name,
    cancel_while_streaming,
    level_map,
    outline,
    output_limit_cases,
    play,
    provider_case,
    run,
)
from .replay import RECORDINGS

API = "google-vertex"
# pi 1.6's catalog entry (providers/data/google-vertex.json), served from the replay server.
INFO = pp.Model(
    id="gemini-2.5-flash",
    name="Gemini 2.5 Flash",
    api=API,
    provider="google-vertex",
    base_url="http://replaced-by-the-replay-server",
    reasoning=True,
    input=[pp.InputKind.TEXT, pp.InputKind.IMAGE],
    cost=pp.ModelCost(input=0.3, output=2.5, cache_read=0.03, cache_write=0),
    context_window=1_048_576,
    max_tokens=65_536,
)
# The replay server stands for Vertex's collection: the SDK adds the publisher's model path.
PATH = "/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"

case = partial(provider_case, API)
CASES = [
    case("text"),
    case("thinking", options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.MEDIUM)),
    case("tool-call-large", options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.LOW)),
    case("two-tool-calls"),
    case("cache-usage"),
    case("length"),
    case("safety"),
    case("prompt-blocked"),
    case("malformed-function-call"),
    case("unavailable-mid-stream"),
    case("cut-mid-stream", "text.http", cut_after=2),
    case("error-401"),
    case("error-404"),
    case("error-429-long", options=RETRYING),
    case("error-429-then-text", "error-429-short.http", "text.http", options=RETRYING),
    case("error-500", "error-500.http", "error-500.http", "error-500.http"),
    *output_limit_cases(API, INFO),
]
BY_NAME = by_name(CASES)
message = Expected(INFO).message
usage = partial(Expected(INFO).usage, reasoning=0)  # every chunk has usageMetadata
RESPONSE_ID = "mI0TaYqWJpXb7M8P1t2x4Qo"


def response(finish_reason: str | None) -> Response:
    return Response(id=RESPONSE_ID, raw_stop_reason=finish_reason)


async def test_text_streams_from_the_publishers_model_with_the_api_key() -> None:
    events, replay = await play(BY_NAME["text"], INFO)
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Hello'",
        "textDelta 0 delta='! 你好，' usage=4/1/0/0",
        "textDelta 0 delta='how can I help?' usage=4/5/0/0",
        "textEnd 0 usage=4/12/0/0",
        "done STOP",
    ]
    request = replay.requests[0]
    assert (request.method, request.path) == ("POST", PATH)
    assert request.headers["x-goog-api-key"] == SECRET
    assert "authorization" not in request.headers
    assert request.body == {
        "contents": [{"parts": [{"text": "hi"}], "role": "user"}],
        "generationConfig": {"maxOutputTokens": 65_536, "thinkingConfig": {"thinking_budget": 0}},
    }


async def test_thought_parts_are_thinking_with_their_signatures() -> None:
    events, final = await run(BY_NAME["thinking"], INFO)
    thought_signature = "b8dRaALk2xBziy9mgVQTzkQMFUP6wAJ8uzhhJQilZZSsBsPtQB0hOEt5Y6RMv1v/NfE+gDmm"
    text_signature = "2nlr0H/9/9oc14JZEeH/3Kfdr6pSGAwN7TuhFKy9S0MUHbhv8YLiu+bPnPDycFR1nfPsF4a8"
    assert outline(events)[0:2] == ["start", "thinkingStart 0"]
    assert final == message(
        thinking("**Multiplying in parts**\n\n27 × 400 = 10800, 27 × 53 = 1431; the sum is 12231.", thought_signature),
        text("27 × 453 = 12231.", text_signature),
        usage=usage(12, 9 + 98, reasoning=98),
        response=response("STOP"),
        stop=pp.StopReason.STOP,
    )


async def test_function_calls_come_whole_and_end_the_turn_as_a_tool_use() -> None:
    events, final = await run(BY_NAME["tool-call-large"], INFO)
    assert [line.split(" ")[0] for line in outline(events)] == [
        "start",
        "toolcallStart",
        "toolcallDelta",
        "toolcallEnd",
        "done",
    ]
    block = final.content[0].tool_call
    assert block is not None
    assert block.id == f"edit_{CLOCK_MS}_1"  # Vertex sent no id: pi's <name>_<now>_<n>
    assert final.stop_reason == pp.StopReason.TOOL_USE
    _, both = await run(BY_NAME["two-tool-calls"], INFO)
    assert both == message(
        text("I'll read both files."),
        tool_call("k3v9x2ab", "read", '{"path":"README.md"}'),
        tool_call("q7m1z8cd", "read", '{"path":"Makefile"}'),
        usage=usage(96, 28),
        response=response("STOP"),
        stop=pp.StopReason.TOOL_USE,
    )


async def test_cached_tokens_length_and_safety() -> None:
    _, cached = await run(BY_NAME["cache-usage"], INFO)
    assert cached.usage == usage(2000, 9, cache_read=24000)
    _, length = await run(BY_NAME["length"], INFO)
    assert (length.stop_reason, length.raw_stop_reason) == (pp.StopReason.LENGTH, "MAX_TOKENS")
    events, safety = await run(BY_NAME["safety"], INFO)
    assert outline(events)[-1] == "error ERROR"
    assert safety.error_message == "the model stopped with finish reason 'SAFETY'"
    _, blocked = await run(BY_NAME["prompt-blocked"], INFO)
    assert blocked.error_message == "the provider blocked the prompt (PROHIBITED_CONTENT)"
    _, malformed = await run(BY_NAME["malformed-function-call"], INFO)
    assert malformed.error_message == "the model stopped with finish reason 'MALFORMED_FUNCTION_CALL'"


@pytest.mark.parametrize("name", ["unavailable-mid-stream", "cut-mid-stream"])
async def test_a_failure_or_a_cut_mid_stream_keeps_what_came_before(name: str) -> None:
    events, final = await run(BY_NAME[name], INFO)
    assert outline(events)[-1] == "error ERROR"
    assert pp.text_of(final) in ("Partial answer", "Hello! 你好，")
    assert final.error_message


@pytest.mark.parametrize(
    ("name", "error"),
    [
        (
            "error-401",
            "the provider answered 401 UNAUTHENTICATED: API keys are not supported by this API. Expected OAuth2 "
            "access token or other authentication credentials that assert a principal. See "
            "https://cloud.google.com/docs/authentication",
        ),
        (
            "error-404",
            "the provider answered 404 NOT_FOUND: Publisher Model `projects/pi-proto-test/locations/us-central1/"
            "publishers/google/models/gemini-nonexistent` was not found or your project does not have access to it. "
            "Please ensure you are using a valid model version. For more information, see: "
            "https://cloud.google.com/vertex-ai/generative-ai/docs/learn/model-versions",
        ),
        (
            "error-429-long",
            "the provider answered 429 RESOURCE_EXHAUSTED: Resource exhausted. Please try again later. Please refer "
            "to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.; the provider "
            "asks to retry after 120 s, longer than max_retry_delay_ms (60000 ms)",
        ),
        (
            "error-500",
            "the provider answered 500 INTERNAL: An internal error has occurred. Please retry or report in "
            "https://developers.generativeai.google/guide/troubleshooting",
        ),
    ],
)
async def test_an_error_status_ends_with_one_error_event_in_vertexs_words(name: str, error: str) -> None:
    events, final = await run(BY_NAME[name], INFO)
    assert outline(events) == ["start", "error ERROR"]
    assert final == message(usage=NO_USAGE, stop=pp.StopReason.ERROR, error=error)


async def test_a_429_with_a_short_delay_is_retried() -> None:
    _, final = await run(BY_NAME["error-429-then-text"], INFO)
    assert final.stop_reason == pp.StopReason.STOP


async def test_a_client_cancel_closes_the_provider_connection_and_ends_aborted() -> None:
    events, closed = await cancel_while_streaming(
        INFO, RECORDINGS / API / "text.http", provider_events=1, client_events=3
    )
    assert closed, "the provider never saw its connection close"
    assert outline(events)[-1] == "error ABORTED"


# --- sign-in ------------------------------------------------------------------------------------


@asynccontextmanager
async def token_server() -> AsyncIterator[tuple[str, list[bytes]]]:
    """An OAuth token endpoint on loopback: each POST gets an access token; yields its URL and the
    request bodies it got."""
    bodies: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
        )
        bodies.append(await reader.readexactly(length))
        token = json.dumps({"access_token": "ya29.test-token", "expires_in": 3599, "token_type": "Bearer"}).encode()
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(token), token)
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    host, port = server.sockets[0].getsockname()[:2]
    try:
        yield f"http://{host}:{port}/token", bodies
    finally:
        server.close()
        await server.wait_closed()


KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)  # the service account's, made per run
CLIENT_EMAIL = "pi-proto@pi-proto-test.iam.gserviceaccount.com"


def service_account(path: Path, token_uri: str) -> Path:
    """A service account key file, as the Cloud console writes it, whose token endpoint is `token_uri`."""
    pem = KEY.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "pi-proto-test",
                "private_key_id": "0123456789abcdef",
                "private_key": pem,
                "client_email": CLIENT_EMAIL,
                "client_id": "104729386510293847561",
                "token_uri": token_uri,
            }
        )
    )
    return path


def signed_claims(body: bytes) -> dict[str, Any]:
    """The claims of the JWT grant a token request carries, after checking its RS256 signature."""
    form = urllib.parse.parse_qs(body.decode())
    assert form["grant_type"] == ["urn:ietf:params:oauth:grant-type:jwt-bearer"]
    header, claims, signature = form["assertion"][0].split(".")
    KEY.public_key().verify(unpadded(signature), f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256())
    decoded: dict[str, Any] = json.loads(unpadded(claims))
    return decoded


def unpadded(part: str) -> bytes:
    """A JWT part: base64url without its padding."""
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


@pytest.mark.parametrize("key", ["", "gcp-vertex-credentials", "<authenticated>"])
async def test_without_a_key_application_default_credentials_sign_in_for_the_project(tmp_path: Path, key: str) -> None:
    async with token_server() as (token_uri, bodies):
        environment = {
            "GOOGLE_CLOUD_PROJECT": "pi-proto-test",
            "GOOGLE_CLOUD_LOCATION": "us-central1",
            "GOOGLE_APPLICATION_CREDENTIALS": str(service_account(tmp_path / "adc.json", token_uri)),
        }
        events, replay = await play(case("adc", "text.http", config={"api_key": key, "environment": environment}), INFO)
    assert outline(events)[-1] == "done STOP"
    assert len(bodies) == 1
    claims = signed_claims(bodies[0])
    assert (claims["iss"], claims["aud"]) == (CLIENT_EMAIL, "https://oauth2.googleapis.com/token")  # Google's audience
    assert claims["scope"] == "https://www.googleapis.com/auth/cloud-platform"
    request = replay.requests[0]
    assert request.headers["authorization"] == "Bearer ya29.test-token"
    assert "x-goog-api-key" not in request.headers
    # The replay server stands for the collection of the project's location.
    assert request.path == PATH


@pytest.mark.parametrize(
    ("environment", "error"),
    [
        ({}, "Vertex AI needs GOOGLE_CLOUD_PROJECT (or GCLOUD_PROJECT) and GOOGLE_CLOUD_LOCATION"),
        ({"GCLOUD_PROJECT": "p"}, "has no location: Vertex AI needs GOOGLE_CLOUD_LOCATION"),
        (
            {
                "GCLOUD_PROJECT": "p",
                "GOOGLE_CLOUD_LOCATION": "l",
                "GOOGLE_APPLICATION_CREDENTIALS": "/nonexistent.json",
            },
            "no application default credentials: File /nonexistent.json was not found.",
        ),
    ],
)
async def test_without_a_key_a_missing_project_location_or_credentials_file_is_named(
    environment: dict[str, str], error: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_APPLICATION_CREDENTIALS"):
        monkeypatch.delenv(name, raising=False)
    events, replay = await play(
        case("no-project", "text.http", config={"api_key": "", "environment": environment}), INFO
    )
    assert not replay.requests
    assert outline(events) == ["start", "error ERROR"]
    assert error in (events[-1].error.message.error_message or "")  # type: ignore[union-attr]


# --- the request --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base_url", "custom", "versioned"),
    [
        ("https://{location}-aiplatform.googleapis.com", None, False),  # pi's catalog: Vertex's own endpoint
        ("", None, False),
        ("https://gateway.example/vertex", "https://gateway.example/vertex", False),
        ("https://gateway.example/v1beta1/projects/p", "https://gateway.example/v1beta1/projects/p", True),
    ],
)
def test_the_base_url_is_vertexs_unless_it_names_an_endpoint(
    base_url: str, custom: str | None, versioned: bool
) -> None:
    assert google_vertex.custom_base_url(base_url) == custom
    assert google_vertex.has_version(base_url) is versioned


def request(model: pp.Model, options: pp.GenerationOptions) -> dict[str, Any]:
    context = pp.AgentContext(messages=[pp.agent_message(pp.user_message("hi", timestamp=1))], tools=[READ])
    call = Call(ModelConfig(info=model, api_key=SECRET), context, options, pp.AssistantMessageEventStream())
    return google_vertex.request(call)


@pytest.mark.parametrize(
    ("model_id", "level", "budget"),
    [
        ("gemini-2.5-flash-lite", pp.ThinkingLevel.MINIMAL, 128),  # pi's Vertex table: 2.5 Flash's
        ("gemini-2.5-flash", pp.ThinkingLevel.HIGH, 24576),
        ("gemini-2.5-pro", pp.ThinkingLevel.HIGH, 32768),
        ("gemini-2.0-flash", pp.ThinkingLevel.LOW, -1),
    ],
)
def test_thinking_budgets_are_pis_vertex_table(model_id: str, level: pp.ThinkingLevel, budget: int) -> None:
    config = request(dataclasses.replace(INFO, id=model_id), pp.GenerationOptions(reasoning=level))["config"]
    assert config["thinking_config"] == {"include_thoughts": True, "thinking_budget": budget}


def test_gemini_3_on_vertex_takes_a_thinking_level() -> None:
    model = dataclasses.replace(
        INFO, id="gemini-3-flash-preview", thinking_level_map=level_map({"off": None, "xhigh": None, "max": None})
    )
    config = request(model, pp.GenerationOptions(reasoning=pp.ThinkingLevel.HIGH))["config"]
    assert config["thinking_config"] == {"include_thoughts": True, "thinking_level": "HIGH"}


def test_tools_and_the_tool_choice_go_as_for_gemini() -> None:
    options = pp.GenerationOptions(tool_choice=pp.ToolChoice(mode=pp.ToolChoiceMode.REQUIRED), temperature=0.2)
    config = request(INFO, options)["config"]
    assert config["tools"][0]["function_declarations"][0]["name"] == "read"
    assert config["tool_config"] == {"function_calling_config": {"mode": "ANY"}}
    assert config["temperature"] == 0.2
