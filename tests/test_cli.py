"""The `pi-proto` command as users run it: serve, stream and demo as subprocesses."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections import deque
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

import pi_proto as pp
from pi_proto.cli.demo import run_read
from pi_proto.grpc.client import _split_batch
from pi_proto.grpc.methods import BATCHED_METHOD
from pi_proto.transcripts.pi_json import assistant_to_pi

from .helpers import endless_script, readme_context, serve_process

ROOT = Path(__file__).resolve().parents[1]


def pi_proto(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_proto.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


@pytest.fixture
def served() -> Iterator[tuple[subprocess.Popen[str], str]]:
    with serve_process() as (process, target):
        assert target.startswith("127.0.0.1:")
        yield process, target


def test_serve_prints_one_line_and_stops_cleanly_on_sigterm(
    served: tuple[subprocess.Popen[str], str],
) -> None:
    process, target = served
    assert int(target.rsplit(":", 1)[1]) > 0
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 0
    assert process.stdout is not None
    assert process.stdout.read() == ""  # exactly one line on stdout


def test_stream_json_prints_each_event_as_protojson(served: tuple[subprocess.Popen[str], str]) -> None:
    _, target = served
    result = pi_proto("stream", "--target", target, "--json", "请读取 README")
    assert result.returncode == 0, result.stderr
    events = [pp.decode_json(pp.ModelEvent, line) for line in result.stdout.splitlines()]
    assert events[0].start is not None
    assert events[-1].done is not None
    assert all(event.partial is None for event in events)
    done = events[-1].done
    assert done.message is not None
    assert pp.text_of(done.message) == "我先读取项目说明。"
    assert json.loads(result.stdout.splitlines()[-1])["done"]["reason"] == "STOP_REASON_TOOL_USE"


def test_stream_prints_text_live_and_the_final_message(served: tuple[subprocess.Popen[str], str]) -> None:
    _, target = served
    result = pi_proto("stream", "--target", target, "hello")
    assert result.returncode == 0, result.stderr
    assert "我先读取项目说明。" in result.stdout
    assert '→ read({"path": "README.md"})' in result.stdout
    assert "[toolUse] scripted-v1" in result.stdout


def test_stream_without_a_server_reports_the_error_and_fails() -> None:
    result = pi_proto("stream", "--target", "127.0.0.1:1", "--timeout", "5", "hello")
    assert result.returncode == 1
    assert "✗" in result.stdout
    assert "[error]" in result.stdout


def test_serve_rejects_a_bad_script_with_a_clear_error(tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text('[{"role": "assistant", "content": [{"type": "video"}], "stopReason": "stop"}]')
    result = pi_proto("serve", "--port", "0", "--script", str(script))
    assert result.returncode == 2
    assert "turn 1.content[0].type" in result.stderr


def test_demo_plays_the_round_trip_with_a_real_read() -> None:
    result = pi_proto("demo", "--delay", "0")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.index("turn 1") < out.index('→ read({"path": "README.md"})') < out.index("← read: # pi-proto")
    assert out.index("← read: # pi-proto") < out.index("turn 2") < out.index("项目名：pi-proto")
    assert "saved transcript" in out
    assert '"role": "toolResult"' in out


def test_sigterm_mid_stream_ends_the_client_stream_with_aborted(tmp_path: Path) -> None:
    # A turn still being played whenever the server is stopped, however slow the machine.
    flags = ("--script", str(endless_script(tmp_path)), "--delta-size", "1", "--delay", "0.2")
    with serve_process(*flags) as (server, target):
        client = subprocess.Popen(
            [sys.executable, "-m", "pi_proto.cli", "stream", "--target", target, "--json", "hi"],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert client.stdout is not None
        first = client.stdout.readline()
        assert '"start"' in first
        server.send_signal(signal.SIGTERM)
        rest = client.stdout.read().splitlines()
        assert client.wait(timeout=60) == 1
        last = pp.decode_json(pp.ModelEvent, rest[-1])
        assert last.error is not None
        assert last.error.reason == pp.StopReason.ABORTED
        assert last.error.message is not None
        assert last.error.message.error_message == "the server is shutting down"
        assert server.wait(timeout=60) == 0


def test_serve_workers_share_one_port_and_stop_together() -> None:
    with serve_process("--workers", "2") as (process, target):
        assert process.stderr is not None
        line = process.stderr.readline()
        while "workers, processes" not in line:
            line = process.stderr.readline()
        pids = [int(pid) for pid in line.split("processes")[1].split()]
        assert len(pids) == 2
        for _ in range(4):  # every call lands on one of the workers, each a whole server
            done = subprocess.run(
                [sys.executable, "-m", "pi_proto.cli", "stream", "--target", target, "--json", "hi"],
                capture_output=True,
                text=True,
                timeout=30,
                check=True,
            )
            assert '"done"' in done.stdout.splitlines()[-1]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_serve_workers_share_the_http_port_too() -> None:
    body = json.dumps({"context": {"messages": [{"user": {"content": [{"text": {"text": "hi"}}]}}]}}).encode()
    with serve_process("--workers", "2", "--http-port", "0") as (process, _target):
        assert process.stdout is not None
        http = process.stdout.readline().removeprefix("http on ").strip()
        for _ in range(4):
            request = urllib.request.Request(
                f"http://{http}/v1/stream", data=body, headers={"content-type": "application/json"}
            )
            with urllib.request.urlopen(request, timeout=30) as response:
                events = [line for line in response.read().decode().splitlines() if line.startswith("data: ")]
            assert json.loads(events[-1].removeprefix("data: "))["type"] == "done"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0


def batched_message_sizes(target: str) -> list[int]:
    """The events in each message of one StreamBatched call to `target`."""

    async def call() -> list[int]:
        request = pp.encode(pp.StreamRequest(context=readme_context()))
        async with grpc.aio.insecure_channel(target) as channel:
            method: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(BATCHED_METHOD)
            sizes = []
            async for message in method(request):
                events: deque[bytes] = deque()
                assert _split_batch(message, events) is None
                sizes.append(len(events))
            return sizes

    return asyncio.run(call())


def test_serve_flush_ms_lets_a_paced_stream_share_messages(tmp_path: Path) -> None:
    script = tmp_path / "turn.json"
    script.write_text(json.dumps([assistant_to_pi(pp.assistant_message("x" * 40, timestamp=1))]))
    paced = ("--script", str(script), "--delta-size", "1", "--delay", "0.002")
    with serve_process(*paced, "--flush-ms", "50") as (_, target):
        shared = batched_message_sizes(target)
    assert sum(shared) == 44  # start, text start, 40 deltas, text end, done
    # A message waits 50 ms after its first event, and events come every 2 ms: each holds more
    # than one, but a last one that holds only the terminal event (which is never held back).
    # Without the window, how many share depends on how busy the machine is.
    assert all(size > 1 for size in shared[:-1]), shared


BAD_VALUES = [
    *(("--flush-ms", value) for value in ("-1", "nan", "inf", "soon")),
    *(("--delay", value) for value in ("-0.1", "nan", "inf")),
    *(("--stream-timeout", value) for value in ("0", "nan", "inf")),
    ("--grace", "nan"),
    ("--port", "70000"),
    ("--port", "-1"),
    ("--http-port", "65536"),
    ("--workers", "0"),
    ("--delta-size", "0"),
    ("--max-streams", "-1"),
    ("--max-messages", "0"),
    ("--max-blocks", "0"),
    ("--max-queued-bytes", "0"),
    ("--max-request-bytes", "2147483648"),
    ("--max-request-bytes", "lots"),
]


@pytest.mark.parametrize(("flag", "value"), BAD_VALUES, ids=[f"{flag}={value}" for flag, value in BAD_VALUES])
def test_serve_refuses_a_value_out_of_its_flags_range(flag: str, value: str) -> None:
    result = pi_proto("serve", "--port", "0", flag, value)
    assert result.returncode == 2
    assert f"argument {flag}: " in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("value", ["0", "-5", "nan"])
def test_stream_refuses_a_timeout_that_is_not_a_deadline(value: str) -> None:
    result = pi_proto("stream", "--timeout", value, "hi")
    assert (result.returncode, "argument --timeout: " in result.stderr) == (2, True)


def test_a_second_server_on_a_port_in_use_is_refused(served: tuple[subprocess.Popen[str], str]) -> None:
    _, target = served
    port = target.rpartition(":")[2]
    result = pi_proto("serve", "--port", port)
    assert result.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr


def test_serve_refuses_flags_that_cannot_go_together(tmp_path: Path) -> None:
    same = pi_proto("serve", "--port", "50999", "--http-port", "50999")
    assert same.returncode == 2
    assert "--http-port and --port must differ: both are 50999" in same.stderr


@pytest.mark.parametrize(("content", "words"), [("one\ntwo\n", "one word"), ("", "empty"), (None, "No such file")])
def test_serve_names_the_token_file_it_cannot_use(tmp_path: Path, content: str | None, words: str) -> None:
    token = tmp_path / "token"
    if content is not None:
        token.write_text(content)
    result = pi_proto("serve", "--port", "0", "--token-file", str(token))
    assert result.returncode == 2
    assert f"--token-file {token}: " in result.stderr
    assert words in result.stderr


def test_workers_pass_on_a_worker_refusing_its_flags(tmp_path: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text("not json")
    result = pi_proto("serve", "--port", "0", "--workers", "2", "--script", str(script))
    assert result.returncode == 2
    assert str(script) in result.stderr


def test_ctrl_c_ends_a_stream_with_its_aborted_event_and_no_traceback(tmp_path: Path) -> None:
    flags = ("--script", str(endless_script(tmp_path)), "--delta-size", "1", "--delay", "0.05")  # never ends
    with serve_process(*flags) as (_, target):
        command = [sys.executable, "-m", "pi_proto.cli", "stream", "--json", "--target", target, "hi"]
        client = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        assert client.stdout is not None
        first = client.stdout.readline()  # the stream has started
        client.send_signal(signal.SIGINT)
        rest, errors = client.communicate(timeout=60)
    lines = [first, *rest.splitlines()]
    assert client.returncode == 130
    assert "Traceback" not in errors
    last = json.loads(lines[-1])
    assert last["error"]["reason"] == "STOP_REASON_ABORTED"
    assert last["error"]["message"]["errorMessage"] == "interrupted by SIGINT"


def test_the_demos_read_tool_reads_only_regular_files(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "README.md")
    call = pp.ToolCall(id="call_1", name="read", arguments_json='{"path": "README.md"}')
    result = run_read(call, tmp_path)
    assert result.is_error
    assert pp.text_of(result) == "read failed: not a regular file"
