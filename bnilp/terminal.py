"""The terminal: rich consoles that print the data's names as they are written."""

from __future__ import annotations

from typing import Any

from rich.console import Console


def plain_console(**kwargs: Any) -> Console:
    """A rich ``Console`` (``kwargs`` go to it) that prints names as they are written: no emoji codes — a
    variable named ``:warning:`` stays text, not ⚠ (rich replaces them in every string it prints, markup or
    not). Every terminal output of the package is printed through one; a name that goes into a table or a
    styled line goes as a :class:`rich.text.Text` (no markup: ``rich.markup.escape`` doubles a trailing
    backslash, and ``x\\`` showed as ``x\\\\``)."""
    return Console(emoji=False, **kwargs)
