"""Provider-backed streams as conformance client cases (run: python -m tests.providers.corpus).

Every case a provider's test module lists in `CASES` is played once through the real provider
code; the events our server sent become the server side of a client case in
tests/conformance/providers.yaml, and its final message the outcome. So the TypeScript, Go, Rust
and Java clients read the same provider-backed streams the Python tests check event by event.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from pathlib import Path
from types import ModuleType

from google.protobuf import json_format

import pi_proto as pp
from pi_proto._gen.pb2.pi.ai.v1 import event_pb2, message_pb2, service_pb2
from pi_proto._gen.pb2.pi.conformance.v1 import conformance_pb2 as pb
from pi_proto.models.providers import call

from ..conformance import corpus
from .harness import ProviderCase, final_message, play

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "conformance" / "providers.yaml"
HEADER = """Provider cases, written by `python -m tests.providers.corpus`: do not edit. Each is a recorded
stream of a provider's API played through our provider code, as a client case, so every runtime's
client reads the events our server sends for real provider streams."""


def provider_modules() -> list[ModuleType]:
    """The test modules of the providers, each with its CASES and INFO."""
    modules = [importlib.import_module(f"{__package__}.{path.stem}") for path in sorted(HERE.glob("test_*.py"))]
    return [module for module in modules if hasattr(module, "CASES")]


async def client_case(case: ProviderCase, info: pp.Model) -> pb.Case:
    events, _ = await play(case, info)
    result = message_pb2.AssistantMessage.FromString(bytes(final_message(events)))
    request = pp.StreamRequest(context=case.context, options=case.options)
    body = pb.ClientCase(
        request=service_pb2.StreamRequest.FromString(bytes(request)),
        server=[pb.ServerAction(event=_wire(event)) for event in events],
        expect=pb.ClientOutcome(
            reason=result.stop_reason,
            events=len(events),
            result=result,
        ),
    )
    sent = f"{', '.join(case.replies)} replayed to the SDK" if case.replies else "no request sent"
    description = f"{case.api}: {sent}, as our server streams it"
    return pb.Case(name=f"client/provider/{case.name}", description=description, client=body)


def _wire(event: pp.ModelEvent) -> event_pb2.ModelEvent:
    """The event as the server sends it: without the partial a receiver rebuilds."""
    sent = event_pb2.ModelEvent.FromString(bytes(event))
    sent.ClearField("partial")
    return sent


async def corpus_text() -> str:
    cases = [await client_case(case, module.INFO) for module in provider_modules() for case in module.CASES]
    return corpus.suite_text(json_format.MessageToDict(pb.Suite(cases=cases)), HEADER)


def main() -> int:
    call.BACKOFF_SECONDS = 0.0  # the retried cases need not wait
    text = asyncio.run(corpus_text())
    if not CORPUS.exists() or CORPUS.read_text(encoding="utf-8") != text:
        CORPUS.write_text(text, encoding="utf-8")
    print(f"{text.count('client/provider/')} provider cases in {CORPUS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
