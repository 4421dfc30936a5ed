"""pi's own coding agent (pi-coding-agent 1.6.0, its `pi` command) works against `pi-proto serve`.

pi is pointed at the server through a models.json provider of pi's `pi-messages` API, runs the
seed's README round trip in print mode (its built-in `read` tool reads a real README.md), and
writes its session file as it always does. The file is pi 1.6's own: a session header, the model
and thinking level entries, the system message with pi's tools, the turns. It converts to binary
and back byte for byte, and every field of its messages is typed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pi_proto as pp
from pi_proto.models.seed import README_REQUEST, README_TEXT
from pi_proto.transcripts.pi_session import entry_from_pi

from .helpers import serve_process

PI = Path(__file__).parent / "pi"
NODE = PI / "node_modules" / ".bin" / "node"
CLI = PI / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "bundle" / "cli.js"
TOKEN = "pi-cli-token"
MODEL = {
    "id": "scripted-v1",
    "name": "Scripted",
    "reasoning": False,
    "input": ["text"],
    "contextWindow": 100_000,
    "maxTokens": 4096,
    "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
}


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """pi's printed answer and the session file it wrote."""
    assert NODE.exists(), "`make pi-setup` installs Node 22 and pi's packages"
    assert CLI.exists(), "`make pi-setup` installs Node 22 and pi's packages"
    folder = tmp_path_factory.mktemp("pi-cli")
    token = folder / "token"
    token.write_text(TOKEN + "\n")
    agent, work, sessions = folder / "agent", folder / "work", folder / "sessions"
    for made in (agent, work, sessions):
        made.mkdir()
    (work / "README.md").write_text(README_TEXT + "\n", encoding="utf-8")
    with serve_process("--http-port", "0", "--token-file", str(token)) as (process, _):
        assert process.stdout is not None
        url = "http://" + process.stdout.readline().removeprefix("http on ").strip()
        provider = {"api": "pi-messages", "baseUrl": url, "apiKey": TOKEN, "models": [MODEL]}
        (agent / "models.json").write_text(json.dumps({"providers": {"pi-proto": provider}}), encoding="utf-8")
        environment = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "PI_CODING_AGENT_DIR": str(agent)}
        environment |= {"PI_OFFLINE": "1", "PI_TELEMETRY": "0"}
        command = [str(NODE), str(CLI), "--session-dir", str(sessions), "--model", "pi-proto/scripted-v1"]
        done = subprocess.run(
            [*command, "--no-extensions", "--no-skills", "-p", README_REQUEST],
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
            cwd=work,
            env=environment,
        )
    assert done.returncode == 0, done.stderr
    (written,) = sessions.glob("*.jsonl")
    return done.stdout.strip(), written


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_pi_runs_the_readme_round_trip_through_pi_messages(session: tuple[str, Path]) -> None:
    answer, written = session
    messages = [line["message"] for line in lines(written) if line["type"] == "message"]
    assert [message["role"] for message in messages] == ["system", "user", "assistant", "toolResult", "assistant"]
    assert "read" in [tool["name"] for tool in messages[0]["toolsAdded"]]
    call = messages[2]["content"][1]
    assert (call["type"], call["name"], call["arguments"]) == ("toolCall", "read", {"path": "README.md"})
    assert messages[3]["toolCallId"] == call["id"]
    assert README_TEXT in messages[3]["content"][0]["text"]  # pi's read tool read the real file
    assert [messages[2]["stopReason"], messages[4]["stopReason"]] == ["toolUse", "stop"]
    assert messages[4]["content"][-1]["text"] == answer  # what pi printed is the model's last text
    assert (messages[2]["api"], messages[2]["provider"], messages[2]["model"]) == (
        "pi-messages",
        "pi-proto",
        "scripted-v1",
    )


def test_pi_s_session_file_converts_to_binary_and_back_byte_for_byte(session: tuple[str, Path]) -> None:
    _, written = session
    binary = written.with_suffix(".binpb")
    back = written.with_name("back.jsonl")
    for source, target in ((written, binary), (binary, back)):
        convert = [sys.executable, "-m", "pi_proto.cli", "convert", str(source), str(target)]
        done = subprocess.run(convert, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
    assert back.read_bytes() == written.read_bytes()


def test_every_field_of_pi_s_messages_is_typed(session: tuple[str, Path]) -> None:
    _, written = session
    for number, line in enumerate(lines(written), 1):
        if line["type"] != "message":
            continue  # session entries are kept as JSON until they are typed too
        message = entry_from_pi(line).message
        assert message is not None
        assert pp.role_of(message) != "custom", f"line {number}"
        # The codec's own key order ($order) is no field of pi's.
        untyped = [key for extra in _extras(pp.unwrap(message)) for key in json.loads(extra or "{}")]
        assert [key for key in untyped if not key.startswith("$")] == [], f"line {number}"


def _extras(value: Any) -> list[str]:
    """Every extra_json in a message, its blocks and their parts."""
    found = []
    if isinstance(value, list):
        return [extra for item in value for extra in _extras(item)]
    if not hasattr(value, "__dataclass_fields__"):
        return []
    for name in value.__dataclass_fields__:
        item = getattr(value, name)
        if name == "extra_json":
            found.append(item)
        else:
            found += _extras(item)
    return found
