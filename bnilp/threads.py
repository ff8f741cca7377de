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

Where ``concurrent.futures`` futures remain (the loky processes' tasks), the interrupt itself waits:
:func:`interrupt_where_safe`, the CLI's handler of Ctrl-C and SIGTERM and the walk's while the default
handler is in place, raises ``KeyboardInterrupt`` only once the main thread is out of that code (and out
of finalizers, where it would be printed and dropped).
"""

from __future__ import annotations

import _thread
import contextlib
import os
import queue
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from types import FrameType
from typing import Any

#: set when Ctrl-C or SIGTERM stopped a search of this process (:mod:`bnilp.ilp.search`, which then returns what
#: it found): the command line's handler only notes further signals until the result is written, where it
#: raised KeyboardInterrupt and the run ended with exit 130 and nothing written (``bnilp.cli``, cleared when a
#: command starts)
SEARCH_STOPPED_BY_SIGNAL = threading.Event()
#: set while an output waits for a reader to open its FIFO (:func:`bnilp.scorefile.atomic_output`): nothing is
#: written yet, so the command line's handler, which otherwise only notes a signal until the outputs are written
#: whole (``bnilp.cli.outputs_whole``), stops the run there (exit 130) — before, Ctrl-C could not end a run whose
#: ``--json`` named a FIFO nobody read
WAITING_FOR_A_READER = threading.Event()


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
            from concurrent.futures import CancelledError  # not at import: the CLI's handler is here

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


#: where the coordinator's calls take locks that a worker thread (a pool's result handler) takes too: the
#: ``Future`` methods, the executors' ``submit`` and their queues (loky's are vendored by joblib)
LOCKING_LIBRARIES = (f"{os.sep}concurrent{os.sep}futures{os.sep}", f"{os.sep}loky{os.sep}")
#: the import system's frames: a module whose import an interrupt cuts short stays half made in ``sys.modules``
#: (``import dask.distributed`` stopped so: every later Dask call of the process failed, "module 'distributed' has
#: no attribute 'utils'")
IMPORT_MACHINERY = "<frozen importlib."
#: functions run by the garbage collector, whose exceptions Python prints ("Exception ignored in") and drops
FINALIZERS = ("__del__",)
#: the ``threading`` methods that take or give back a lock in Python code without waiting long and without
#: calling out (the ``Condition`` of an ``Event``, of a ``queue.Queue``, any ``with condition:``);
#: ``Condition.wait`` is not one: an interrupt in its wait comes at once, and its ``finally`` takes the lock back
LOCK_STEPS = ("__enter__", "__exit__", "_release_save", "_acquire_restore", "_is_owned", "notify", "notify_all",
              "set", "clear")


def unsafe_to_interrupt(frame: FrameType | None) -> bool:
    """Whether ``frame`` or a caller of it is a :data:`LOCK_STEPS` method of ``threading`` or runs code of
    :data:`LOCKING_LIBRARIES` (an interrupt there can leave a lock held that another thread needs), an import
    (:data:`IMPORT_MACHINERY`: it would leave the module half made), a
    :data:`FINALIZERS` method or a ``weakref.finalize`` callback (the interrupt would be printed and lost: a
    run interrupted in numba's ``ObjectRef.__del__`` went on to its end)."""
    while frame is not None:
        code = frame.f_code
        if (code.co_name in FINALIZERS or any(part in code.co_filename for part in LOCKING_LIBRARIES)
                or code.co_filename.startswith(IMPORT_MACHINERY)
                or code.co_filename == weakref.__file__
                or (code.co_filename == threading.__file__ and code.co_name in LOCK_STEPS)):
            return True
        frame = frame.f_back
    return False


#: how long the signal put off by :func:`interrupt_where_safe` waits before it is sent again
RETRY_SECONDS = 0.001
#: the queue of the thread that sends the signals put off (None until :func:`start_retries`)
_RETRIES: queue.SimpleQueue | None = None
#: the signal behind the last KeyboardInterrupt :func:`interrupt_where_safe` raised (Python's handler: SIGINT)
_LAST_SIGNUM: int = signal.SIGINT
#: one entry for each signal put off, and one for each sent again (``list.append`` is atomic and takes no lock,
#: which a signal handler must not): :func:`retries_pending` compares their lengths
_PUT_OFF: list[int] = []
_SENT_AGAIN: list[int] = []


def retries_pending() -> bool:
    """Whether a signal put off by :func:`interrupt_where_safe` (or :func:`dropped_interrupts_sent_again`) has not
    yet been sent again: a wait that must see an interrupt arrive waits for this too (on a loaded machine the
    sending thread can run long after :data:`RETRY_SECONDS`)."""
    return len(_SENT_AGAIN) < len(_PUT_OFF)


def _put_off(signum: int) -> None:
    _PUT_OFF.append(signum)
    if _RETRIES is not None:
        _RETRIES.put(signum)


def start_retries() -> None:
    """The daemon thread of :func:`interrupt_where_safe` (started outside any handler: starting a thread
    takes locks)."""
    global _RETRIES
    if _RETRIES is None:
        todo: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=_retry, args=(todo,), name="bnilp-interrupts", daemon=True).start()
        _RETRIES = todo


def _forget_retries() -> None:
    global _RETRIES
    _RETRIES = None             # a forked child has not the thread
    _PUT_OFF.clear()
    _SENT_AGAIN.clear()


if hasattr(os, "register_at_fork"):        # POSIX only: Windows has no fork (and failed every command here)
    os.register_at_fork(after_in_child=_forget_retries)


def _retry(todo: queue.SimpleQueue) -> None:
    while True:
        signum = todo.get()
        time.sleep(RETRY_SECONDS)
        _thread.interrupt_main(signum)
        _SENT_AGAIN.append(signum)


def interrupt_where_safe(signum: int, frame: FrameType | None) -> None:
    """A signal handler: ``KeyboardInterrupt``, but never where :func:`unsafe_to_interrupt` — there the
    signal is put off: :func:`start_retries`'s thread sends it again (``_thread.interrupt_main(signum)``) after
    :data:`RETRY_SECONDS`, until the main thread is out. An interrupt raised in the Python ``__exit__`` of a
    ``Future``'s ``Condition`` leaves the lock held, and the thread that completes the future blocks on it for
    ever (so does the interpreter's exit, which joins that thread). A wait in such code (``Future.result``)
    ends first: the interrupt then comes with the result. The signal goes through a ``SimpleQueue`` (its
    ``put`` may be called from a handler) because a handler that sent it again itself would run again inside
    itself, right after that call."""
    global _LAST_SIGNUM
    if _RETRIES is not None and unsafe_to_interrupt(frame):
        _put_off(signum)
        return
    _LAST_SIGNUM = signum
    raise KeyboardInterrupt



@contextlib.contextmanager
def children_start_deaf_to_ctrl_c() -> Iterator[None]:
    """While it lasts, SIGINT is blocked on this thread, so a process started from it begins with SIGINT blocked
    (the mask is inherited through ``fork`` and ``exec``) until it calls :func:`deaf_to_ctrl_c`. For the worker
    pools (loky), which ignore Ctrl-C from their initializer on — the coordinator stops them — but which run it
    only once they have imported numpy, bnilp and SCIP (about a second): a terminal's Ctrl-C, sent to the whole
    foreground process group, came before then and killed a worker (the pool broken) or printed its
    ``KeyboardInterrupt`` traceback from those imports (a review: 2 of 7 runs of phase 2 in cubes interrupted at
    their start). Nothing is lost here: the caller's other threads still take the signal, and Python runs its
    handler on the main thread as before (where no thread takes it, it waits until the mask is back).
    multiprocessing's resource tracker unblocks SIGINT on the thread that first starts it (Python 3.11), which
    is why it is started before the block; ignoring SIGINT instead would reach the child too, but a Ctrl-C meanwhile
    would be lost. Where there is no ``pthread_sigmask`` (Windows: no process-group signals) it does nothing."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    from multiprocessing import resource_tracker

    # SIGHUP blocked from before the resource tracker starts (it unblocks only SIGINT and SIGTERM, so a hang-up sent
    # to the whole group — a terminal closed — stays pending there forever) until the workers ignore it: its default
    # killed them and the tracker, which printed "process died unexpectedly" and KeyError tracebacks (a review)
    hangup = {signal.SIGHUP} if hasattr(signal, "SIGHUP") else set()
    before = signal.pthread_sigmask(signal.SIG_BLOCK, hangup)
    try:
        resource_tracker.ensure_running()
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def may_start_processes() -> bool:
    """Whether this process may start worker processes: not a daemon — a ``multiprocessing.Pool``'s worker is one,
    and its children are refused ("daemonic processes are not allowed to have children", an ``AssertionError``
    from inside loky or Dask; a review). There bnilp's work that would go to processes runs here instead (results
    never depend on how many processes ran them)."""
    import multiprocessing

    return not multiprocessing.current_process().daemon


def deaf_to_ctrl_c() -> None:
    """In a worker process (its main thread): SIGINT and SIGHUP ignored, then unblocked — a Ctrl-C or hang-up that came
    while it started (:func:`children_start_deaf_to_ctrl_c`) waits blocked, and is dropped here."""
    hangup = {signal.SIGHUP} if hasattr(signal, "SIGHUP") else set()     # the coordinator stops them on a hang-up too
    for sig in {signal.SIGINT} | hangup:
        signal.signal(sig, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT} | hangup)


@contextlib.contextmanager
def dropped_interrupts_sent_again() -> Iterator[None]:
    """While it lasts (on the main thread), a ``KeyboardInterrupt`` that Python would print and drop — raised in
    a finalizer, a weakref callback, a generator closed by the garbage collector: ``sys.unraisablehook``'s
    "Exception ignored in" — is sent again to the main thread (:func:`start_retries`'s thread) instead, so the run
    stops as asked; any other such exception goes to the hook as before. :func:`unsafe_to_interrupt` keeps an
    interrupt out of ``__del__`` methods and ``weakref.finalize``; this catches the others."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    start_retries()
    previous = sys.unraisablehook

    def send_again(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and _RETRIES is not None:
            _put_off(_LAST_SIGNUM)
        else:
            previous(unraisable)

    sys.unraisablehook = send_again
    try:
        yield
    finally:
        sys.unraisablehook = previous


@contextlib.contextmanager
def interrupts_where_safe() -> Iterator[None]:
    """On the main thread, while Ctrl-C has Python's default handler: :func:`interrupt_where_safe` instead, and
    :func:`dropped_interrupts_sent_again` (a handler of the caller's, the CLI's included, is left as it is)."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    start_retries()
    signal.signal(signal.SIGINT, interrupt_where_safe)
    try:
        with dropped_interrupts_sent_again():
            yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
