"""A small load run (make load runs 64 x 2,000): nothing lost, nothing reordered, finals equal."""

from __future__ import annotations

import pytest

from bench.load import run_load


@pytest.mark.timeout(120)
async def test_eight_streams_of_five_hundred_events_lose_nothing() -> None:
    report = await run_load(streams=8, events_per_stream=500)
    assert (report.lost, report.reordered, report.wrong_final) == (0, 0, 0), report.table()
    assert report.server_peak_rss_kib > 0
