"""The HTTP ports answer only the hosts they serve (DNS rebinding): a page of someone else's name,
pointed at 127.0.0.1, sends that name as its `Host`, and must get nothing, on `pi-proto serve`'s
HTTP port and on `pi-proto view`'s, whatever the path and protocol."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pi_proto.web.hosts import AllowedHosts, host_of

from .helpers import serve_process, view_process

SESSION = Path(__file__).parent / "fixtures" / "pi-sessions" / "before-compaction.jsonl"
LIST_MODELS = "/pi.ai.v1.ModelService/ListModels?encoding=json&message=%7B%7D"
PI_CONTEXT = {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}
# What a page or a client posts on each of the HTTP port's protocols: path, content type, body.
POSTS: dict[str, tuple[str, str, bytes]] = {
    "sse": ("/v1/stream", "application/json", json.dumps(PI_CONTEXT).encode()),
    "pi-messages": (
        "/messages",
        "application/json",
        json.dumps({"model": "scripted-v1", "context": PI_CONTEXT, "options": {}}).encode(),
    ),
    "streamProxy": (
        "/api/stream",
        "application/json",
        json.dumps({"model": {"id": "scripted-v1", "provider": "scripted"}, "context": PI_CONTEXT}).encode(),
    ),
    "connect": ("/pi.ai.v1.ModelService/ListModels", "application/json", b"{}"),
    "connect-stream": ("/pi.ai.v1.ModelService/Stream", "application/connect+json", b"\0\0\0\0\2{}"),
    "grpc-web": ("/pi.ai.v1.ModelService/ListModels", "application/grpc-web+proto", b"\0\0\0\0\0"),
    "grpc-web-text": ("/pi.ai.v1.ModelService/ListModels", "application/grpc-web-text", b"AAAAAAA="),
}


def request(port: int, head: str, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """Send one HTTP/1.1 request (its head without the final blank line) and read the answer to
    its end: status, headers, body."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(head.encode("latin-1") + b"\r\nconnection: close\r\n\r\n" + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    top, _, rest = answer.partition(b"\r\n\r\n")
    status_line, *lines = top.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    if headers.get("transfer-encoding") == "chunked":
        rest = _unchunked(rest)
    return int(status_line.split(" ")[1]), headers, rest


def _unchunked(data: bytes) -> bytes:
    body = b""
    while True:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            return body
        body, data = body + data[:size], data[size + 2 :]


def get(port: int, path: str, host: str | None) -> tuple[int, dict[str, str], bytes]:
    return request(port, f"GET {path} HTTP/1.1" + ("" if host is None else f"\r\nhost: {host}"))


