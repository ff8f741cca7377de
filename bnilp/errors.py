"""User-facing errors: the CLI turns these into one line on stderr and exit code 2 (3 for :class:`LimitError`)."""

from __future__ import annotations


class BnilpError(Exception):
    """Bad input (file, option, data). The message names file, line and column where known."""


class InputError(BnilpError):
    """A data or score file that cannot be used as it is."""


class LimitError(BnilpError):
    """A resource limit (memory) stopped the work before it had a result to report (CLI exit code 3)."""
