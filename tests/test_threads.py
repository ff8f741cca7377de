"""bnilp.threads: daemon workers whose tasks an interrupted coordinator can never leave locked."""

from __future__ import annotations

import threading
import time
from concurrent.futures import CancelledError

import pytest

from bnilp.threads import DaemonThreads


def test_map_gives_the_values_in_item_order_whatever_order_they_finish_in() -> None:
    def late_for_small(x: int) -> int:
        time.sleep(0.02 * (5 - x))
        return x * x

    with DaemonThreads(3, "test") as pool:
        assert pool.map(late_for_small, range(6)) == [x * x for x in range(6)]


def test_map_raises_the_first_error_in_item_order_even_when_a_later_one_came_first() -> None:
    def fail_late_at_two_early_at_four(x: int) -> int:
        if x == 2:
            time.sleep(0.2)
            raise ValueError("item 2")
        if x == 4:
            raise ValueError("item 4")
        return x

    with pytest.raises(ValueError, match="item 2"), DaemonThreads(3, "test") as pool:
        pool.map(fail_late_at_two_early_at_four, range(6))


def test_a_job_cancelled_before_it_started_never_runs_and_says_so() -> None:
    release = threading.Event()
    ran: list[str] = []
    pool = DaemonThreads(1, "test")
    busy = pool.submit(release.wait)
    waiting = pool.submit(ran.append, "ran")
    assert waiting.cancel() and waiting.done() and not waiting.running()
    release.set()
    pool.shutdown(wait=True)
    assert busy.done() and busy.result() is True
    with pytest.raises(CancelledError):
        waiting.result()
    assert ran == []


def test_a_job_that_started_cannot_be_cancelled_and_its_value_comes_back() -> None:
    started, release = threading.Event(), threading.Event()

    def work() -> str:
        started.set()
        release.wait()
        return "value"

    with DaemonThreads(1, "test") as pool:
        job = pool.submit(work)
        assert started.wait(5)
        assert job.running() and not job.cancel() and not job.done()
        release.set()
        assert job.result() == "value" and job.done() and not job.running()


def test_an_error_leaving_the_pool_does_not_wait_for_a_running_job() -> None:
    release = threading.Event()
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt), DaemonThreads(1, "test") as pool:
        pool.submit(release.wait)
        raise KeyboardInterrupt
    assert time.perf_counter() - t0 < 2
    release.set()
