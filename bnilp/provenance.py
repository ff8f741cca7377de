"""What made an output: bnilp's version, the Python and the system it ran on, when, and the command line —
recorded in score-file sidecars (``provenance``, beside the data file's ``data_sha256``) and in result JSON
(``report["provenance"]``, with the search's settings), so a published result can be traced to its code, its
data and its options."""

from __future__ import annotations

import datetime
import os
import platform
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from bnilp import __version__

#: the command line's words while its run lasts (set by :mod:`bnilp.cli`; None for the Python API) — a context
#: variable, so a run nested in another puts the outer one's back and another thread's API call records none
_COMMAND: ContextVar[list[str] | None] = ContextVar("bnilp_command", default=None)


def invoked_as(argv0: str) -> str:
    """How this process's command line was started, from ``sys.argv[0]``: ``python -m bnilp`` (then it is the
    package's ``__main__.py``), the console script's name (``bnilp``), else (``python -c``, an empty argv)
    ``bnilp``."""
    name = os.path.basename(argv0)
    return "python -m bnilp" if name == "__main__.py" else name if name and name != "-c" else "bnilp"


@contextmanager
def command_recorded(args: list[str], program: str = "bnilp") -> Iterator[None]:
    """While the command line's run lasts, its words (``program``'s and ``args``) go into what it writes; a later
    call of the Python API in the same process (a test, a notebook that ran ``bnilp.cli.main``) records none."""
    token = _COMMAND.set([*program.split(), *map(str, args)])
    try:
        yield
    finally:
        _COMMAND.reset(token)


def provenance() -> dict[str, Any]:
    """``bnilp_version``, ``python``, ``platform``, ``created`` (UTC, ISO 8601, seconds) and, from the command
    line, ``command`` (its words, as given)."""
    out: dict[str, Any] = {
        "bnilp_version": __version__,
        "python": platform.python_version(),
        "platform": sys.platform,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    words = _COMMAND.get()
    if words is not None:
        out["command"] = list(words)
    return out
