"""User-facing errors: the CLI turns these into one line on stderr and exit code 2 (3 for :class:`LimitError`)."""

from __future__ import annotations

import functools
import math
import numbers
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import numpy as np

P = ParamSpec("P")
R = TypeVar("R")


class BnilpError(Exception):
    """Bad input (file, option, data). The message names file, line and column where known."""


class InputError(BnilpError):
    """A data or score file that cannot be used as it is."""


class OutputError(InputError):
    """An output that could not be written once the work was done (no space, a size limit, a file that may not
    be replaced): one line naming it, exit 2, none of the command's outputs left (:func:`bnilp.scorefile.output_set`).
    Apart from :class:`InputError` so that a caller that goes on after a bad input (an export the search could
    not serve) does not go on after a failed write."""


class MissingExtraError(InputError, ImportError):
    """A feature whose optional dependency is not installed: one line naming the extra that brings it (exit 2 in
    the CLI); an ``ImportError`` too, so that a caller's ``except ImportError`` catches it as it would the
    missing package's own."""

    def __init__(self, feature: str, extra: str) -> None:
        super().__init__(f"{feature} needs the {extra} extra: pip install 'bnilp[{extra}]'")
        self.feature, self.extra = feature, extra

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        # rebuilt from what made it (pickling, copy): a worker process's error reaches its parent as itself
        return type(self), (self.feature, self.extra)


class UnsoundTableError(InputError, AssertionError):
    """A score table recorded as soundly pruned for this ε that lacks a parent set some credible DAG needs: its
    scores were edited or made elsewhere under a bnilp sidecar, or the score is not score-equivalent. Still an
    ``AssertionError`` (an invariant of sound pruning fails, never a silent miscount), but reported by the CLI
    as one line like any bad input."""


class NoDagError(InputError):
    """A score table (with any background knowledge) that admits no DAG: there is no result to report. The
    API raises it from :func:`bnilp.pipeline.solve_table`; the CLI prints one line and exits 2."""


class DataWarning(UserWarning):
    """What reading a data set noticed that may be a mistake, the run going on (:func:`bnilp.data.load_data`,
    :func:`bnilp.data.from_dataframe`): an identifier column, decimal commas, a constant column left out, twin
    columns. Issued with :func:`warnings.warn`, so a notebook shows them; the command line prints its own lines."""


def warn_at_caller(message: str) -> None:
    """Issue ``message`` as a :class:`DataWarning` naming the caller's line: the first frame outside bnilp (a
    notebook shows the line that called ``learn`` or ``solve_table``, not one inside the package)."""
    level, frame = 2, sys._getframe(1)
    while frame.f_back is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "bnilp":
        level, frame = level + 1, frame.f_back
    warnings.warn(message, DataWarning, stacklevel=level)


class LimitError(BnilpError):
    """A limit stopped the work before it had a result to report (CLI exit code 3): a resource (memory), or a
    score table pruned without the required knowledge that then admits no DAG under it (``knowledge_pruning``)."""


def not_utf8(path: object, exc: UnicodeDecodeError, what: str = "", *, lone_cr_ends_a_line: bool = True) -> InputError:
    """The one-line error for a file that is not UTF-8 text: ``path:line:column`` of the first byte that does not
    decode (the column in characters), the byte, and ``what`` the file should be (``"the knowledge file"``). Lines
    end at LF, CRLF and — where the file's reader says so (data and score files, not knowledge files) — a lone
    CR, as the file's other errors count them (a data file with CR line ends was said to fail on line 1)."""
    head = exc.object[:exc.start]
    if lone_cr_ends_a_line:
        head = head.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    line_start = head.rfind(b"\n") + 1
    line = head.count(b"\n") + 1
    column = len(head[line_start:].decode("utf-8", "replace")) + 1
    said = f"{what} is not UTF-8 text" if what else "not UTF-8 text"
    return InputError(f"{path}:{line}:{column}: {said} (byte {exc.object[exc.start]:#04x}; save it as UTF-8)")


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


def listed_names(names: list[str], limit: int) -> str:
    """The first ``limit`` of ``names`` joined by ", ", and where more follow, ", … (N in all)": a message or line
    that names variables says how many it leaves out (a review: a list cut at 5 of 8 without a word)."""
    return ", ".join(names[:limit]) + (f", … ({len(names)} in all)" if len(names) > limit else "")


