"""User-facing errors: the CLI turns these into one line on stderr and exit code 2 (3 for :class:`LimitError`)."""

from __future__ import annotations


class BnilpError(Exception):
    """Bad input (file, option, data). The message names file, line and column where known."""


class InputError(BnilpError):
    """A data or score file that cannot be used as it is."""


class LimitError(BnilpError):
    """A resource limit (memory) stopped the work before it had a result to report (CLI exit code 3)."""


def caused_by_interrupt(exc: BaseException | None) -> bool:
    """Whether a ``KeyboardInterrupt`` lies in ``exc``'s cause/context chain. An interrupt that arrives
    while compiled code calls back into Python (numba's dispatcher, loading a cached function or
    unpickling a result) surfaces as a ``SystemError`` chained to it; it is still that interrupt (a
    user's Ctrl-C in the CLI, the memory watch's in :func:`bnilp.parentsets.memory_watch`), not a crash."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False
