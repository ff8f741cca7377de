"""A trace function that acts at the k-th Python line: puts an interrupt at each place in turn."""

from __future__ import annotations

from collections.abc import Callable


def at_line(k: int, action: Callable[[], object]):
    """A trace function (``sys.settrace``) that calls ``action`` at the ``k``-th line the thread runs, in any
    frame called after it is set. A signal's handler runs between two Python lines, so raising or sending a
    signal there, for k = 1, 2, …, puts an interrupt at each such place of a call in turn."""
    seen = 0

    def trace(frame, event, arg):
        nonlocal seen
        if event == "line":
            seen += 1
            if seen == k:
                action()
        return trace

    return trace
