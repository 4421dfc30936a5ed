"""Write pi 1.6 session files with pi's own CLI: `python -m tests.pi.sessions [--out DIR]`.

Each scenario runs pi-coding-agent 1.6.0 (its `pi` command, in print, JSON or RPC mode) in a fresh
temporary folder, against `pi-proto serve` playing a script of assistant turns over pi's
`pi-messages` API, and copies the session file pi wrote, unchanged, to DIR/<scenario>.jsonl.
`make pi-setup` installs pi and Node 22 first. DIR/README.md lists the scenarios.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import itertools
import json
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pi_proto.models.seed import README_REQUEST, README_TEXT

PI = Path(__file__).parent
NODE = PI / "node_modules" / ".bin" / "node"
CLI = PI / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "bundle" / "cli.js"
OUT = PI.parent / "fixtures" / "pi-1.6-sessions"
TOKEN = "pi-sessions-token"
TIMEOUT = 60
SESSION_NUMBERS = itertools.count(1)
# A 1x1 PNG: pi's read tool answers it with an image block.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
USAGE = {"input": 40, "output": 12, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 52}
# Labels, in-place branching and extension entries are no RPC commands: pi's extension API offers
# them as commands.
COMMANDS = """\
export default function (pi) {
  pi.registerCommand("label", {
    handler: async (args, ctx) => pi.setLabel(ctx.sessionManager.getLeafId(), args),
  });
  pi.registerCommand("unlabel", {
    handler: async (args, ctx) => pi.setLabel(ctx.sessionManager.getLeafId(), undefined),
  });
  // An extension's own state and a message of its own in the context.
  pi.registerCommand("remember", {
    handler: async (args) => pi.appendEntry("todo-list", { items: args.split(" "), done: 0 }),
  });
  pi.registerCommand("remind", {
    handler: async (args) =>
      pi.sendMessage({ customType: "reminder", content: args, display: true, details: { source: "command" } }),
  });
  pi.registerCommand("branch", {
    handler: async (args, ctx) => {
      const first = ctx.sessionManager.getEntries().find((entry) => entry.message?.role === "assistant");
      await ctx.navigateTree(first.id, { summarize: true });
    },
  });
}
"""


def model(name: str, *, reasoning: bool) -> dict[str, Any]:
    return {
        "id": "scripted-v1",
        "name": name,
        "reasoning": reasoning,
        "input": ["text", "image"],
        "contextWindow": 100_000,
        "maxTokens": 4096,
        "cost": {"input": 1, "output": 2, "cacheRead": 0.5, "cacheWrite": 1.25},
    }


# Two providers of the one served model: switching between them is a model change pi records.
MODELS = {"pi-proto": model("Scripted", reasoning=False), "pi-proto-thinking": model("Thinking", reasoning=True)}
THINKING = "pi-proto-thinking/scripted-v1"


def turn(*content: dict[str, Any], stop: str = "stop", **extra: Any) -> dict[str, Any]:
    """A scripted assistant turn in pi-JSON; pi names the api, provider and model it wrote itself."""
    message = {"role": "assistant", "content": list(content), "api": "scripted", "provider": "scripted"}
    return message | {"model": "scripted-v1", "usage": USAGE, "stopReason": stop, "timestamp": 1} | extra


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def thinking(value: str, signature: str, **extra: Any) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "thinkingSignature": signature, **extra}


def read(id: str, path: str) -> dict[str, Any]:
    return {"type": "toolCall", "id": id, "name": "read", "arguments": {"path": path}}


class Folder:
    """One scenario's temporary folder: pi's HOME (with its agent folder), the session folder and
    the working folder `project`, with the server's address in pi's models.json."""

    def __init__(self, root: Path, url: str, settings: dict[str, Any]) -> None:
        self.root, self.home, self.sessions, self.work = root, root / "home", root / "sessions", root / "project"
        agent = self.home / ".pi" / "agent"
        for made in (agent, self.sessions, self.work):
            made.mkdir(parents=True)
        providers = {name: {"api": "pi-messages", "baseUrl": url, "apiKey": TOKEN, "models": [found]}
                     for name, found in MODELS.items()}  # fmt: skip
        (agent / "models.json").write_text(json.dumps({"providers": providers}), encoding="utf-8")
        # No automatic retry: an error turn is written once, not played again.
        (agent / "settings.json").write_text(json.dumps({"retry": {"enabled": False}, **settings}), encoding="utf-8")
        self.commands = root / "commands.mjs"
        self.commands.write_text(COMMANDS, encoding="utf-8")
        self.env = {"PATH": "/usr/bin:/bin", "HOME": str(self.home), "PI_CODING_AGENT_DIR": str(agent)}
        self.env |= {"PI_OFFLINE": "1", "PI_TELEMETRY": "0", "TZ": "UTC", "LANG": "C.UTF-8"}
        # A session id of UUID form, the same in every run: the scenarios are numbered in order.
        self.session = f"01900000-0000-7000-8000-{next(SESSION_NUMBERS):012d}"

    def command(self, *flags: str, model: str = "pi-proto/scripted-v1") -> list[str]:
        fixed = ["--session-dir", str(self.sessions), "--session-id", self.session, "--model", model]
        return [str(NODE), str(CLI), *fixed, "--no-extensions", "--no-skills", "--no-context-files", *flags]

    def run(self, *flags: str, model: str = "pi-proto/scripted-v1", status: int = 0) -> bytes:
        """Run pi once (print or JSON mode) and return what it wrote to stdout."""
        command = self.command(*flags, model=model)
        done = subprocess.run(command, capture_output=True, timeout=TIMEOUT, cwd=self.work, env=self.env)
        if done.returncode != status:
            raise RuntimeError(f"pi exited with {done.returncode}: {done.stderr.decode(errors='replace')}")
        return done.stdout


@contextlib.contextmanager
def folder(
    script: list[dict[str, Any]] | None, *flags: str, settings: dict[str, Any] | None = None
) -> Iterator[Folder]:
    """A Folder, and `pi-proto serve` playing `script` (None: serve's own README round trip)."""
    with tempfile.TemporaryDirectory(prefix="pi-sessions-") as name:
        root = Path(name)
        (root / "token").write_text(TOKEN + "\n")
        serve = [sys.executable, "-m", "pi_proto.cli", "serve", "--port", "0", "--http-port", "0"]
        serve += ["--token-file", str(root / "token"), *flags]
        if script is not None:
            (root / "script.json").write_text(json.dumps(script, ensure_ascii=False), encoding="utf-8")
            serve += ["--script", str(root / "script.json")]
        with subprocess.Popen(serve, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as server:
            try:
                assert server.stdout is not None
                server.stdout.readline()  # the gRPC address, which pi does not use
                url = "http://" + server.stdout.readline().removeprefix("http on ").strip()
                yield Folder(root, url, settings or {})
            finally:
                server.kill()


class Rpc:
    """pi in RPC mode: commands written to its stdin, responses and events read by a thread."""

    def __init__(self, where: Folder, *flags: str) -> None:
        command = where.command("--mode", "rpc", *flags)
        self.log = where.root / "pi.log"  # pi's diagnostics, shown when a wait times out
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, cwd=where.work, env=where.env
            )
        self.records: queue.Queue[dict[str, Any]] = queue.Queue()
        self.sent = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:  # bytes split on LF only, as pi's framing asks
            self.records.put(json.loads(line))

    def send(self, kind: str, **fields: Any) -> Any:
        """Send a command, wait for its response and return its data; raise if it failed."""
        self.sent += 1
        command = {"id": f"c{self.sent}", "type": kind, **fields}
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command).encode() + b"\n")
        self.process.stdin.flush()
        response = self.until(lambda record: record["type"] == "response" and record.get("id") == command["id"])
        if not response["success"]:
            raise RuntimeError(f"{kind}: {response.get('error')}")
        return response.get("data")

    def until(self, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The next record `wanted` accepts; the records before it are dropped."""
        try:
            while not wanted(record := self.records.get(timeout=TIMEOUT)):
                pass
        except queue.Empty:
            raise RuntimeError(f"pi sent nothing awaited in {TIMEOUT} s: {self.log.read_text()}") from None
        return record

    def prompt(self, message: str) -> None:
        """Prompt and wait until pi settles; an extension's command starts no run."""
        if self.send("prompt", message=message)["disposition"] != "handled":
            self.until(lambda record: record["type"] == "agent_settled")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()  # pi's orderly shutdown
        try:
            self.process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise


@contextlib.contextmanager
def rpc(where: Folder, *flags: str) -> Iterator[Rpc]:
    pi = Rpc(where, *flags)
    try:
        yield pi
    finally:
        pi.close()


# --- the scenarios: each writes its files into `out` ----------------------------------------------

SCENARIOS: list[Callable[[Path], None]] = []


def scenario(function: Callable[[Path], None]) -> Callable[[Path], None]:
    SCENARIOS.append(function)
    return function


def keep(where: Folder, out: Path, name: str, files: int = 1) -> None:
    """Copy the newest session file pi wrote (of `files`: a fork writes a second one) to out/name."""
    written = sorted(where.sessions.glob("*.jsonl"))
    if len(written) != files:
        raise RuntimeError(f"pi wrote {len(written)} session files, expected {files}")
    shutil.copyfile(written[-1], out / name)
    print(f"{name}: {len(written[-1].read_bytes().splitlines())} lines")


@scenario
def tool_round_trip(out: Path) -> None:
    with folder(None) as where:
        (where.work / "README.md").write_text(README_TEXT + "\n", encoding="utf-8")
        where.run("-p", README_REQUEST)
        keep(where, out, "tool-round-trip.jsonl")


@scenario
def thinking_blocks(out: Path) -> None:
    # Cache reads and writes, and a provider's cost in fractions of a dollar.
    cost = {"input": 0.0012, "output": 0.00016, "cacheRead": 0.0005, "cacheWrite": 0.0001875, "total": 0.0020475}
    usage = {"input": 1200, "output": 80, "cacheRead": 1000, "cacheWrite": 150, "totalTokens": 2430, "cost": cost}
    script = [
        turn(
            thinking("用户想知道项目名，答案在 README 里。", "c2lnbmF0dXJlLTE="),
            thinking("", "ZW5jcnlwdGVkLXJlYXNvbmluZw==", redacted=True),
            text("项目名是 tiny-pi。"),
            usage=usage,
        )
    ]
    with folder(script) as where:
        where.run("-p", "项目叫什么？", "--thinking", "high", model=THINKING)
        keep(where, out, "thinking.jsonl")


@scenario
def image_read(out: Path) -> None:
    script = [turn(read("call_png", "pixel.png"), stop="toolUse"), turn(text("这是一个像素的图片。"))]
    with folder(script) as where:
        (where.work / "pixel.png").write_bytes(PIXEL)
        where.run("-p", "看看 pixel.png 是什么。")
        keep(where, out, "image-read.jsonl")


@scenario
def length_stop(out: Path) -> None:
    with folder([turn(text("这个回答写到一半就被截"), stop="length")]) as where:
        where.run("-p", "写一段很长的说明。")
        keep(where, out, "length-stop.jsonl")


@scenario
def error_stop(out: Path) -> None:
    script = [turn(text("我先看看"), stop="error", errorMessage="scripted failure: the backend gave up")]
    with folder(script) as where:
        where.run("-p", "看看这个项目。", status=1)
        keep(where, out, "error-stop.jsonl")


@scenario
def json_mode(out: Path) -> None:
    script = [
        turn(
            thinking("先读 README。", "c2lnbmF0dXJlLTI="),
            text("我先读取项目说明。"),
            read("call_1", "README.md"),
            stop="toolUse",
        ),
        turn(text("README 的标题就是项目名：tiny-pi。")),
    ]
    # Paced events reach pi one at a time, so each event line shows the message as far as it got.
    with folder(script, "--delta-size", "4", "--delay", "0.01") as where:
        (where.work / "README.md").write_text(README_TEXT + "\n", encoding="utf-8")
        events = where.run("--mode", "json", README_REQUEST, model=THINKING)
        (out / "events-json-mode.jsonl").write_bytes(events)
        print(f"events-json-mode.jsonl: {len(events.splitlines())} lines")
        keep(where, out, "json-mode.jsonl")


@scenario
def abort(out: Path) -> None:
    # Slow deltas, so that the abort comes while the answer streams.
    with folder([turn(text("这是一段很长的回答。" * 40))], "--delta-size", "4", "--delay", "0.02") as where:
        with rpc(where) as pi:
            pi.send("prompt", message="写一段很长的回答。")
            pi.until(lambda record: record.get("assistantMessageEvent", {}).get("type") == "text_delta")
            pi.send("abort")
        keep(where, out, "abort.jsonl")


@scenario
def model_and_thinking_change(out: Path) -> None:
    script = [
        turn(text("one")),
        turn(thinking("Thinking at level high.", "c2lnbmF0dXJlLTM="), text("two")),
        turn(text("three")),
    ]
    with folder(script) as where:
        with rpc(where) as pi:
            pi.prompt("first")
            pi.send("set_model", provider="pi-proto-thinking", modelId="scripted-v1")
            pi.send("set_thinking_level", level="high")
            pi.prompt("second")
            pi.send("cycle_model")
            pi.prompt("third")
        keep(where, out, "model-and-thinking-change.jsonl")


@scenario
def compaction(out: Path) -> None:
    # A summary request holds no assistant message, so the server plays it turn 1: turn 1 reads as
    # both. Keeping 40 tokens (pi estimates 4 characters a token) cuts at the second prompt, so the
    # first exchange is summarized whole.
    notes = "Notes taken: the project is tiny-pi, a small agent runtime; its sessions are JSON lines."
    script = [turn(text(notes + " " + notes)), turn(text("Yes: tiny-pi. " + notes)), turn(text("It is tiny-pi."))]
    with folder(script, settings={"compaction": {"keepRecentTokens": 40}}) as where:
        with rpc(where) as pi:
            pi.prompt("Take notes: the project is tiny-pi, a small agent runtime. " + notes)
            pi.prompt("Is the project tiny-pi? Answer with the notes. " + notes)
            pi.send("compact", customInstructions="Keep the project name.")
            pi.prompt("What is the project called?")
        keep(where, out, "compaction.jsonl")


@scenario
def session_name(out: Path) -> None:
    with folder([turn(text("one")), turn(text("two"))]) as where:
        with rpc(where, "--name", "fixture session") as pi:
            pi.prompt("first")
            pi.send("set_session_name", name="renamed fixture session")
            pi.prompt("second")
        keep(where, out, "session-name.jsonl")


@scenario
def label(out: Path) -> None:
    with folder([turn(text("one")), turn(text("two"))]) as where:
        with rpc(where, "-e", str(where.commands)) as pi:
            pi.prompt("first")
            pi.prompt("/label checkpoint-1")
            pi.prompt("second")
        keep(where, out, "label.jsonl")


@scenario
def branch(out: Path) -> None:
    # The branch summary is turn 1 too (see compaction).
    script = [turn(text("The first answer.")), turn(text("The second answer.")), turn(text("The third answer."))]
    with folder(script) as where:
        with rpc(where, "-e", str(where.commands)) as pi:
            pi.prompt("first")
            pi.prompt("second")
            pi.prompt("/branch")  # back to the first answer, summarizing the branch left
            pi.prompt("second, another way")
        keep(where, out, "branch.jsonl")


@scenario
def fork(out: Path) -> None:
    with folder([turn(text("one")), turn(text("two"))]) as where:
        with rpc(where) as pi:
            pi.prompt("first")
            pi.prompt("second")
            pi.send("fork", entryId=pi.send("get_fork_messages")["messages"][1]["entryId"])
            pi.prompt("second, in the fork")
        keep(where, out, "fork.jsonl", files=2)


@scenario
def bash_execution(out: Path) -> None:
    with folder([turn(text("The command printed hello."))]) as where:
        with rpc(where) as pi:
            pi.send("bash", command="printf 'hello\\n'")
            pi.prompt("What did the command print?")
        keep(where, out, "bash-execution.jsonl")


@scenario
def extension_entries(out: Path) -> None:
    with folder([turn(text("one")), turn(text("two"))]) as where:
        with rpc(where, "-e", str(where.commands)) as pi:
            pi.prompt("first")
            pi.prompt("/remember tests docs")
            pi.prompt("/remind Run the tests first.")
            pi.prompt("/label checkpoint-1")
            pi.prompt("/unlabel")
            pi.prompt("second")
        keep(where, out, "extension-entries.jsonl")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"the folder to write (default: {OUT})")
    out: Path = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    for run in SCENARIOS:
        run(out)


if __name__ == "__main__":
    main()
