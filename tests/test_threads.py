"""bnilp.threads: daemon workers whose tasks an interrupted coordinator can never leave locked."""

from __future__ import annotations

import functools
import queue
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import CancelledError, Future
from typing import Any

import pytest

from bnilp.threads import (
    DaemonThreads,
    children_start_deaf_to_ctrl_c,
    interrupt_where_safe,
    interrupts_where_safe,
    unsafe_to_interrupt,
)
from tests.trace_helpers import at_event

#: a signal put off is sent again by another thread 1 ms later — on a loaded machine much later: the spins that
#: wait for it end when it comes, so a long bound costs nothing where it works
PUT_OFF_ARRIVES_WITHIN = 30.0


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


def _spin(seconds: float) -> None:
    """Busy-wait ``seconds``: an interrupt put off arrives here. A function of its own: on
    Python 3.13 a KeyboardInterrupt raised in a ``while`` condition can skip the ``except`` blocks (and a
    ``pytest.raises``) of its own frame (CPython issue 130279); raised in a callee it reaches the caller's."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass


def _send_interrupt(sent: list[bool]) -> None:
    sent.append(True)
    signal.raise_signal(signal.SIGINT)


def _lock_is_free(lock) -> bool:
    """Whether another thread (as a pool's result handler would) can take ``lock``."""
    got: list[bool] = []

    def take() -> None:
        if lock.acquire(timeout=0.2):
            lock.release()
            got.append(True)

    thread = threading.Thread(target=take)
    thread.start()
    thread.join()
    return bool(got)


def _entries_left_locked(make: Callable[[], Any], call: Callable[[Any], object],
                       lock_of: Callable[[Any], Any]) -> tuple[list[int], int]:
    """``call`` on a fresh ``make()``, with Ctrl-C on entering its k-th function for k = 1, 2, … until it enters
    fewer (where Python runs handlers, among them a ``Condition``'s ``__exit__``): the k after which the object's
    lock (``lock_of``) stayed held, and the number of interrupts (each must come, within a second of the call's
    end at the latest)."""
    held, interrupts, k = [], 0, 1
    while True:
        thing = make()
        sent: list[bool] = []
        sys.settrace(at_event(k, functools.partial(_send_interrupt, sent), "call"))
        try:
            try:
                call(thing)
            finally:
                sys.settrace(None)
            _spin(PUT_OFF_ARRIVES_WITHIN if sent else 0.0)     # a signal put off comes here
        except KeyboardInterrupt:
            interrupts += 1
        else:
            assert not sent, f"the signal at call {k} never came"
            return held, interrupts
        if not _lock_is_free(lock_of(thing)):
            held.append(k)
        k += 1


#: calls the coordinator makes on objects whose lock another thread takes too: a pool's futures, the
#: ``Event`` and ``queue.Queue`` of a client's event loop or a pool's threads
CALLS = {
    "Future.done": (Future, Future.done, lambda f: f._condition),
    "Future.cancel": (Future, Future.cancel, lambda f: f._condition),
    "Future.running": (Future, Future.running, lambda f: f._condition),
    "Future.set_running_or_notify_cancel": (Future, Future.set_running_or_notify_cancel, lambda f: f._condition),
    "Event.set": (threading.Event, threading.Event.set, lambda e: e._cond),
    "Event.clear": (threading.Event, threading.Event.clear, lambda e: e._cond),
    "Queue.put": (queue.Queue, lambda q: q.put(1), lambda q: q.mutex),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_ctrl_c_inside_a_locking_call_comes_after_it_and_leaves_the_lock_free(name: str) -> None:
    """Python's own handler, Ctrl-C on entering each function of the call in turn, leaves the object's lock held
    after some of them (a ``Condition``'s ``__enter__`` and ``__exit__`` are Python code); :func:`interrupt_where_safe`
    lets the interrupt in only after the call, every time, with the lock free."""
    with interrupts_where_safe():
        assert signal.getsignal(signal.SIGINT) is interrupt_where_safe
        held, interrupts = _entries_left_locked(*CALLS[name])
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert interrupts >= 2 and held == []
    held_by_default, _ = _entries_left_locked(*CALLS[name])
    assert held_by_default, "Python's handler left no lock held: the check above proves nothing"


def test_the_handler_raises_at_once_outside_the_pools_code() -> None:
    with pytest.raises(KeyboardInterrupt):
        interrupt_where_safe(signal.SIGINT, sys._getframe())
    assert not unsafe_to_interrupt(sys._getframe())
    seen: list[bool] = []
    done = Future()
    done.set_result(None)
    done.add_done_callback(lambda f: seen.append(unsafe_to_interrupt(sys._getframe())))   # called from _base.py
    assert seen == [True]


def test_ctrl_c_inside_a_finalizer_comes_after_it_instead_of_being_lost() -> None:
    """Python prints and drops an exception raised in ``__del__``: with its own handler a Ctrl-C that lands in
    one is lost and the run goes on; :func:`interrupt_where_safe` lets it in after the finalizer."""

    class Dropped:
        def __del__(self) -> None:
            signal.raise_signal(signal.SIGINT)
            for _ in range(3):       # the handler's chances inside the finalizer
                pass

    with interrupts_where_safe(), pytest.raises(KeyboardInterrupt):
        Dropped()                    # freed at once: its __del__ runs here
        _spin(PUT_OFF_ARRIVES_WITHIN)


@pytest.mark.parametrize("dropped_in", ["weakref callback", "generator closed by the collector"])
def test_ctrl_c_that_python_would_drop_is_sent_again(dropped_in: str) -> None:
    """A Ctrl-C raised where Python prints and drops exceptions ("Exception ignored in") and that no frame rule
    keeps out — a weakref callback of the caller's, a generator's ``finally`` run when it is collected — comes
    again after it (:func:`dropped_interrupts_sent_again`); with Python's hook it is lost."""

    class Thing:
        pass

    def raise_interrupt(*_) -> None:
        signal.raise_signal(signal.SIGINT)
        for _ in range(3):          # the handler's chances inside
            pass

    def generator():
        try:
            yield
        finally:
            raise_interrupt()

    def drop() -> None:
        if dropped_in == "weakref callback":
            thing = Thing()
            ref = weakref.ref(thing, raise_interrupt)
            del thing
            assert ref() is None
        else:
            started = generator()
            next(started)
            del started              # closed at once: its finally runs here

    with interrupts_where_safe(), pytest.raises(KeyboardInterrupt):
        drop()
        _spin(PUT_OFF_ARRIVES_WITHIN)
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: None     # Python's would print it; lost either way
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        drop()
        _spin(1.0)                                   # no KeyboardInterrupt: Python's handling dropped it
    finally:
        sys.unraisablehook = hook


def test_a_wait_on_no_block_returns_at_once() -> None:
    """The walk looked at its levels (none complete), then listed the blocks not yet done: a block that finished
    in between (the coordinator descheduled on a loaded machine) was left out, the list could be empty, and the
    wait blocked for ever on the token that block had already put — drained first (a review's find: 2 hangs in
    ~4,400 calls of ``learn(..., n_jobs=2)``). A wait on no block returns; the walk lists the blocks first."""
    import bnilp.lattice as lattice
    from bnilp.data import from_dataframe
    from bnilp.scores import make_score
    from tests.conftest import random_discrete_frame

    score = make_score("bic", from_dataframe(random_discrete_frame(1, n=3, N=50)))
    executor = lattice.ThreadExecutor(score, 2)
    waiting = threading.Thread(target=executor.wait_any, args=([],), daemon=True)
    waiting.start()
    waiting.join(30)
    assert not waiting.is_alive()

    look = lattice._InFlight.complete

    def descheduled_after_the_look(state) -> bool:     # the worker finishes every block sent meanwhile
        answer = look(state)
        while not answer and not all(t.done() for t in state.tasks):
            time.sleep(0.001)
        return answer

    from bnilp.parentsets import score_parent_sets

    done: list = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lattice._InFlight, "complete", descheduled_after_the_look)
        patch.setattr(lattice, "ACTIVE_CHILDREN_PER_SLOT", 0.5)     # one child at a time: its look is the only one
        walk = threading.Thread(target=lambda: done.append(score_parent_sets(score, epsilon=3.0, n_jobs=2)),
                                daemon=True)
        walk.start()
        walk.join(60)
    assert done and done[0].families == score_parent_sets(score, epsilon=3.0).families


def test_an_import_is_no_place_for_an_interrupt(tmp_path, monkeypatch) -> None:
    """Ctrl-C while the first ``scheduler="local"`` call imported ``dask.distributed`` left the module half made in
    ``sys.modules``: every later Dask call of the process failed ("module 'distributed' has no attribute
    'utils'", a review's find). Code run by an import is unsafe to interrupt: the interrupt waits for its end."""
    from bnilp.threads import unsafe_to_interrupt

    (tmp_path / "bnilp_probe_import.py").write_text(
        "import sys\nfrom bnilp.threads import unsafe_to_interrupt\nUNSAFE = unsafe_to_interrupt(sys._getframe())\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import bnilp_probe_import

    assert bnilp_probe_import.UNSAFE and not unsafe_to_interrupt(sys._getframe())


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_a_process_started_deaf_to_ctrl_c_holds_it_until_it_drops_it_and_the_caller_loses_none() -> None:
    """A child started inside :func:`children_start_deaf_to_ctrl_c` begins with SIGINT blocked (a terminal's
    Ctrl-C waits instead of interrupting its imports) and :func:`deaf_to_ctrl_c` drops what waited: it lives on
    and then ignores SIGINT; a child started outside has it open. The caller's mask is back afterwards, and a
    Ctrl-C that reaches the caller meanwhile is not lost: its handler runs."""
    import os
    import subprocess

    probe = [sys.executable, "-c",
             "import os, signal, sys, time\n"
             "from bnilp.threads import deaf_to_ctrl_c\n"
             "held = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())\n"
             "os.kill(os.getpid(), signal.SIGINT)\n"      # waits while blocked (or interrupts at once)
             "time.sleep(0.05)\n"
             "deaf_to_ctrl_c()\n"
             "time.sleep(0.05)\n"
             "print(held, signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set()))\n"]
    before = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    with pytest.raises(KeyboardInterrupt), children_start_deaf_to_ctrl_c():   # another thread takes it, or none
        deaf = subprocess.run(probe, capture_output=True, text=True, timeout=60)  # and it waits for the mask
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1.0)
    assert signal.pthread_sigmask(signal.SIG_BLOCK, set()) == before
    hearing = subprocess.run(probe, capture_output=True, text=True, timeout=60)
    assert (deaf.returncode, deaf.stdout.strip()) == (0, "True False"), deaf.stderr
    assert hearing.returncode != 0 and "KeyboardInterrupt" in hearing.stderr
