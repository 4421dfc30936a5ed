"""The bench's protocols over our endpoints (bench/web.py, bench/protocols.py): each client and
probe reads a whole call from `pi-proto serve`, the raw Connect reader splits what arrives however
it is cut, and the gRPC probe counts the messages and events it reads."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bench.protocols import Client, Protocol, Tally, Workload, ours_grpc
from bench.web import OURS_CONNECT, OURS_PI_MESSAGES, OURS_SSE, ConnectReader


@pytest.mark.parametrize("protocol", [OURS_SSE, OURS_PI_MESSAGES, OURS_CONNECT], ids=lambda protocol: protocol.name)
def test_client_probe_and_bytes_read_a_whole_call(protocol: Protocol) -> None:
    async def read(client: Client[Any], served: str) -> tuple[int, int]:
        arrivals: list[float] = []
        async with client.connect(served) as session:
            count = await client.read(session, arrivals)
        return count, len(arrivals)

    with protocol.serve(Workload(40)) as served:
        assert asyncio.run(read(protocol.client, served.target)) == (40, 40)
        assert asyncio.run(read(protocol.probe, served.target)) == (40, 40)
        assert asyncio.run(protocol.wire_bytes(served.target)) > 40 * 8


async def test_the_connect_reader_counts_events_however_the_bytes_are_cut() -> None:
    batch = b"".join(b"\x0a" + bytes([len(event)]) + event for event in (b"\x1a\x01a", b"\x1a\x01b", b"\x1a\x01c"))
    envelopes = [b"\x00" + len(batch).to_bytes(4, "big") + batch, b"\x02\x00\x00\x00\x02{}"]
    body = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in envelopes) + b"0\r\n\r\n"
    response = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body
    for size in (1, 2, 3, 7, len(response)):
        reader = ConnectReader(None)
        for start in range(0, len(response), size):
            reader.data_received(response[start : start + size])
        assert await reader.done == 3
        assert reader.body_bytes == len(b"".join(envelopes))


@pytest.mark.parametrize("batched", [True, False], ids=["StreamBatched", "Stream"])
def test_our_grpc_probe_tallies_the_messages_and_events_it_reads(batched: bool) -> None:
    tally = Tally()
    protocol = ours_grpc(batched=batched, tally=tally)

    async def read() -> int:
        async with protocol.probe.connect(served.target) as session:
            return await protocol.probe.read(session, None)

    with protocol.serve(Workload(40)) as served:
        assert asyncio.run(read()) == 40
    assert tally.events == 40
    assert tally.messages == 40 if not batched else 1 <= tally.messages < 40
