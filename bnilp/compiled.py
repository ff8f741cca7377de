"""The compiled kernels' decorator: numba's ``njit``, whose on-disk cache may fail without ending a run.

numba keeps compiled code in ``NUMBA_CACHE_DIR`` where it is set, else beside the sources (``__pycache__``) or, where
that folder is read-only, under the user's cache folder (``~/.cache/numba``). With ``cache=True`` a failure of that
cache was the run's end, with a traceback: where no folder could be written (a site-wide install, a read-only HOME: a
container, user ``nobody``) numba refused at import ("cannot cache function …: no locator available"), so no command
started, not even ``--help``; a full disk or a quota while saving, or a cache index cut short (a process killed while
it wrote one), ended a run whose code had compiled (a review). A cache is only speed: here each of those compiles the
code anew (seconds in each process), saying so once."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any

import numba

from bnilp.errors import caused_by_interrupt


class CompileCacheWarning(RuntimeWarning):
    """The compiled code could not be cached on disk (or read back): each process compiles it anew."""


_SAID: set[str] = set()
#: the environment variable that carries what was said to the processes this one starts (the scoring pool's
#: workers import the same kernels and found the same cache: each printed the warning again, in Python's form)
SAID_VARIABLE = "BNILP_COMPILE_CACHE_SAID"


def _say_once(kind: str, text: str) -> None:
    """``text`` as a :class:`CompileCacheWarning`, once for each ``kind`` of failure in this process and the
    processes it starts afterwards (:data:`SAID_VARIABLE`)."""
    said = set(os.environ.get(SAID_VARIABLE, "").split(","))
    if kind in _SAID or kind in said:
        return
    _SAID.add(kind)
    os.environ[SAID_VARIABLE] = ",".join(sorted((said | {kind}) - {""}))
    warnings.warn(text, CompileCacheWarning, stacklevel=2)


def _unless_interrupted(exc: BaseException) -> None:
    """Raise ``exc`` again where a Ctrl-C or SIGTERM is behind it (CPython wraps one that lands in C code, numba's
    unpickling, in a ``SystemError``): the run was asked to stop, not to compile again."""
    if caused_by_interrupt(exc):
        raise exc


def _tolerant(dispatcher: Any) -> None:
    """The dispatcher's cache made to fail softly: a save that fails is skipped, a load that fails compiles."""
    cache = dispatcher._cache           # numba's FunctionCache, which enable_caching put there
    save, load = cache.save_overload, cache.load_overload

    def save_overload(sig: Any, data: Any) -> None:
        try:
            save(sig, data)
        except Exception as exc:        # no space, a quota; an index cut short, which the save reads first
            _unless_interrupted(exc)
            _say_once("save", f"bnilp: compiled code not cached ({getattr(exc, 'strerror', None) or exc}: "
                              f"{cache.cache_path}); the next process compiles it again")

    def load_overload(sig: Any, target_context: Any) -> Any:
        try:
            return load(sig, target_context)
        except Exception as exc:        # a file cut short or unreadable: compiled here instead
            _unless_interrupted(exc)
            _say_once("load", f"bnilp: a cached compiled function could not be read ({exc}); compiled again")
            return None

    cache.save_overload, cache.load_overload = save_overload, load_overload


def njit(*args: Any, cache: bool = False, **options: Any) -> Any:
    """``numba.njit(**options)``, cached on disk with ``cache=True`` where numba can: a cache folder that cannot be
    written or read costs compile time, never the run (:class:`CompileCacheWarning`, once a process). Used as
    ``@njit(cache=True, nogil=True)`` or bare ``@njit``."""
    def decorate(func: Callable[..., Any]) -> Any:
        dispatcher = numba.njit(**options)(func)
        if cache and hasattr(dispatcher, "enable_caching"):     # NUMBA_DISABLE_JIT: the plain function
            try:
                dispatcher.enable_caching()
            except RuntimeError as exc:     # "cannot cache function …: no locator available for file …"
                _say_once("locate", f"bnilp: compiled code cannot be cached ({exc}): each process compiles it "
                                    "anew (seconds in every run); set NUMBA_CACHE_DIR to a folder it may write")
            else:
                _tolerant(dispatcher)
        return dispatcher

    if len(args) == 1 and callable(args[0]) and not options:
        return decorate(args[0])
    if args:
        raise TypeError("bnilp.compiled.njit takes keyword options only (no signatures)")
    return decorate
