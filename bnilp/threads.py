"""Daemon worker threads whose tasks hold no Python-level lock: an interrupted run never hangs.

The coordinator of a parallel stage (the lattice walk's :class:`~bnilp.lattice.ThreadExecutor`, the DP's
passes) may be interrupted at any line — Ctrl-C, SIGTERM, the memory watch — and must never leave a lock
that a worker needs held. ``concurrent.futures`` cannot promise that: a ``Future`` guards its state with a
``threading.Condition`` whose ``__enter__``/``__exit__`` are Python functions and ``wait`` takes the futures'
locks in a Python loop, so an interrupt between an acquire and its release leaves the lock held; the worker
finishing that future then blocks for ever, and so does the interpreter's exit, which joins a
``ThreadPoolExecutor``'s threads (a CI run hung so for over 60 s after "bnilp: interrupted"; a stress loop
interrupting the wait hit it once in ~11,000 interrupts). Here who runs a call is settled by one
non-blocking acquire of the :class:`Job`'s gate (atomic, in C), outcomes travel through
``queue.SimpleQueue`` (C, its ``get`` interruptible without a lock left held), and the threads are daemons.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import CancelledError
from typing import Any


class Job:
    """A call submitted to :class:`DaemonThreads`, with the methods of a ``concurrent.futures.Future`` that the
    walk's executors use (``running``, ``done``, ``cancel``, ``result``). Who runs it is settled by one
    non-blocking acquire of :attr:`gate` (the worker to start it, the coordinator to cancel it); the outcome is
    published by setting :attr:`complete` after the value, then a token in :attr:`notify`."""

    __slots__ = ("fn", "args", "notify", "gate", "cancelled", "complete", "value", "error")

    def __init__(self, fn: Callable[..., Any], args: tuple, notify: queue.SimpleQueue) -> None:
        self.fn, self.args, self.notify = fn, args, notify
        self.gate = threading.Lock()
        self.cancelled = self.complete = False
        self.value: Any = None
        self.error: BaseException | None = None

    def running(self) -> bool:
        return self.gate.locked() and not self.cancelled and not self.complete

    def done(self) -> bool:
        return self.complete or self.cancelled

    def cancel(self) -> bool:
        """True if the call will never run (it had not started)."""
        if self.gate.acquire(blocking=False):
            self.cancelled = True
        return self.cancelled

    def result(self) -> Any:
        """The call's value (its exception raised; ``CancelledError`` if it was cancelled); waits on
        :attr:`notify` until it is complete (a token taken from a shared queue is one that another job put:
        whoever waits there looks at its jobs' flags before it waits)."""
        if self.cancelled:
            raise CancelledError
        while not self.complete:
            self.notify.get()
        if self.error is not None:
            raise self.error
        return self.value


class DaemonThreads:
    """``workers`` daemon threads that run the :class:`Job` submitted, in order. Unlike ``ThreadPoolExecutor``,
    whose threads the interpreter joins at exit (each finishing what it runs and what is queued), they never
    hold up the exit of an interrupted run: a run stopped by Ctrl-C ends at once, whatever a worker does.
    As a context manager: :meth:`shutdown` on leaving, waiting for the threads only if no exception left."""

    def __init__(self, workers: int, name: str) -> None:
        self.todo: queue.SimpleQueue = queue.SimpleQueue()
        self.threads = [threading.Thread(target=_serve, args=(self.todo,), name=f"{name}_{i}", daemon=True)
                        for i in range(workers)]
        for thread in self.threads:
            thread.start()

    def __enter__(self) -> DaemonThreads:
        return self

    def __exit__(self, kind: Any, *exc: Any) -> None:
        self.shutdown(wait=kind is None)

    def submit(self, fn: Callable[..., Any], *args: Any, notify: queue.SimpleQueue | None = None) -> Job:
        """``fn(*args)`` on a worker; once it is complete, a token goes to ``notify`` (else the job's own)."""
        job = Job(fn, args, queue.SimpleQueue() if notify is None else notify)
        self.todo.put(job)
        return job

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
        """``[fn(x) for x in items]``, the calls shared among the threads; after an error (or an interrupt)
        the calls not started are cancelled and the first error in item order is raised."""
        notify: queue.SimpleQueue = queue.SimpleQueue()
        jobs = [self.submit(fn, item, notify=notify) for item in items]
        try:
            return [job.result() for job in jobs]
        finally:
            for job in jobs:
                job.cancel()

    def shutdown(self, wait: bool = True) -> None:
        """The threads end once what was submitted before is done (``wait``: this call waits for that)."""
        for _ in self.threads:
            self.todo.put(None)
        if wait:
            for thread in self.threads:
                thread.join()


def _serve(todo: queue.SimpleQueue) -> None:
    """A :class:`DaemonThreads` worker (it holds no reference to its pool, which can be collected)."""
    while (job := todo.get()) is not None:
        if job.gate.acquire(blocking=False):            # else the coordinator cancelled it
            try:
                job.value = job.fn(*job.args)
            except BaseException as exc:                # the caller sees it in result()
                job.error = exc
            job.fn = job.args = None
            job.complete = True
            job.notify.put(None)
        del job
