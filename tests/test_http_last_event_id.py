"""`Last-Event-ID` on the SSE endpoints of `pi-proto serve` (kept streams are on by default): an id
whose event number is not one a uint64 holds, or is no number, is the client's mistake, answered
400 with a message that says so, and never a 500 or a traceback in the server's log."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyqwest
import pytest

PI_CONTEXT = {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}
BODIES = {
    "/v1/stream": PI_CONTEXT,
    "/messages": {"model": "scripted-v1", "context": PI_CONTEXT, "options": {}},
    "/api/stream": {"model": {"id": "scripted-v1", "provider": "scripted"}, "context": PI_CONTEXT},
}
OUT_OF_RANGE = {
    "2^64": "18446744073709551616",
    "2^64 and more": "99999999999999999999999",
    "5,000 digits": "9" * 5000,
}


async def resume(base: str, path: str, last_event_id: str) -> tuple[int, str]:
    """POST `path` with `Last-Event-ID`: the status and the body."""
    headers = {"content-type": "application/json", "last-event-id": last_event_id}
    body = json.dumps(BODIES[path]).encode()
    reply = await pyqwest.Client().post(base + path, headers=headers, content=body)
    return reply.status, reply.content.decode()


def error_message(path: str, body: str) -> str:
    """The message of each protocol's error body."""
    value = json.loads(body)
    if path == "/messages":
        return str(value["error"]["message"])
    if path == "/api/stream":
        return str(value["error"])
    return str(value["message"])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """`pi-proto serve --http-port 0`: its base URL, and the file its log (stderr) goes to."""
    log = tmp_path_factory.mktemp("serve") / "stderr"
    command = [sys.executable, "-m", "pi_proto.cli", "serve", "--port", "0", "--http-port", "0"]
    with log.open("w") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("listening on "), log.read_text()
        yield "http://" + process.stdout.readline().removeprefix("http on ").strip(), log
    finally:
        process.kill()
        process.communicate()


def assert_no_traceback(log: Path) -> None:
    logged = log.read_text()
    assert "Traceback" not in logged, logged
    assert "Exception" not in logged, logged


async def test_an_event_number_of_2_64_or_more_is_refused_400_as_out_of_range(server: tuple[str, Path]) -> None:
    base, log = server
    answers = {
        (path, name): await resume(base, path, f"b4W4r7BK12Dpy5y4lRydkw:{number}")
        for path in BODIES
        for name, number in OUT_OF_RANGE.items()
    }
    for (path, name), (status, body) in answers.items():
        assert status == 400, (path, name, status, body[:300])
        message = error_message(path, body)
        assert "out of range" in message, (path, name, message[:300])
        assert "set_int_max_str_digits" not in message
        assert len(message) < 400  # the id is cut short, not echoed whole
    assert_no_traceback(log)


async def test_an_id_whose_event_number_is_no_number_is_refused_400(server: tuple[str, Path]) -> None:
    base, log = server
    for last_event_id in ("b4W4r7BK12Dpy5y4lRydkw:x", "b4W4r7BK12Dpy5y4lRydkw:-1", "b4W4r7BK12Dpy5y4lRydkw", "12"):
        status, body = await resume(base, "/v1/stream", last_event_id)
        assert status == 400, (last_event_id, body)
        assert "is not an id this server sent: <stream id>:<event number>" in error_message("/v1/stream", body)
    assert_no_traceback(log)


async def test_the_largest_event_number_is_read_and_the_stream_looked_for(server: tuple[str, Path]) -> None:
    base, log = server
    status, body = await resume(base, "/v1/stream", f"b4W4r7BK12Dpy5y4lRydkw:{2**64 - 1}")
    assert status == 404, body  # a number the server reads: the stream is not one it keeps
    assert_no_traceback(log)