def interrupts_as_keyboard(func: Callable[P, R]) -> Callable[P, R]:
    """``func`` (a public entry point: ``learn``, ``solve_table``, ``score_parent_sets``, ``ilp.solve``) with an
    interrupt that surfaced as a ``SystemError`` from compiled code (:func:`caused_by_interrupt`) raised as the
    ``KeyboardInterrupt`` it is: a caller's ``except KeyboardInterrupt`` missed a Ctrl-C that landed in a numba
    function of the class report (a review: 16 of 40 Ctrl-Cs sent while ``solve_table`` built its report)."""
    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except SystemError as exc:
            if caused_by_interrupt(exc):
                raise KeyboardInterrupt from exc
            raise

    return wrapper


def check_count(value: object, name: str, minimum: int = 0, also: tuple[int, ...] = ()) -> int:
    """``value`` as an ``int`` when it is a whole number — a Python or NumPy integer, or a real number with no
    fractional part (``4.0``, as read from a JSON or YAML configuration), not ``bool`` or a string — ≥ ``minimum``
    or one of ``also`` (e.g. −1 for "all cores"); else an :class:`InputError` naming the parameter ``name``.
    Every count of the API goes through here, so ``palim=2.0`` and ``simulate(4.0, …)`` are read alike."""
    try:            # (a whole Fraction past a float's range overflows in isfinite: refused, as check_real does)
        whole = (isinstance(value, numbers.Integral)
                 or (isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer()))
    except OverflowError:
        whole = False
    if isinstance(value, bool) or not whole or not (value >= minimum or value in also):
        extra = "".join(f" or {a}" for a in also)
        raise InputError(f"{name} must be an integer ≥ {minimum}{extra}, got {value!r}")
    return int(value)


def check_seconds(value: object, name: str, *, positive: bool = False) -> float | None:
    """``value`` as a finite number of seconds ≥ 0 (None: no limit; 0: stop at the first check, reported as
    the limit it is), > 0 with ``positive``; else an :class:`InputError` naming ``name``."""
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, numbers.Real) or not (0 <= value < float("inf"))
            or (positive and value == 0)):
        raise InputError(f"{name} must be a finite number of seconds {'>' if positive else '≥'} 0, got {value!r}")
    return float(value)


def check_real(value: object, name: str, minimum: float, *, above: bool = False) -> float:
    """``value`` as a ``float`` when it is a finite real number (Python or NumPy, not ``bool`` and not a string)
    ≥ ``minimum`` (``above``: > ``minimum``); else an :class:`InputError` naming the parameter ``name`` — checked
    before any arithmetic, so ``bf=0`` or ``ess='1'`` is this one line and not a ``ValueError`` from ``math``."""
    try:            # an int past a float's range (bf=10**400) raised OverflowError in isfinite
        ok = (isinstance(value, numbers.Real) and not isinstance(value, bool)
              and math.isfinite(value) and (value > minimum if above else value >= minimum))
    except OverflowError:
        ok = False
    if not ok:
        shown = (repr(value) if not isinstance(value, int) or abs(value) < 10 ** 30
                 else f"an integer of {len(str(abs(value)))} digits")
        raise InputError(f"{name} must be a finite number {'>' if above else '≥'} {minimum:g}, got {shown}")
    return float(value) + 0.0       # (−0.0 reads 0.0: the JSON echoed "epsilon": -0.0)


def check_seed(value: object, name: str = "seed") -> int | None:
    """A random seed: None or an integer ≥ 0 (NumPy's generators take no negative seed)."""
    return None if value is None else check_count(value, name, 0)


def check_flag(value: object, name: str, *, optional: bool = False) -> bool | None:
    """``value`` as a ``bool`` when it is one (Python or NumPy's; ``optional``: also None, "decide for me"); else an
    :class:`InputError` naming ``name`` — ``"no"`` or ``0`` is not False (a string flag silently turned a mode on)."""
    if optional and value is None:
        return None
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name} must be True or False{' (or None)' if optional else ''}, got {value!r}")
    return bool(value)


def check_path(value: object, name: str) -> str:
    """``value`` as a path string when it is a ``str`` or ``os.PathLike`` (not empty); else an :class:`InputError`
    naming ``name`` (``None`` or a number was a ``TypeError`` from deep inside ``open``/``pathlib``)."""
    if not isinstance(value, (str, os.PathLike)):
        raise InputError(f"{name} must be a file path (str or os.PathLike), got {type(value).__name__}")
    path = os.fspath(value)
    if not isinstance(path, str) or not path:
        raise InputError(f"{name} must be a non-empty file path, got {value!r}")
    return path


def check_callback(value: object, name: str = "progress") -> Callable[..., Any] | None:
    """``value`` when it is None or callable; else an :class:`InputError` naming ``name`` (the walk or the
    search called it and failed with a ``TypeError`` far from the cause)."""
    if value is not None and not callable(value):
        raise InputError(f"{name} must be a function or None, got {type(value).__name__}")
    return value
