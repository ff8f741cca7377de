"""Interrupts put at chosen places: a trace function that acts at the k-th line or call (each place in turn), and
a Ctrl-C sent to each child process the moment it appears."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator


def at_event(k: int, action: Callable[[], object], event: str = "line"):
    """A trace function (``sys.settrace``) that calls ``action`` at the ``k``-th ``event`` ("line": a line
    starts; "call": a function is entered) of the thread, in any frame called after it is set. Raising or
    sending a signal there, for k = 1, 2, …, puts an interrupt at each such place of a call in turn. Python
    runs a signal's handler on entering a function (as at "call"), at a loop's jump back and after a call
    of compiled code returns; "line" covers those and more (a ``with`` statement's exit, where a signal is
    handled only on entering ``__exit__``)."""
    seen = 0

    def trace(frame, kind, arg):
        nonlocal seen
        if kind == event:
            seen += 1
            if seen == k:
                action()
        return trace

    return trace


def _children() -> set[int]:
    """This process's child processes now (Linux's /proc)."""
    me, found = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                with open(f"/proc/{entry}/stat") as handle:
                    if int(handle.read().rsplit(")", 1)[1].split()[1]) == me:
                        found.add(int(entry))
    return found


@contextlib.contextmanager
def ctrl_c_to_each_new_child() -> Iterator[list[int]]:
    """While it lasts, every child process this process starts gets SIGINT within a few milliseconds of its
    start — long before its interpreter has imported anything — as a terminal's Ctrl-C reaches a whole process
    group; yields the list of the children signalled."""
    before, hit, done = _children(), [], threading.Event()

    def watch() -> None:
        while not done.is_set():
            for pid in sorted(_children() - before - set(hit)):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGINT)
                    hit.append(pid)
            done.wait(0.002)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield hit
    finally:
        done.set()
        thread.join()
