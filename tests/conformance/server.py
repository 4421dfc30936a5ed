"""The reference server: plays the corpus's client cases over gRPC and over HTTP (Connect, gRPC-web).

    python -m tests.conformance.server [DIR]

Prints `listening on HOST:PORT` (gRPC), then `http on HOST:PORT`, and serves until SIGINT or
SIGTERM. The harness starts it; run it yourself to try a client of your own against the cases.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from .corpus import load_cases
from .reference import ConformanceServer
from .reference_http import HttpConformanceServer

HERE = Path(__file__).resolve().parent


async def serve(corpus: Path) -> None:
    cases = load_cases(corpus)
    grpc_server, http = ConformanceServer(cases), HttpConformanceServer(cases)
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    await grpc_server.start()
    await http.start()
    print(f"listening on {grpc_server.target}\nhttp on {http.target}", flush=True)
    await stop.wait()
    await http.stop()
    await grpc_server.stop(0)


if __name__ == "__main__":
    asyncio.run(serve(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE))
