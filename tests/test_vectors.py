"""The golden wire vectors, checked in betterproto2, the official runtime (upb) and our wire path.

Each vector decodes to its case's value, re-encodes to identical bytes, prints the same ProtoJSON
and, for transcript entries and contexts, the same pi-JSON. Regenerating them is a no-op.
"""

from __future__ import annotations

import json
from pathlib import Path

import betterproto2
import pytest
from google.protobuf import json_format

import pi_proto as pp
from pi_proto import wire
from pi_proto._gen.types.pi.ai import v1 as types
from pi_proto.pi_json import context_from_pi, entry_from_pi

from .jsonstrict import same_json
from .vectors import generate
from .vectors.cases import CASES, Case

VECTORS = Path(generate.__file__).parent
PI_JSON_READERS = {"AgentMessage": entry_from_pi, "AgentContext": context_from_pi}


def read(case: Case, suffix: str) -> bytes:
    return (VECTORS / f"{case.name}{suffix}").read_bytes()


def test_the_vectors_are_fresh() -> None:
    wanted = generate.everything()
    present = {path.name for path in VECTORS.iterdir() if path.suffix in (".binpb", ".json")}
    assert present == set(wanted), "run: python -m tests.vectors.generate"
    for name, data in wanted.items():
        assert (VECTORS / name).read_bytes() == data, f"{name} is stale: run python -m tests.vectors.generate"


def test_the_cases_cover_every_message_and_event_kind() -> None:
    every = {
        name
        for name in types.__all__
        if isinstance(getattr(types, name), type) and issubclass(getattr(types, name), betterproto2.Message)
    }
    assert every - {type(case.message).__name__ for case in CASES} == set()
    kinds = {pp.event_kind(case.message)[0] for case in CASES if isinstance(case.message, pp.ModelEvent)}
    assert kinds == {
        "start", "text_start", "text_delta", "text_end", "thinking_start", "thinking_delta", "thinking_end",
        "toolcall_start", "toolcall_delta", "toolcall_end", "done", "error",
    }  # fmt: skip
    assert any(len(pp.encode(case.message)) > 1024 * 1024 for case in CASES)


def test_the_manifest_names_every_vector_and_its_type() -> None:
    manifest = json.loads((VECTORS / "manifest.json").read_text(encoding="utf-8"))
    assert [entry["name"] for entry in manifest["vectors"]] == [case.name for case in CASES]
    for entry, case in zip(manifest["vectors"], CASES, strict=True):
        assert entry["type"] == f"pi.ai.v1.{type(case.message).__name__}"
        assert all((VECTORS / name).exists() for name in entry["files"])


@pytest.mark.parametrize("case", [case for case in CASES if not case.unknown], ids=lambda case: case.name)
def test_betterproto2_and_upb_agree_on_every_vector(case: Case) -> None:
    cls = type(case.message)
    official_cls = wire._upb_class(cls)
    data = read(case, ".binpb")
    proto_json = json.loads(read(case, ".json"))

    # Binary: each runtime decodes the vector to the case's value and re-encodes the same bytes.
    assert bytes(case.message) == data
    assert pp.encode(case.message) == data
    assert cls.parse(data) == case.message
    assert bytes(cls.parse(data)) == data
    assert pp.decode(cls, data) == case.message
    official = official_cls.FromString(data)
    assert official.SerializeToString() == data

    # ProtoJSON: both print the vector's JSON, and both parse it back to the same bytes.
    assert json_format.MessageToDict(official) == proto_json
    assert case.message.to_dict() == proto_json
    assert json.loads(pp.to_json(case.message)) == proto_json
    assert json_format.ParseDict(proto_json, official_cls()).SerializeToString() == data
    assert cls.from_dict(proto_json) == case.message
    assert pp.decode_json(cls, json.dumps(proto_json)) == case.message


@pytest.mark.parametrize(
    "case", [case for case in CASES if type(case.message).__name__ in PI_JSON_READERS], ids=lambda case: case.name
)
def test_pi_json_vectors_convert_both_ways(case: Case) -> None:
    pi_json = json.loads(read(case, ".pi.json"))
    kind = type(case.message).__name__
    converted = PI_JSON_READERS[kind](pi_json)
    assert pp.encode(converted) == pp.encode(case.message)
    assert same_json(generate.PI_JSON[kind](converted), pi_json)  # type: ignore[operator]


@pytest.mark.parametrize("case", [case for case in CASES if case.unknown], ids=lambda case: case.name)
def test_unknown_fields_survive_a_decode_and_encode_in_every_runtime(case: Case) -> None:
    data = read(case, ".binpb")
    cls = type(case.message)
    assert data.endswith(case.unknown)
    assert wire._upb_class(cls).FromString(data).SerializeToString() == data
    assert bytes(cls.parse(data)) == data
    assert pp.encode(pp.decode(cls, data)) == data
    # ProtoJSON has no place for unknown fields: the JSON is that of the known ones.
    assert json.loads(read(case, ".json")) == case.message.to_dict()
