"""The terminal: rich consoles that print the data's names as they are written, and the command line's stdout and
stderr kept printing when their reader leaves or their encoding falls short."""

from __future__ import annotations

import codecs
import io
import os
import sys
import time
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

#: the width of output that goes to a file or a pipe (rich's default there is 80 columns, where the scoring
#: table's counts were cut to "1456…"); ``COLUMNS`` still sets it
FILE_WIDTH = 160


def plain_console(**kwargs: Any) -> Console:
    """A rich ``Console`` (``kwargs`` go to it) that prints names as they are written: no emoji codes — a
    variable named ``:warning:`` stays text, not ⚠ (rich replaces them in every string it prints, markup or
    not). Every terminal output of the package is printed through one; a name that goes into a table or a
    styled line goes as a :class:`rich.text.Text` (no markup: ``rich.markup.escape`` doubles a trailing
    backslash, and ``x\\`` showed as ``x\\\\``). Not at a terminal it is :data:`FILE_WIDTH` wide."""
    console = Console(emoji=False, **kwargs)
    if "width" not in kwargs and "COLUMNS" not in os.environ and not console.is_terminal:
        console.width = FILE_WIDTH
    return console


#: how often a run whose terminal output is not a terminal (a log file, a batch job's output) prints where it is,
#: in place of the progress bar and status line a terminal shows
LOG_PROGRESS_SECONDS = 60.0


class LogProgress:
    """A line ``[T s] TEXT`` on ``console`` at most every :data:`LOG_PROGRESS_SECONDS` (``every``) of the calls it
    gets: ``bnilp learn big.csv > log 2>&1`` printed nothing between the types inferred and the report, for however
    long scoring and the search ran (rich's bar and status line show only at a terminal)."""

    def __init__(self, console: Console, every: float | None = None) -> None:
        self.console = console
        self.every = LOG_PROGRESS_SECONDS if every is None else every
        self.last = time.monotonic()

    def __call__(self, text: str) -> None:
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now         # T: since the command line started (its first import of this module)
            self.console.print(f"[{now - _STARTED:.0f} s] {text}", markup=False, highlight=False, soft_wrap=True)


_STARTED = time.monotonic()


#: characters the command line prints (help texts, tables, the report) and what an output that cannot encode them
#: shows instead (``X1 ← ∅`` read ``X1 ? ?``); any other character it cannot encode is escaped (``\u6e29``)
STAND_INS = {"ε": "eps", "≤": "<=", "≥": ">=", "←": "<-", "→": "->", "∅": "{}", "⟂": "_||_", "−": "-", "…": "...",
             "×": "x", "·": "*", "Π": "Pi", "χ": "chi", "ℓ": "l", "—": "--", "–": "-"}
PRINTED = "".join(STAND_INS)


def _stand_in(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    text = exc.object[exc.start:exc.end]
    return "".join(STAND_INS.get(c) or c.encode("ascii", "backslashreplace").decode("ascii") for c in text), exc.end


codecs.register_error("bnilp-stand-ins", _stand_in)


class _ReaderMayLeave(io.RawIOBase):
    """The terminal side of descriptor ``fd`` (stdout or stderr): once its reader has left (``| head``, a pager quit
    early) or it cannot be written (``> log`` on a full disk: ``> /dev/full`` ended in a traceback that lost every
    output), what is printed is dropped instead of raising, so the run goes on to write its files and ends with its
    own exit code; an error other than the reader leaving is said once on stderr. The descriptor itself is left as
    it is: an output written to ``-`` goes to it directly (:func:`bnilp.scorefile.atomic_output`) and still finds
    the reader gone."""

    def __init__(self, fd: int, name: str) -> None:
        super().__init__()
        self._fd = fd
        self.name = name
        self.left = False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: Any) -> int | None:
        view, written = memoryview(data).cast("B"), 0
        if self.left:
            return len(view)
        try:
            while written < len(view):          # whole: unbuffered (python -u) a text layer writes here directly
                written += os.write(self._fd, view[written:])
            return written
        except BlockingIOError:
            return written or None
        except BrokenPipeError:
            self.left = True
            return len(view)
        except OSError as exc:
            self.left = True
            if self.name != "stderr":
                sys.stderr.write(f"bnilp: warning: {self.name} cannot be written ({exc.strerror or exc}): what the "
                                 "run prints there is dropped\n")
            return len(view)


