"""Every Python example in the README and in docs/ runs as written and prints exactly what it shows,
and the README's shell commands run as written in a new terminal after `make demo`."""

from __future__ import annotations

import contextlib
import fcntl
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from pi_proto.models.seed import README_PREAMBLE

from .helpers import with_default_signals

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# A python block, and the text block the page says it prints right after it.
EXAMPLE = r"```python\n(.*?)```\n\nIt prints:\n\n```text\n(.*?)```"
EXAMPLES = [
    (page, code, output) for page in PAGES for code, output in re.findall(EXAMPLE, page.read_text("utf-8"), re.S)
]


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_every_python_example_shows_its_output(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert len(re.findall(EXAMPLE, text, re.S)) == len(re.findall(r"```python\n", text))


def test_the_readme_and_the_python_page_have_examples() -> None:
    assert {page.name for page, _, _ in EXAMPLES} >= {"README.md", "python.md"}


@pytest.mark.parametrize(
    ("page", "code", "output"), EXAMPLES, ids=[f"{page.name}-{i}" for i, (page, _, _) in enumerate(EXAMPLES)]
)
def test_the_example_prints_what_the_page_shows(
    page: Path, code: str, output: str, capsys: pytest.CaptureFixture[str]
) -> None:
    exec(compile(code, f"{page}:example", "exec"), {"__name__": "readme_example"})
    assert capsys.readouterr().out == output


# --- The README's shell commands, pasted into bash after `make demo` -----------------------------

VENV_BIN = ROOT / ".venv" / "bin"
BASH = shutil.which("bash") or "/bin/bash"
# The line of the Try-it block that starts the second terminal; the first runs the server.
SECOND_TERMINAL = "second terminal"
# A hang guard only: how long one step may take on a loaded machine before the test gives up.
HANG_GUARD = 180.0
# Sets the loopback of a new network namespace up (SIOCGIFFLAGS, then SIOCSIFFLAGS with IFF_UP), then
# says so and holds the namespace until its stdin closes.
LOOPBACK_UP = """
import fcntl, socket, struct, sys
request = struct.pack("16sH", b"lo", 0)
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
    flags = struct.unpack("16sH", fcntl.ioctl(sock, 0x8913, request)[:18])[1]
    fcntl.ioctl(sock, 0x8914, struct.pack("16sH", b"lo", flags | 1))
print("up", flush=True)
sys.stdin.read()
"""


def _bash_blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, re.S)


