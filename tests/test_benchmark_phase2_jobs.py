"""``benchmarks/phase2_jobs.py``: the simulated split on m workers is greedy list scheduling in hand-out order."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "phase2_jobs", Path(__file__).resolve().parents[1] / "benchmarks" / "phase2_jobs.py")
phase2_jobs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(phase2_jobs)


def test_list_schedule_hands_each_cube_to_the_first_free_worker():
    """[3, 3, 2, 2, 2] on 2 workers: 3 | 3, then 2 at t = 3 on each (5 | 5), the last at 5: ends at 7; in
    the other order [2, 2, 2, 3, 3]: 2 | 2, 2 at 2 (4 | 2), 3 at 2 (4 | 5), 3 at 4: ends at 7 too; a single
    worker sums, enough workers take the longest; and it never beats max(Σ/m, longest)."""
    assert phase2_jobs.list_schedule([3, 3, 2, 2, 2], 2) == 7
    assert phase2_jobs.list_schedule([2, 2, 2, 3, 3], 2) == 7
    assert phase2_jobs.list_schedule([3, 1, 4, 1, 5], 1) == 14
    assert phase2_jobs.list_schedule([3, 1, 4, 1, 5], 5) == 5
    for seconds in itertools.permutations([5.0, 1.0, 2.5, 4.0, 0.5]):
        for m in (2, 3):
            assert phase2_jobs.list_schedule(list(seconds), m) >= max(sum(seconds) / m, max(seconds))
