"""The transport floor: a raw grpc.aio server that sends pre-serialized events and does nothing else.

Run as a process (python -m bench.floor --events N [--delay S]); it prints `listening on HOST:PORT`
like `pi-proto serve`, and answers every Stream call with the same N event bytes. Paced (S > 0), a
task of its own queues event n for the call to write S x n seconds after the call starts, as
`pi-proto serve --delay` plays its model: the pace does not wait for the writes.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from collections.abc import AsyncIterator

import grpc

from pi_proto.grpc.methods import SERVICE
from pi_proto.grpc.outgoing import wire_event
from pi_proto.ir.events import events_of

from .workloads import text_turn


async def serve(events: int, delta_size: int, delay: float = 0.0) -> None:
    payload = [wire_event(event) for event in events_of(text_turn(events, delta_size), delta_size)]

    async def stream(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> AsyncIterator[bytes]:
        if not delay:
            for data in payload:
                yield data
            return
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        model = asyncio.create_task(play(queue))
        try:
            for _ in payload:
                yield await queue.get()
        finally:
            model.cancel()

    async def play(queue: asyncio.Queue[bytes]) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        for number, data in enumerate(payload, 1):
            if (wait := started + number * delay - loop.time()) > 0:
                await asyncio.sleep(wait)  # on a schedule from the start, as our server paces
            queue.put_nowait(data)

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
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each event")
    args = parser.parse_args()
    asyncio.run(serve(args.events, args.delta_size, args.delay))


if __name__ == "__main__":
    main()