def _try_it() -> tuple[str, str]:
    """The Try-it block's two terminals: the first starts the server, the second calls it."""
    found = re.search(r"^## Try it\n\n```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.S | re.M)
    assert found is not None, "the README has no Try it block"
    lines = found.group(1).splitlines(keepends=True)
    second = [i for i, line in enumerate(lines) if SECOND_TERMINAL in line]
    assert len(second) == 1, f"the Try it block marks no {SECOND_TERMINAL!r}"
    return "".join(lines[: second[0]]), "".join(lines[second[0] :])


def _newcomer_env() -> dict[str, str]:
    """The environment of a new terminal: no venv active, nothing named pi-proto on the PATH."""
    env = {name: value for name, value in os.environ.items() if name not in ("VIRTUAL_ENV", "PYTHONPATH")}
    shadowed = {VENV_BIN.resolve(), Path(sys.executable).parent.resolve()}
    env["PATH"] = os.pathsep.join(
        folder
        for folder in env.get("PATH", "").split(os.pathsep)
        if folder and Path(folder).resolve() not in shadowed and not (Path(folder) / "pi-proto").exists()
    )
    assert shutil.which("pi-proto", path=env["PATH"]) is None
    return env


@contextlib.contextmanager
def _network_of_its_own() -> Iterator[list[str]]:
    """A command prefix running in a network namespace of this test's own, where the ports the README
    shows are free whatever else runs on the machine; [] where no namespace can be made (no
    unprivileged user namespaces): the machine's own network then."""
    if shutil.which("unshare") is None or shutil.which("nsenter") is None:
        yield []
        return
    holder = subprocess.Popen(
        ["unshare", "--user", "--map-root-user", "--net", sys.executable, "-c", LOOPBACK_UP],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert holder.stdout is not None
        up = holder.stdout.readline() == "up\n"
        yield ["nsenter", f"--target={holder.pid}", "--user", "--net", "--preserve-credentials"] if up else []
    finally:
        holder.kill()
        holder.communicate()


@contextlib.contextmanager
def _ports_of(prefix: list[str], ports: list[int]) -> Iterator[None]:
    """In the machine's own network, one run at a time, and only while the ports are free."""
    if prefix:
        yield
        return
    with open(Path(tempfile.gettempdir()) / "pi-proto-readme-try-it.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for port in ports:
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", port))
                except OSError:
                    pytest.fail(f"port {port}, which the README's Try it uses, is taken (a server of yours?)")
        yield


def _lines(stream: IO[str]) -> queue.Queue[str]:
    """The lines of a stream, read as they come by a thread of their own ("" at its end)."""
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line)
        lines.put("")

    threading.Thread(target=read, daemon=True).start()
    return lines


def test_the_try_it_commands_fail_without_the_venv_on_the_path() -> None:
    """What makes the Try-it test below meaningful: this environment lacks the command."""
    first, _ = _try_it()
    bare = "".join(line for line in first.splitlines(keepends=True) if not line.startswith("source "))
    ran = subprocess.run(
        ["bash", "-c", bare], cwd=ROOT, env=_newcomer_env(), capture_output=True, text=True, timeout=HANG_GUARD
    )
    assert ran.returncode == 127
    assert "pi-proto: command not found" in ran.stderr


@pytest.mark.timeout(900)
def test_the_try_it_block_runs_as_written_after_make_demo_and_so_do_the_protocol_examples() -> None:
    assert (VENV_BIN / "activate").exists(), "no .venv: run make setup"
    first, second = _try_it()
    serve_line = next(line for line in first.splitlines() if line.startswith("pi-proto serve"))
    ports = [int(port) for port in re.findall(r"--(?:http-)?port (\d+)", serve_line)]
    env = _newcomer_env()
    # The README's other blocks that call the server, each in a terminal set up as the second.
    setup = "".join(line for line in second.splitlines(keepends=True) if not line.startswith("pi-proto "))
    examples = [block for block in _bash_blocks(README.read_text(encoding="utf-8")) if "127.0.0.1:" in block]
    assert examples

    with _network_of_its_own() as prefix, _ports_of(prefix, ports), tempfile.TemporaryFile("w+") as errors:
        # SIGINT at its default, as in a terminal, even where this test inherited it ignored.
        terminal = with_default_signals([BASH, "-c", first])
        server = subprocess.Popen(
            [*prefix, *terminal],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            start_new_session=True,
        )
        try:
            assert server.stdout is not None
            printed = _lines(server.stdout)
            # A scripted model: prints "listening on ...", then "http on ...": the ports of the command.
            for expected in (f"listening on 127.0.0.1:{ports[0]}\n", f"http on 127.0.0.1:{ports[1]}\n"):
                try:
                    line = printed.get(timeout=HANG_GUARD)
                except queue.Empty:
                    line = "(nothing)"
                errors.seek(0)
                assert line == expected, f"{line!r}; stderr: {errors.read()}"

            # Text live, each tool call, then the final message.
            ran = subprocess.run(
                [*prefix, "bash", "-c", second], cwd=ROOT, env=env, capture_output=True, text=True, timeout=HANG_GUARD
            )
            assert ran.returncode == 0, ran.stderr
            text, call, final, *_ = ran.stdout.splitlines()
            assert text == README_PREAMBLE
            assert call == '→ read({"path": "README.md"})'
            assert final.startswith("[toolUse] scripted-v1 ")

            for example in examples:
                ran = subprocess.run(
                    [*prefix, "bash", "-c", setup + example],
                    cwd=ROOT,
                    env=env,
                    capture_output=True,
                    encoding="utf-8",
                    errors="replace",  # Connect's frames have binary headers
                    timeout=HANG_GUARD,
                )
                assert ran.returncode == 0, f"{example}\n{ran.stderr}"
                # Each streams the README trip to its terminal event, in its protocol's JSON.
                assert README_PREAMBLE[:-1] in ran.stdout, example
                assert '"done"' in ran.stdout, example

            os.killpg(server.pid, signal.SIGINT)  # Ctrl-C in the first terminal
            assert server.wait(timeout=HANG_GUARD) == 0
        finally:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGKILL)
            server.wait()
