"""What made an output: bnilp's version, the Python and the system it ran on, when, and the command line —
recorded in score-file sidecars (``provenance``, beside the data file's ``data_sha256``) and in result JSON
(``report["provenance"]``, with the search's settings), so a published result can be traced to its code, its
data and its options."""

from __future__ import annotations

import datetime
import platform
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bnilp import __version__


class _Command:
    """The command line of this process's run (set by :mod:`bnilp.cli`; None for the Python API)."""

    words: list[str] | None = None


@contextmanager
def command_recorded(args: list[str]) -> Iterator[None]:
    """While the command line's run lasts, its words (``bnilp`` and ``args``) go into what it writes; a later call
    of the Python API in the same process (a test, a notebook that ran ``bnilp.cli.main``) records none."""
    _Command.words = ["bnilp", *map(str, args)]
    try:
        yield
    finally:
        _Command.words = None


def provenance() -> dict[str, Any]:
    """``bnilp_version``, ``python``, ``platform``, ``created`` (UTC, ISO 8601, seconds) and, from the command
    line, ``command`` (its words, as given)."""
    out: dict[str, Any] = {
        "bnilp_version": __version__,
        "python": platform.python_version(),
        "platform": sys.platform,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    if _Command.words is not None:
        out["command"] = list(_Command.words)
    return out
