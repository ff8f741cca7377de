"""A trace function that acts at the k-th line or call: puts an interrupt at each place in turn."""

from __future__ import annotations

from collections.abc import Callable


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
