"""The ``bnilp`` console script's entry point (and ``python -m bnilp``'s): :func:`bnilp.cli.main`, its modules
loaded with Ctrl-C and SIGTERM guarded.

Importing :mod:`bnilp.cli` loads click and NumPy (about 0.3 s) before the command installs its own handlers: a
Ctrl-C then printed a ``KeyboardInterrupt`` traceback through the imports (exit −2) and a SIGTERM ended the process
silently (−15) (a review). Here either is one line and exit 130, as later: nothing has started, nothing is written.
Kept apart from :mod:`bnilp.cli` so that importing that (tests, callers' scripts) changes no handler."""

from __future__ import annotations

import os
import signal
import threading
from typing import NoReturn

#: Ctrl-C or SIGTERM outside the search (loading, reading, scoring): nothing written (128 + SIGINT, as shells do);
#: :mod:`bnilp.cli` takes it from here, where nothing heavy is imported
EXIT_INTERRUPTED = 130


def _interrupted_while_starting(signum: int, frame: object) -> NoReturn:
    os.write(2, b"bnilp: interrupted\n")
    os._exit(EXIT_INTERRUPTED)


def main() -> None:
    """Run the command line; while :mod:`bnilp.cli` loads, a Ctrl-C or SIGTERM ends it in one line (where Python's
    own handlers are in place: an ignored SIGINT — ``nohup``, a script's background job — stays ignored)."""
    guarded = (threading.current_thread() is threading.main_thread()
               and signal.getsignal(signal.SIGINT) is signal.default_int_handler
               and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)
    before = {sig: signal.signal(sig, _interrupted_while_starting) for sig in (signal.SIGINT, signal.SIGTERM)} \
        if guarded else {}
    from bnilp.cli import main as command_line

    for sig, handler in before.items():
        signal.signal(sig, handler)
    command_line()