def tolerant_terminal() -> None:
    """Make the process's stdout and stderr (the command line's, not a caller's) print whatever happens to their
    readers. (1) A reader that leaves: on POSIX each is re-opened over :class:`_ReaderMayLeave` — ``bnilp learn …
    --report rep | less`` with the pager quit before the run ended lost ``rep`` and ended with exit 1 (the report's
    panel raised ``BrokenPipeError`` inside the set of outputs, which was then discarded; found by a review).
    (2) An encoding that cannot print :data:`PRINTED`: each stream prints :data:`STAND_INS` (``<-``, ``eps``) and
    escapes whatever else it cannot encode — on Windows a redirected or piped output (``bnilp learn > out.txt``) is
    in the locale's code page (cp1252) unless Python's UTF-8 mode is on, and ``--help`` (⟂) or the report (ε) ended
    in a ``UnicodeEncodeError`` traceback that lost the outputs (a review). Buffering stays as it was (line-buffered
    at a terminal; unbuffered under ``python -u``, ``PYTHONUNBUFFERED``)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        errors = getattr(stream, "errors", None) or "strict"
        encoding = getattr(stream, "encoding", None) or "utf-8"
        try:
            PRINTED.encode(encoding)
        except UnicodeEncodeError:
            errors = "bnilp-stand-ins"
        except LookupError:
            pass
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError):
            fd = None
        if os.name != "posix" or fd is None or not isinstance(stream, io.TextIOWrapper):
            if errors == "bnilp-stand-ins" and hasattr(stream, "reconfigure"):
                stream.reconfigure(errors=errors)   # a Windows console: its own writer (UTF-16) stays
            continue
        stream.flush()
        raw = _ReaderMayLeave(fd, name)
        buffered = isinstance(getattr(stream, "buffer", None), io.BufferedIOBase)   # not under python -u
        setattr(sys, name, io.TextIOWrapper(io.BufferedWriter(raw) if buffered else raw, encoding=encoding,
                                            errors=errors, line_buffering=stream.line_buffering,
                                            write_through=stream.write_through))


def lossless(table: Table, width: int | None = None) -> Table:
    """``table`` with every column folding its cells onto more lines where the width is short, instead of cutting
    them to "…": a terminal of 80 columns showed the scoring table's counts as "1456…" and one of 40 left most of
    its figures blank (found by a review). Given the terminal's ``width``, a table whose borders and padding alone
    (four characters a column) would not leave each column one character loses its padding: at 40 columns the
    eleven columns of the scoring table were drawn 0 wide, their figures missing (a later review)."""
    for column in table.columns:
        column.overflow = "fold"
        column.min_width = max(column.min_width or 0, 1)
    if width is not None and width < 4 * len(table.columns) + 1 + len(table.columns):
        table.padding = (0, 0)
    if table.title is not None:     # at least as wide as its title: "P(u →" / "v) (top 14 of 14)" was cut mid-formula
        title = table.title.plain if isinstance(table.title, Text) else str(table.title)
        table.min_width = max(table.min_width or 0, cell_len(title))
    return table


def one_line(text: str) -> str:
    """``text`` as one line of a terminal: every character that ends a line or moves the cursor back — a control
    character (Unicode's Cc: CR, LF, ESC …; a tab stays) and the line and paragraph separators (Zl, Zp) — written
    as its escape (``\\r``, ``\\x1b``, ``\\u2028``). Error messages quote what the user gave (a statement, a cell),
    and a raw carriage return in one made the terminal overwrite the start of the line (a review)."""
    import unicodedata

    def shown(ch: str) -> str:
        if ch == "\t" or unicodedata.category(ch) not in ("Cc", "Zl", "Zp"):
            return ch
        return repr(ch)[1:-1]

    return "".join(map(shown, text)) if not text.isprintable() else text
