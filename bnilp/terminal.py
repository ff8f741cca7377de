"""The terminal: rich consoles that print the data's names as they are written."""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console
from rich.table import Table

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


def lossless(table: Table) -> Table:
    """``table`` with every column folding its cells onto more lines where the width is short, instead of cutting
    them to "…": a terminal of 80 columns showed the scoring table's counts as "1456…" and one of 40 left most of
    its figures blank (found by a review)."""
    for column in table.columns:
        column.overflow = "fold"
    return table
