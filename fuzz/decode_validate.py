"""Fuzz target for the path untrusted bytes take: decode, validate, and apply as events.

Run: python fuzz/decode_validate.py [libFuzzer flags], e.g. -max_total_time=600 or -runs=10000.
Any exception other than the clear errors of each step is a finding, and atheris reports it.
"""

from __future__ import annotations

import contextlib
import io
import sys

import atheris

with atheris.instrument_imports(include=["pi_proto"]):  # our code only: coverage where it matters
    import pi_proto as pp
    from pi_proto.grpc.requests import parse_request
    from pi_proto.stream.accumulator import StreamProtocolError
    from pi_proto.transcripts.binpb import TranscriptError, read_transcript
    from pi_proto.wire.validate import ValidationError

EXPECTED = (pp.DecodeError, ValidationError, StreamProtocolError, TranscriptError)


def one_input(data: bytes) -> None:
    with contextlib.suppress(*EXPECTED):
        parse_request(data)  # what the server does with a request
    try:
        accumulator = pp.Accumulator()  # what a client does with a stream of events
        for _, record in read_transcript(io.BytesIO(data)):
            if record.message is not None and (assistant := record.message.assistant) is not None:
                accumulator.apply(pp.ModelEvent(done=pp.DoneEvent(reason=assistant.stop_reason, message=assistant)))
        accumulator.apply(pp.decode(pp.ModelEvent, data))
    except EXPECTED:
        pass


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
