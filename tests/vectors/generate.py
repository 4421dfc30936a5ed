"""Write the golden vectors of cases.py into this folder (run: python -m tests.vectors.generate)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from google.protobuf import json_format

import pi_proto as pp
from pi_proto import wire
from pi_proto.pi_json import context_to_pi, entry_to_pi

from .cases import CASES, Case

HERE = Path(__file__).resolve().parent
HAND_WRITTEN = {"known_failures.json"}
PI_JSON = {"AgentMessage": entry_to_pi, "AgentContext": context_to_pi}


def files_of(case: Case) -> dict[str, bytes]:
    """The files of one case, by name."""
    official = wire.to_upb(case.message)
    files = {
        f"{case.name}.binpb": pp.encode(case.message) + case.unknown,
        f"{case.name}.json": _json(json_format.MessageToDict(official)),
    }
    to_pi = PI_JSON.get(type(case.message).__name__)
    if to_pi is not None:
        files[f"{case.name}.pi.json"] = _json(to_pi(case.message))  # type: ignore[operator]
    return files


def manifest() -> bytes:
    entries = []
    for case in CASES:
        entry: dict[str, object] = {
            "name": case.name,
            "type": f"pi.ai.v1.{type(case.message).__name__}",
            "files": sorted(files_of(case)),
        }
        if case.unknown:
            entry["unknownFields"] = True
        entries.append(entry)
    return _json({"vectors": entries})


def everything() -> dict[str, bytes]:
    """Every file the folder should hold, besides the Python sources."""
    out = {"manifest.json": manifest()}
    for case in CASES:
        out.update(files_of(case))
    return out


def generated_files() -> list[Path]:
    """The files in this folder that the generator owns."""
    return [path for path in HERE.iterdir() if path.suffix in (".binpb", ".json") and path.name not in HAND_WRITTEN]


def _json(value: object) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode()


def main() -> int:
    names = [case.name for case in CASES]
    if len(set(names)) != len(names):
        print("duplicate case names", file=sys.stderr)
        return 1
    wanted = everything()
    for stale in generated_files():
        if stale.name not in wanted:
            stale.unlink()
    for name, data in wanted.items():
        path = HERE / name
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
    print(f"{len(CASES)} vectors in {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
