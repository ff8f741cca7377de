"""User-facing errors: the CLI turns these into one line on stderr and exit code 2."""

from __future__ import annotations


class BnilpError(Exception):
    """Bad input (file, option, data). The message names file, line and column where known."""


class InputError(BnilpError):
    """A data or score file that cannot be used as it is."""
