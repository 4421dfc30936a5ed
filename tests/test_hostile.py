"""Hostile input: random bytes, truncations and random messages never get past a clear error."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import betterproto2
import pytest
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pi_proto as pp
from pi_proto._gen.types.pi.ai import v1 as types
from pi_proto.stream.accumulator import StreamProtocolError
from pi_proto.transcripts.binpb import TranscriptError, read_transcript
from pi_proto.transcripts.pi_json import event_from_pi
from pi_proto.transcripts.pi_session import entry_from_pi
from pi_proto.wire import codec as wire

from .conformance.wire_cases import CASES
from .strategies import events, messages

PROPERTY = settings(
    max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
CLASSES = [
    getattr(types, name)
    for name in types.__all__
    if isinstance(getattr(types, name), type) and issubclass(getattr(types, name), betterproto2.Message)
]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@PROPERTY
@given(cls=st.sampled_from(CLASSES), data=st.binary(max_size=200))
def test_random_bytes_decode_to_a_message_or_one_decode_error(cls: type[betterproto2.Message], data: bytes) -> None:
    try:
        message = pp.decode(cls, data)
    except pp.DecodeError:
        return
    assert isinstance(message, cls)
    # It is a well-typed message: betterproto2 can serialize every field it holds. (Whether its
    # oneofs are filled is for validation, not decoding: an empty oneof is valid on the wire.)
    assert pp.decode(cls, bytes(message)) == message


@PROPERTY
@given(cls=st.sampled_from(CLASSES), text=st.text(max_size=100) | JSON.map(json.dumps))
def test_random_text_decodes_as_protojson_or_fails_clearly(cls: type[betterproto2.Message], text: str) -> None:
    with contextlib.suppress(pp.DecodeError):
        pp.decode_json(cls, text)


@PROPERTY
@given(data=st.binary(max_size=300))
def test_random_bytes_as_a_binary_transcript(data: bytes) -> None:
    try:
        for _, message in read_transcript(io.BytesIO(data)):
            assert isinstance(message, pp.TranscriptEntry)
    except TranscriptError:
        pass


@PROPERTY
@given(
    value=JSON
    | st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "toolResult"])},
        optional={"content": JSON, "timestamp": JSON, "stopReason": JSON},
    )
)
def test_random_json_as_pi_json_converts_or_names_the_problem(value: Any) -> None:
    for read in (entry_from_pi, event_from_pi):
        try:
            read(value)
        except pp.PiJsonError as error:
            assert str(error)


def cuts(size: int) -> range:
    """Every cut of a small vector; about 2,000 evenly spread cuts of a large one."""
    return range(1, size) if size < 4096 else range(1, size, size // 2000)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_every_truncation_of_a_vector_is_a_decode_error_or_a_shorter_message(case: Any) -> None:
    cls = type(case.message)
    data = pp.encode(case.message) + case.unknown
    for cut in cuts(len(data)):
        try:
            shorter = pp.decode(cls, data[:cut])
        except pp.DecodeError as error:
            assert f"from {cut} bytes" in str(error)
            continue
        # Protobuf cannot tell a cut at a field boundary from a message with fewer fields: what
        # decodes must then be exactly that shorter message, byte for byte.
        assert pp.encode(shorter) == data[:cut]


@PROPERTY
@given(data=st.data())
def test_random_messages_round_trip_identically_through_both_runtimes(data: st.DataObject) -> None:
    cls = data.draw(st.sampled_from(CLASSES))
    message = data.draw(messages(cls))
    # Map entries have no order on the wire; both runtimes agree once it is fixed (key order).
    encoded = pp.encode(message)
    official = wire.to_upb(message)
    assert official.SerializeToString(deterministic=True) == encoded
    assert cls.parse(bytes(message)) == message
    assert pp.decode(cls, bytes(message)) == message  # betterproto2's encoder, read by upb
    assert pp.decode(cls, encoded) == message
    assert json.loads(pp.to_json(message)) == _protoc_names(message.to_dict())
    assert (
        json_format.ParseDict(_protoc_names(message.to_dict()), type(official)()).SerializeToString(deterministic=True)
        == encoded
    )


def _protoc_names(value: Any) -> Any:
    """betterproto2's dict as ProtoJSON writes it. betterproto2 capitalizes a letter after a digit,
    so Usage.cache_write_1h comes out as `cacheWrite1H` where protoc, every other runtime and pi
    write `cacheWrite1h` (pp.to_json, on upb, writes protoc's); it is the only such field. And it
    writes a google.protobuf.NullValue (TranscriptEntry.root, the only one) as its enum name, where
    ProtoJSON writes null."""
    if isinstance(value, dict):
        return {
            ("cacheWrite1h" if key == "cacheWrite1H" else key): None
            if key == "root" and item == "NULL_VALUE"
            else _protoc_names(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_protoc_names(item) for item in value]
    return value


@PROPERTY
@given(sequence=st.lists(events(), max_size=12))
def test_random_event_sequences_never_crash_the_validator(sequence: list[pp.ModelEvent]) -> None:
    accumulator = pp.Accumulator()
    for event in sequence:
        try:
            accumulator.apply(event)
        except StreamProtocolError as error:
            assert str(error).startswith(f"event {accumulator.count - 1}")
            return


def test_cache_write_1h_is_the_only_field_whose_json_name_betterproto2_writes_otherwise() -> None:
    from betterproto2.casing import camel_case

    def fields(message: Any) -> Any:
        yield from message.fields
        for nested in message.nested_types:
            yield from fields(nested)

    differ = {
        field.full_name
        for module in wire._PB2_MODULES
        for message in module.DESCRIPTOR.message_types_by_name.values()
        for field in fields(message)
        if camel_case(field.name) != field.json_name
    }
    assert differ == {"pi.ai.v1.Usage.cache_write_1h"}
