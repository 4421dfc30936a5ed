"""The transport floor: a raw grpc.aio server that sends pre-serialized events and does nothing else.

Run as a process (python -m bench.floor --events N); it prints `listening on HOST:PORT` like
`pi-proto serve`, and answers every Stream call with the same N event bytes.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from collections.abc import AsyncIterator

import grpc

from pi_proto.events import events_of
from pi_proto.server import SERVICE, wire_event

from .workloads import text_turn


async def serve(events: int, delta_size: int) -> None:
    payload = [wire_event(event) for event in events_of(text_turn(events, delta_size), delta_size)]

    async def stream(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> AsyncIterator[bytes]:
        for data in payload:
            yield data

    server = grpc.aio.server()
    handler: grpc.RpcMethodHandler[bytes, bytes] = grpc.unary_stream_rpc_method_handler(stream)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {"Stream": handler}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, required=True)
    parser.add_argument("--delta-size", type=int, default=8)
    args = parser.parse_args()
    asyncio.run(serve(args.events, args.delta_size))


if __name__ == "__main__":
    main()