def post(port: int, path: str, host: str, media_type: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
    head = f"POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: {media_type}\r\ncontent-length: {len(body)}"
    return request(port, head, body)


@contextmanager
def serving(*flags: str) -> Iterator[int]:
    """`pi-proto serve --http-port 0 FLAGS`, as a user runs it: yields its HTTP port."""
    with serve_process("--http-port", "0", *flags) as (process, _):
        assert process.stdout is not None
        yield int(process.stdout.readline().rsplit(":", 1)[1])


def refused(answer: tuple[int, dict[str, str], bytes], host: str) -> bool:
    """Whether an answer is the refusal of `host`: 421 and a message naming it, nothing else."""
    status, headers, body = answer
    if status != 421 or headers.get("content-type") != "application/json":
        return False
    message = json.loads(body)
    return message["code"] == "permission_denied" and f"host {host!r}" in message["message"]


# --- pi-proto view --------------------------------------------------------------------------------


def test_view_answers_its_file_only_to_loopback_names() -> None:
    with view_process(SESSION) as (_, port):
        rebound = {
            host: get(port, "/ui/file", f"{host}:{port}")
            for host in ("evil.example", "localhost.evil.example", "evil-localhost", "127.0.0.1.evil.example")
        }
        page = get(port, "/", f"evil.example:{port}")
        loopback = {
            host: get(port, "/ui/file", host)
            for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", "[::1]", f"LocalHost.:{port}")
        }
        under_localhost = get(port, "/ui/file", f"pi.localhost:{port}")
    data = SESSION.read_bytes()
    for host, answer in rebound.items():
        assert refused(answer, host), (host, answer[0])
        assert data[:200] not in answer[2]
    assert refused(page, "evil.example")
    for host, (status, _, body) in loopback.items():
        assert (host, status, body == data) == (host, 200, True)
    # Browsers resolve names under .localhost to loopback themselves: no page can rebind one.
    assert (under_localhost[0], under_localhost[2] == data) == (200, True)


def test_a_request_without_one_host_or_with_a_malformed_one_is_refused() -> None:
    with view_process(SESSION) as (_, port):
        none = request(port, "GET /ui/file HTTP/1.0")
        two = request(port, f"GET /ui/file HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nhost: evil.example")
        malformed = get(port, "/ui/file", "evil.example/x")
    for status, _, body in (none, two, malformed):
        assert status == 400
        assert json.loads(body)["code"] == "invalid_argument"
    assert json.loads(none[2])["message"] == "the request has no Host header"
    assert json.loads(two[2])["message"] == "the request has more than one Host header"


# --- pi-proto serve -------------------------------------------------------------------------------


def test_serve_without_a_token_answers_another_host_on_no_path_and_no_protocol() -> None:
    with serving() as port:
        own = get(port, LIST_MODELS, f"127.0.0.1:{port}")
        models = get(port, LIST_MODELS, f"evil.example:{port}")
        page = get(port, "/", f"evil.example:{port}")
        posts = {
            name: post(port, path, f"evil.example:{port}", media_type, body)
            for name, (path, media_type, body) in POSTS.items()
        }
        preflight = request(
            port,
            f"OPTIONS /v1/stream HTTP/1.1\r\nhost: evil.example:{port}\r\norigin: http://evil.example:{port}\r\n"
            "access-control-request-method: POST",
        )
    assert own[0] == 200
    assert b"scripted-v1" in own[2]
    for name, answer in {"ListModels": models, "page": page, "preflight": preflight, **posts}.items():
        assert refused(answer, "evil.example"), (name, answer)
        assert b"scripted-v1" not in answer[2]


def test_serve_refuses_another_host_over_http2_too(tmp_path: Path) -> None:
    with serving() as port:
        answers = {
            authority: subprocess.run(
                [
                    "curl", "-s", "--http2-prior-knowledge", "-H", f"host: {authority}", "-o", str(tmp_path / "body"),
                    "-w", "%{http_version} %{http_code}", f"http://127.0.0.1:{port}{LIST_MODELS}",
                ],
                capture_output=True, text=True, timeout=120, check=True,
            ).stdout
            for authority in (f"evil.example:{port}", f"localhost:{port}")
        }  # fmt: skip
    assert answers == {f"evil.example:{port}": "2 421", f"localhost:{port}": "2 200"}


def test_serve_allowed_host_adds_a_name() -> None:
    with serving("--allowed-host", "pi.example", "--allowed-host", "2001:db8::1") as port:
        named = get(port, LIST_MODELS, f"PI.example:{port}")
        address = get(port, LIST_MODELS, "[2001:db8::1]")
        loopback = get(port, LIST_MODELS, f"localhost:{port}")
        other = get(port, LIST_MODELS, f"other.example:{port}")
    assert (named[0], address[0], loopback[0]) == (200, 200, 200)
    assert refused(other, "other.example")


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--allowed-host", "pi.example"], "--allowed-host needs --http-port"),
        (["--http-port", "0", "--allowed-host", "http://pi.example"], "--allowed-host: not a host name or IP address"),
        (["--http-port", "0", "--allowed-host", "pi.example:8080"], "--allowed-host: not a host name or IP address"),
    ],
)
def test_serve_allowed_host_must_be_a_host_on_an_http_port(flags: list[str], said: str) -> None:
    command = [sys.executable, "-m", "pi_proto.cli", "serve", "--port", "0", *flags]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, "")
    assert said in done.stderr


def test_serve_help_names_allowed_host() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pi_proto.cli", "serve", "--help"], capture_output=True, text=True, timeout=120
    )
    assert "--allowed-host NAME" in done.stdout


# --- which hosts each bind answers ----------------------------------------------------------------


def allows(hosts: AllowedHosts, value: str) -> bool:
    name = host_of(value)
    return name is not None and hosts.allows(name)


def test_a_wildcard_bind_answers_ip_addresses_and_loopback_names_but_no_other_name() -> None:
    for bind in ("0.0.0.0", "::"):
        hosts = AllowedHosts(bind, ["pi.example"])
        assert all(allows(hosts, value) for value in ("192.0.2.7:8080", "[2001:db8::2]", "localhost", "pi.example"))
        assert not any(allows(hosts, value) for value in ("evil.example", "localhost.evil.example"))


def test_another_bind_answers_its_own_address_and_the_names_given() -> None:
    hosts = AllowedHosts("192.0.2.7", ["pi.example"])
    assert allows(hosts, "192.0.2.7:8080")
    assert allows(hosts, "pi.example")
    assert not any(allows(hosts, value) for value in ("localhost", "127.0.0.1", "192.0.2.8", "evil.example"))
    assert allows(AllowedHosts("[2001:db8::1]"), "[2001:db8:0::1]:80")
