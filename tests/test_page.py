"""The web page at / of the HTTP port, and `pi-proto view FILE`: what the server answers (the
page itself runs in a browser in tests/test_ui.py)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pi_proto as pp
from pi_proto.web import HttpServer

from .helpers import serve_process, view_process

UI = Path(pp.__file__).parent / "web" / "ui"
SESSION = Path(__file__).parent / "fixtures" / "pi-sessions" / "before-compaction.jsonl"


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, {key.lower(): value for key, value in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {key.lower(): value for key, value in error.headers.items()}, error.read()


async def test_the_page_and_its_assets_are_served_with_a_policy_of_their_own_origin_only() -> None:
    async with pp.ModelServer(pp.ScriptedModel.readme()) as server, HttpServer(server) as http:
        page = await asyncio.to_thread(get, f"{http.url}/")
        script = await asyncio.to_thread(get, f"{http.url}/ui/app.js")
        style = await asyncio.to_thread(get, f"{http.url}/ui/app.css")
        no_file = await asyncio.to_thread(get, f"{http.url}/ui/file")
    assert page[0] == script[0] == style[0] == 200
    assert page[2] == (UI / "index.html").read_bytes()
    assert script[2] == (UI / "app.js").read_bytes()
    assert page[1]["content-type"].startswith("text/html")
    assert script[1]["content-type"].startswith("text/javascript")
    policy = page[1]["content-security-policy"]
    assert "default-src 'self'" in policy
    assert "connect-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy
    assert page[1]["x-content-type-options"] == "nosniff"
    assert no_file[0] == 404


async def test_no_ui_serves_no_page_but_the_protocols_as_before() -> None:
    async with pp.ModelServer(pp.ScriptedModel.readme()) as server, HttpServer(server, ui=False) as http:
        status, _, _ = await asyncio.to_thread(get, f"{http.url}/")
        listed = await asyncio.to_thread(
            get, f"{http.url}/pi.ai.v1.ModelService/ListModels?encoding=json&message=%7B%7D"
        )
    assert status == 404
    assert listed[0] == 200


async def test_the_page_needs_no_token_but_every_call_it_makes_does() -> None:
    async with pp.ModelServer(pp.ScriptedModel.readme(), token="s3cret") as server, HttpServer(server) as http:
        page = await asyncio.to_thread(get, f"{http.url}/")
        listed = await asyncio.to_thread(
            get, f"{http.url}/pi.ai.v1.ModelService/ListModels?encoding=json&message=%7B%7D"
        )
    assert page[0] == 200
    assert listed[0] == 401


def test_serve_no_ui_needs_the_http_port() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pi_proto.cli", "serve", "--no-ui"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "--no-ui needs --http-port" in done.stderr


def test_serve_http_port_serves_the_page() -> None:
    with serve_process("--http-port", "0") as (process, _):
        assert process.stdout is not None
        http = process.stdout.readline().removeprefix("http on ").strip()
        status, _, body = get(f"http://{http}/")
    assert status == 200
    assert b"/ui/app.js" in body


def test_view_serves_the_file_on_a_loopback_port_and_prints_the_url() -> None:
    command = [sys.executable, "-m", "pi_proto.cli", "view", str(SESSION)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith(f"viewing {SESSION} at http://127.0.0.1:"), line
        url = line.split(" at ", 1)[1].strip()
        assert url.endswith("/#view")
        base = url.removesuffix("/#view")
        status, headers, body = get(f"{base}/ui/file")
        page = get(f"{base}/")
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert status == 200
    assert body == SESSION.read_bytes()
    assert headers["x-file-name"] == SESSION.name
    assert page[0] == 200


def test_view_refuses_a_file_it_cannot_read(tmp_path: Path) -> None:
    missing = tmp_path / "nothing.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "pi_proto.cli", "view", str(missing)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert str(missing) in done.stderr


def resident_bytes(pid: int) -> int:
    """The memory a process holds (VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for process {pid}")


def start_reading(port: int) -> tuple[socket.socket, bytes]:
    """GET /ui/file on a connection that then reads nothing more than the answer's head: the
    socket and the head."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the kernel holds little for it
    sock.settimeout(120)
    sock.connect(("127.0.0.1", port))
    sock.sendall(b"GET /ui/file HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    return sock, head


def test_view_sends_its_file_in_pieces_so_that_readers_do_not_each_hold_all_of_it(tmp_path: Path) -> None:
    size = 48 * 1024 * 1024
    big = tmp_path / "big.jsonl"
    with big.open("wb") as file:
        file.truncate(size)  # sparse: no disk written, but every byte read from it is memory
    readers: list[socket.socket] = []
    with view_process(big) as (process, port):
        try:
            assert get(f"http://127.0.0.1:{port}/")[0] == 200
            before = resident_bytes(process.pid)
            for _ in range(6):
                sock, head = start_reading(port)
                readers.append(sock)
                assert head.startswith(b"HTTP/1.1 200 ")
                assert f"content-length: {size}\r\n".encode() in head.lower()
            grown = resident_bytes(process.pid) - before
            # One reader, read to its end, gets the whole file all the same.
            received = 0
            while received < size and (chunk := readers[0].recv(1024 * 1024)):
                assert chunk.count(0) == len(chunk)
                received += len(chunk)
        finally:
            for sock in readers:
                sock.close()
    assert received == size
    # Six readers of the whole file, each answered as one piece, held six times 48 MiB.
    assert grown < size, f"the server grew by {grown:,} bytes for 6 readers of a {size:,}-byte file"


def test_view_answers_head_with_the_files_length_and_a_file_gone_with_404(tmp_path: Path) -> None:
    file = tmp_path / "session.jsonl"
    file.write_bytes(SESSION.read_bytes())
    with view_process(file) as (_, port):
        request = urllib.request.Request(f"http://127.0.0.1:{port}/ui/file", method="HEAD")
        with urllib.request.urlopen(request, timeout=60) as answer:
            length, body = answer.headers["content-length"], answer.read()
        file.unlink()
        gone = get(f"http://127.0.0.1:{port}/ui/file")
    assert (length, body) == (str(len(SESSION.read_bytes())), b"")
    assert gone[0] == 404
    assert gone[2] == b"cannot open the file to view: No such file or directory"
