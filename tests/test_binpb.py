"""Binary transcripts: length-delimited TranscriptEntry records, read strictly."""

from __future__ import annotations

import io

import pytest
from google.protobuf.internal import decoder, encoder

import pi_proto as pp
from pi_proto._gen.pb2.pi.ai.v1 import transcript_pb2
from pi_proto.models.seed import readme_transcript
from pi_proto.transcripts.binpb import TranscriptError, delimited, read_transcript, write_transcript


def test_records_are_protobufs_delimited_format() -> None:
    messages = [pp.TranscriptEntry(message=message) for message in readme_transcript()]
    out = io.BytesIO()
    written = write_transcript(out, messages)
    data = out.getvalue()
    assert written == len(data)

    # The official runtime's own varint reader splits the file into the same messages.
    position, official = 0, []
    while position < len(data):
        size, position = decoder._DecodeVarint(data, position)  # type: ignore[attr-defined]
        official.append(transcript_pb2.TranscriptEntry.FromString(data[position : position + size]))
        position += size
    assert [pp.encode(message) for message in messages] == [item.SerializeToString() for item in official]
    assert delimited(messages[0]) == encoder._VarintBytes(len(pp.encode(messages[0]))) + pp.encode(messages[0])  # type: ignore[attr-defined]

    assert [message for _, message in read_transcript(io.BytesIO(data))] == messages


def test_an_empty_file_is_an_empty_transcript() -> None:
    assert list(read_transcript(io.BytesIO(b""))) == []


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x80", r"record 0 at byte 0: the file ends inside a length prefix"),
        (b"\xff" * 10, r"record 0 at byte 0: the length prefix is not a valid varint"),
        (b"\x05ab", r"record 0 at byte 0: claims 5 bytes but only 2 remain"),
        (b"\xf7\xff\xff\xb7\xf4\xb7\xfa\xb7\xfa\x64", r"record 0 at byte 0: claims \d+ bytes, above protobuf's 2 GiB"),
        (b"\x00\x02\x0a\x05", r"record 1 at byte 1: cannot decode TranscriptEntry from 2 bytes"),
    ],
)
def test_damaged_files_name_the_record_and_byte(data: bytes, message: str) -> None:
    with pytest.raises(TranscriptError, match=message):
        list(read_transcript(io.BytesIO(data)))


def test_every_truncation_of_a_transcript_is_an_error_or_a_prefix() -> None:
    entries = [pp.TranscriptEntry(message=message) for message in readme_transcript()]
    data = b"".join(delimited(entry) for entry in entries)
    boundaries = {0}
    for entry in entries:
        boundaries.add(max(boundaries) + len(delimited(entry)))
    for cut in range(len(data)):
        stream = io.BytesIO(data[:cut])
        if cut in boundaries:
            assert len(list(read_transcript(stream))) == sorted(boundaries).index(cut)
        else:
            with pytest.raises(TranscriptError):
                list(read_transcript(stream))
