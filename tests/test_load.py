"""A small load run (make load runs 64 x 2,000): nothing lost, nothing reordered, finals equal."""

from __future__ import annotations

import re

import pytest

import pi_proto as pp
from bench.load import StreamResult, compare, run_load
from bench.workloads import DELTA_SIZE, text_turn


async def test_eight_streams_of_five_hundred_events_lose_nothing() -> None:
    report = await run_load(streams=8, events_per_stream=500)
    assert (report.lost, report.reordered, report.wrong_final) == (0, 0, 0), report.table()
    assert report.received == 8 * 500
    # What the table prints is what was measured.
    table = report.table()
    assert "events received                  4,000" in table
    rate = re.search(r"wall time\s+([\d.]+) s \(([\d,]+) events/s\)", table)
    assert rate is not None
    assert float(rate.group(1)) == pytest.approx(report.seconds, abs=0.01)
    assert int(rate.group(2).replace(",", "")) == round(4000 / report.seconds)
    assert 0 < report.gap_p50_ms <= report.gap_p99_ms
    assert 10 * 1024 < report.server_peak_rss_kib < 1024 * 1024  # a real server process: MiBs, not GiBs


def test_the_comparison_sees_a_lost_a_reordered_and_a_wrong_final() -> None:
    turn = text_turn(10)
    text = pp.text_of(turn)
    expected = [text[start : start + DELTA_SIZE] for start in range(0, len(text), DELTA_SIZE)]
    intact = StreamResult(list(expected), turn, [], len(expected) + 4)
    short = StreamResult(expected[:-1], turn, [], 0)
    swapped = StreamResult([expected[1], expected[0], *expected[2:]], turn, [], 0)
    other = StreamResult(list(expected), pp.assistant_message("other", timestamp=turn.timestamp), [], 0)
    assert compare([intact], expected, turn) == (0, 0, 0)
    assert compare([intact, short, swapped, other], expected, turn) == (1, 1, 1)
