"""The best time of a few runs of some work, for the figures measured in this process."""

from __future__ import annotations

import time
from collections.abc import Callable


def timed(work: Callable[[], object], runs: int = 5) -> float:
    """The fastest of `runs` runs of `work`, in seconds: the least disturbed by the machine."""
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best
