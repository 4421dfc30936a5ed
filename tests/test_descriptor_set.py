"""The committed descriptor set: the schema compiles from the repository alone, with no download.

`proto/pi-proto.binpb` holds every file of the schema and every file it imports (protovalidate's
and Google's), so protoc and grpcurl need nothing that `make proto-deps` fetches.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from google.protobuf import descriptor_pb2

from .helpers import serve_process

ROOT = Path(__file__).resolve().parents[1]
DESCRIPTOR_SET = ROOT / "proto" / "pi-proto.binpb"
GRPCURL = Path(sys.executable).parent / "grpcurl"  # built into the venv by `make pytest`
OURS = sorted(str(path.relative_to(ROOT / "proto")) for path in (ROOT / "proto" / "pi").rglob("*.proto"))


def protoc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Debian's protoc (protobuf-compiler, what the C++ consumer uses), which must be there."""
    command = shutil.which("protoc")
    assert command is not None, "protoc is missing: `make pytest` installs Debian's protobuf-compiler (make protoc)"
    return subprocess.run([command, *args], capture_output=True, text=True, timeout=60, cwd=cwd)


def grpcurl(*args: str) -> subprocess.CompletedProcess[str]:
    assert GRPCURL.exists(), f"{GRPCURL} is missing: `make pytest` builds it (make grpcurl)"
    return subprocess.run([str(GRPCURL), *args], capture_output=True, text=True, timeout=30)


def test_the_set_holds_every_file_of_ours_and_everything_they_import() -> None:
    files = descriptor_pb2.FileDescriptorSet.FromString(DESCRIPTOR_SET.read_bytes()).file
    names = [file.name for file in files]
    assert set(OURS) <= set(names)
    assert "buf/validate/validate.proto" in names
    for position, file in enumerate(files):  # imports come before the files that import them
        assert set(file.dependency) <= set(names[:position]), file.name


def test_protoc_generates_cpp_from_the_set_with_nothing_else(tmp_path: Path) -> None:
    # In a folder of its own, with no import path: only the committed set is there to read.
    generated = protoc(
        f"--descriptor_set_in={DESCRIPTOR_SET}", "--cpp_out=.", *OURS, "buf/validate/validate.proto", cwd=tmp_path
    )
    assert generated.returncode == 0, generated.stderr
    for name in [*OURS, "buf/validate/validate.proto"]:
        header = tmp_path / name.replace(".proto", ".pb.h")
        assert header.is_file(), name
    assert "class StreamRequest" in (tmp_path / "pi/ai/v1/service.pb.h").read_text()


def test_protoc_writes_a_descriptor_set_of_one_file_and_its_imports(tmp_path: Path) -> None:
    written = protoc(
        f"--descriptor_set_in={DESCRIPTOR_SET}",
        "--descriptor_set_out=service.binpb",
        "--include_imports",
        "pi/ai/v1/service.proto",
        cwd=tmp_path,
    )
    assert written.returncode == 0, written.stderr
    files = descriptor_pb2.FileDescriptorSet.FromString((tmp_path / "service.binpb").read_bytes()).file
    service = next(file for file in files if file.name == "pi/ai/v1/service.proto")
    assert [method.name for method in service.service[0].method] == [
        "Stream",
        "StreamBatched",
        "Resume",
        "Cancel",
        "ListModels",
        "GetModel",
    ]
    assert "buf/validate/validate.proto" in {file.name for file in files}


def test_grpcurl_calls_a_server_without_reflection_from_the_set() -> None:
    request = {"context": {"messages": [{"user": {"content": [{"text": {"text": "hi"}}]}}]}}
    with serve_process("--no-reflection") as (_, target):
        blind = grpcurl("-plaintext", target, "list")
        assert blind.returncode != 0  # no reflection: the set is all grpcurl knows
        listed = grpcurl("-protoset", str(DESCRIPTOR_SET), "list")
        assert listed.returncode == 0, listed.stderr
        assert "pi.ai.v1.ModelService" in listed.stdout.split()
        called = grpcurl(
            "-plaintext",
            "-protoset",
            str(DESCRIPTOR_SET),
            "-d",
            json.dumps(request),
            target,
            "pi.ai.v1.ModelService/Stream",
        )
    assert called.returncode == 0, called.stderr
    events = [json.loads(event) for event in called.stdout.replace("}\n{", "}\x00{").split("\x00")]
    assert next(iter(events[0])) == "start"
    assert events[-1]["done"]["reason"] == "STOP_REASON_TOOL_USE"
