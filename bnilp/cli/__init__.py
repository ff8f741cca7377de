"""The ``bnilp`` command line: one sub-module per command, loaded lazily.

Every :class:`bnilp.errors.BnilpError` becomes one line on stderr and exit code 2 (never a
traceback). Exit code 3 means a limit cut the work short (time, network count, memory): the result is
valid but not proven optimal / not complete — or, for :class:`bnilp.errors.LimitError` (scoring out of
memory without a time limit) or a ``MemoryError`` (an allocation refused, e.g. under ``ulimit -v``), there is no
result and nothing more is written.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import signal
import sys
import threading
import warnings
from dataclasses import dataclass
from typing import NoReturn

import click

from bnilp import __version__
from bnilp.command import EXIT_INTERRUPTED
from bnilp.errors import BnilpError, LimitError, caused_by_interrupt
from bnilp.provenance import command_recorded, invoked_as
from bnilp.terminal import one_line, tolerant_terminal
from bnilp.threads import (
    SEARCH_STOPPED_BY_SIGNAL,
    WAITING_FOR_A_READER,
    dropped_interrupts_sent_again,
    interrupt_where_safe,
    start_retries,
)

#: command name -> "module:attribute"
COMMANDS = {
    "score": "bnilp.cli.score:score",
    "solve": "bnilp.cli.learn:solve",
    "count": "bnilp.cli.count:count",
    "learn": "bnilp.cli.learn:learn",
    "citest": "bnilp.cli.citest:citest",
    "simulate": "bnilp.cli.simulate:simulate",
    "compare": "bnilp.cli.simulate:compare",
    "proxy-search": "bnilp.cli.proxy:proxy_search",
}

EXIT_INPUT = 2
EXIT_LIMIT = 3


#: set by the handlers of :func:`_signals_as_interrupt` when Ctrl-C or SIGTERM came
_SIGNALLED = threading.Event()


def _raise_interrupt(signum, frame) -> None:
    """KeyboardInterrupt, where it is safe (:func:`bnilp.threads.interrupt_where_safe`: not in a pool's locking code
    nor a finalizer) — unless a signal already stopped the search: what it found is then being reported and
    written (status ``interrupted``, exit 3), and a second Ctrl-C (a double press, or ``timeout`` passing on the
    terminal's) is only noted, as SCIP's own handler did (:data:`bnilp.threads.SEARCH_STOPPED_BY_SIGNAL`)."""
    _SIGNALLED.set()
    if SEARCH_STOPPED_BY_SIGNAL.is_set():
        return
    interrupt_where_safe(signum, frame)


#: the signals that end a run once its exit is settled (:func:`_end_on_signal`, :func:`_ignore_signals_once_settled`):
#: SIGHUP too, where the system has it — CPython resets its handler at the last teardown as it does the others'
_ENDING_SIGNALS = (signal.SIGINT, signal.SIGTERM) + ((signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ())


def _hangup_as_sigterm(signum, frame) -> None:
    """SIGHUP (the terminal or SSH session closed) sent on as SIGTERM, to whatever handles SIGTERM at that moment
    (the search, the outputs being written, the exit): its default killed the run where it stood, the worker
    processes left running and the score's temporary file behind (a review)."""
    os.kill(os.getpid(), signal.SIGTERM)


@contextlib.contextmanager
def _signals_as_interrupt():
    """SIGTERM raises KeyboardInterrupt like Ctrl-C, so ``finally`` blocks run (worker pools stop, the
    score's temporary file is removed, no partial output is left); both handlers note that a signal came
    (:data:`_SIGNALLED`: an interrupt during an import can surface as an unchained ``ImportError``, numba's
    "failed to import"), and one that Python would drop in a finalizer is sent again
    (:func:`~bnilp.threads.dropped_interrupts_sent_again`). SIGINT keeps an ignored disposition (``nohup``, a
    background job of a script); SIGHUP, where not ignored, is taken as SIGTERM (:func:`_hangup_as_sigterm`). The
    search installs its own handler (``bnilp.ilp.search``: status
    ``interrupted`` with what was found) and restores this one after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    start_retries()
    _SIGNALLED.clear()          # a signal of an earlier command in this process is not this one's
    SEARCH_STOPPED_BY_SIGNAL.clear()
    _SETTLED.outputs_done = False
    previous = {signal.SIGTERM: signal.signal(signal.SIGTERM, _raise_interrupt)}
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, _raise_interrupt)
    hangup = getattr(signal, "SIGHUP", None)        # POSIX only
    if hangup is not None and signal.getsignal(hangup) is signal.SIG_DFL:   # not under nohup
        previous[hangup] = signal.signal(hangup, _hangup_as_sigterm)
    try:
        with dropped_interrupts_sent_again():
            yield
    finally:
        for sig, handler in previous.items():
            # the process's own run whose outputs are written lets signals pass until its exit is settled
            # (:func:`_end_on_signal`): put back, Python's handlers raised in click's return path (a traceback,
            # status −2) and SIGTERM's default killed the complete run (−15)
            if not (_SETTLED.outputs_done and _SETTLED.own_process):
                signal.signal(sig, handler)


@dataclass
class _Settled:
    """This process's run, once its outcome is settled (:func:`_end_on_signal`)."""

    code: int | None = None
    #: the command runs as the process itself (the console script, ``python -m bnilp``), not a caller's call
    own_process: bool = False
    #: the command's last outputs are written whole (:func:`outputs_whole`): from then on a signal is let pass, not
    #: raised — the run is complete, and it ends with its own exit code
    outputs_done: bool = False


_SETTLED = _Settled()


def _end_on_signal(code: int) -> None:
    """Once the run's outcome is settled (its outputs written, its line printed): Ctrl-C or SIGTERM while the
    interpreter shuts down (joining a pool's threads, running the exit handlers) ends the process at once with
    ``code`` — not an "Exception ignored in threading._shutdown" traceback after a complete run — and in the
    last teardown, where Python runs no handler, is ignored (:func:`_ignore_signals_once_settled`). An ignored
    SIGINT stays so."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    if threading.current_thread() is not threading.main_thread():
        return
    _SETTLED.code = code
    for sig in _ENDING_SIGNALS:
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, lambda signum, frame: os._exit(code))


@contextlib.contextmanager
def _signals_let_pass():
    """Ctrl-C and SIGTERM only noted (:func:`_after_the_outputs`) in the block — the exit's own clean-up, whose
    exit code is settled — then put back; an ignored signal stays ignored. Off the main thread, nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(sig, _after_the_outputs)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            if handler is not None:             # None: a handler not set from Python, which cannot be put back
                signal.signal(sig, handler)


def _ignore_signals_once_settled() -> None:
    """An exit handler, registered when this module is imported so that it runs after the others (they run last
    registered first): CPython's finalisation (``Py_FinalizeEx``, 3.11) resets every signal with a Python handler
    to ``SIG_DFL`` right after the exit handlers (``_PySignal_Fini``) and only then clears the modules — about a
    second here, with SCIP's models and numba's dispatchers — so a SIGTERM or Ctrl-C there killed a complete run
    (status −15 or −2, found by a review). An ignored signal stays ignored through it: the process ends with the
    run's own exit code."""
    if _SETTLED.code is None or threading.current_thread() is not threading.main_thread():
        return
    for sig in _ENDING_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


atexit.register(_ignore_signals_once_settled)


def _exit(code: int) -> NoReturn:
    """``sys.exit(code)``, after clearing CPython's note of an unhandled KeyboardInterrupt: an interrupt that
    escaped an ``exec`` of a string (the code dataclasses, namedtuples and numba generate) sets it even when a
    caller catches the interrupt, and ``python -m bnilp`` then ends by SIGINT (status −2) instead of ``code``
    (CPython 3.11 ``Py_RunMain``: ``exit_sigint``); the next ``exec`` of a string clears it."""
    exec("pass", {})
    sys.exit(code)


def _after_the_outputs(signum, frame) -> None:
    """A signal after the command's last outputs were written: the run is complete, and it goes on to its exit
    (the handlers of :func:`_end_on_signal` take over once the exit code is known)."""


class InterruptSaid(KeyboardInterrupt):
    """An interrupt whose line is printed already (:func:`outputs_whole`): the run ends with exit 130 and no second
    ``bnilp: interrupted`` (a review found both lines)."""


@contextlib.contextmanager
def outputs_whole(final: bool = True):
    """Ctrl-C and SIGTERM wait while the outputs are written: each file is written atomically, but an interrupt
    between two of them left a partial set (a JSON without its report or DOT, a score file without its
    sidecar). A signal that comes meanwhile is noted (its handler only records it; Python runs handlers in the
    main thread whatever thread the system picked) and acted on once the block is done: the run then ends as
    interrupted (exit 130), every output written whole, and says so. A FIFO that waits for its reader
    (:data:`~bnilp.threads.WAITING_FOR_A_READER`) has had nothing written: there the signal ends the run at once.
    ``final`` (the command's last outputs): once they are written, a signal is let pass and the run ends with its own
    exit code (its last lines printed: ``wrote …``, ``bnilp: limited: …``); before, one in the milliseconds
    between them and the exit said ``bnilp: interrupted`` (exit 130) over a complete run, or killed it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []

    def note(signum: int, frame) -> None:
        if WAITING_FOR_A_READER.is_set():       # a FIFO nobody opens: nothing written yet, so the run stops there
            raise KeyboardInterrupt
        came.append(signum)

    previous = {sig: signal.signal(sig, note) for sig in (signal.SIGINT, signal.SIGTERM)}
    done = False
    try:
        yield
        done = final and not came
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, _after_the_outputs if done and handler is not signal.SIG_IGN else handler)
        _SETTLED.outputs_done = done
        # also over the exit a limit asked for: the user stopped the run — unless a signal had stopped the search
        # already (the outputs hold what it found, status interrupted, exit 3)
        if came and not SEARCH_STOPPED_BY_SIGNAL.is_set():
            click.echo("bnilp: interrupted while the outputs were written: each was written whole first", err=True)
            raise InterruptSaid


def say_signal_after_search(status: str) -> None:
    """The stderr line of a run whose search took a SIGINT/SIGTERM once nothing was left to stop
    (``signal_after_search``): the result written is whole, and the signal is not dropped unsaid."""
    click.echo(f"bnilp: a SIGINT/SIGTERM came after the search had ended: the result written is whole (status "
               f"{status})", err=True)


def _own_lines_as_lines(show):
    """``warnings.showwarning`` that prints bnilp's own-worded warnings (:class:`bnilp.compiled.CompileCacheWarning`:
    a text that begins ``bnilp:``) as their one line, as the command line says everything, and the rest as ``show``
    does (Python's form, ``FILE:LINE: Category: text`` and the source line, pointed at an import in another module)."""
    def showwarning(message, category, filename, lineno, file=None, line=None):
        if category.__module__ == "bnilp.compiled":
            click.echo(one_line(str(message)), err=True)
        else:
            show(message, category, filename, lineno, file, line)
    return showwarning


#: click ≥ 8.2 raises this usage error for a group called without a command (it shows the help)
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class LazyGroup(click.Group):
    """A group whose sub-commands are imported only when used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):  # type: ignore[override]
        """Click's own usage errors (an unknown option, a value of the wrong type, a missing argument) are bad input
        like any other: one line, ``bnilp: error: …`` naming the command's help, exit 2 (click prints its usage
        block and a hint over four lines)."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        _SETTLED.own_process = args is None
        if args is None:
            tolerant_terminal()
            warnings.showwarning = _own_lines_as_lines(warnings.showwarning)
        try:
            with (command_recorded(sys.argv[1:], invoked_as(sys.argv[0])) if args is None
                  else command_recorded(list(args))):
                self._main(args, prog_name, complete_var, **extra)
        except SystemExit as exc:
            if args is None:        # the process itself (the console script, python -m bnilp), not a caller's call
                lattice = sys.modules.get("bnilp.lattice")
                if lattice is not None:
                    # the scoring pool's workers stopped before the exit, signals let pass meanwhile: once
                    # _end_on_signal ends the process at a signal, a second Ctrl-C during the exit handlers skipped
                    # the pool's shutdown - after an interrupted scoring run (exit 130) its workers and loky's
                    # resource trackers lived on, and "leaked semlock objects" was printed (a review)
                    with _signals_let_pass():
                        lattice.stop_pool_before_exit()
                _end_on_signal(exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1)
            raise

    def _main(self, args, prog_name, complete_var, **extra) -> NoReturn:
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.UsageError as exc:
            if isinstance(exc, _NO_ARGS_IS_HELP):      # `bnilp` alone: its help, as click shows it
                exc.show()
                sys.exit(exc.exit_code)
            where = exc.ctx.command_path if exc.ctx is not None else "bnilp"
            click.echo(one_line(f"bnilp: error: {exc.format_message()} (see {where} --help)"), err=True)
            sys.exit(EXIT_INPUT)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        _exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            with _signals_as_interrupt():
                return super().invoke(ctx)
        except LimitError as exc:
            click.echo(one_line(f"bnilp: limited: {exc}"), err=True)
            _exit(EXIT_LIMIT)
        except BnilpError as exc:
            click.echo(one_line(f"bnilp: error: {exc}"), err=True)
            _exit(EXIT_INPUT)
        except KeyboardInterrupt as exc:
            if not isinstance(exc, InterruptSaid):
                click.echo("bnilp: interrupted", err=True)
            _exit(EXIT_INTERRUPTED)
        except MemoryError as exc:      # an allocation refused (ulimit -v, a batch system's cap): a limit, not a crash
            click.echo(f"bnilp: limited: out of memory: an allocation failed ({str(exc) or 'MemoryError'}); the "
                       "process's memory is capped (ulimit -v, a batch system's limit) or the system has none left",
                       err=True)
            _exit(EXIT_LIMIT)
        except Exception as exc:
            if not (caused_by_interrupt(exc) or _SIGNALLED.is_set()):
                raise
            click.echo("bnilp: interrupted", err=True)
            _exit(EXIT_INTERRUPTED)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="bnilp")
def main() -> None:
    """Exact Bayesian network structure learning: the optimal network, every network within a
    Bayes factor of it, their equivalence classes and edge posteriors."""
