"""Data loading: a typed, validated, integer-coded data set.

Inputs: CSV/TSV (delimiter sniffed), GOBNILP ``.dat`` (names line, optional arities line where
``-`` marks a continuous column), and pandas DataFrames. Discrete columns are coded 0..r−1 with
r = the number of *distinct observed* values (GOBNILP's rule with ``arities = FALSE``; codes in a
file need not be contiguous). Continuous columns are float64.

Bad input raises :class:`bnilp.errors.InputError` naming file, line and column. A constant column
is not an error: it carries no information, and as a child every parent set would tie with ∅, so
it is left out of the network and reported in ``Dataset.dropped``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import math
import numbers
import os
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from decimal import Decimal, InvalidOperation
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bnilp.errors import InputError, check_flag, check_path, not_utf8, warn_at_caller
from bnilp.inputs import read_input_bytes

DISCRETE = "discrete"
CONTINUOUS = "continuous"

#: an all-integer column with at most this many distinct values is taken as discrete
MAX_INFERRED_LEVELS = 10
#: with ``integer_codes`` (a discrete-only score, no type options) a column of integers in 0..this is
#: discrete whatever its number of codes (Table 1 files code states as small non-negative integers)
MAX_INTEGER_CODE = 1000
#: ``--discrete all``: every column is discrete
ALL_COLUMNS = "all"
#: the parameter (and the command line's flag) that lists extra missing-value tokens, as messages name it
MISSING_PARAMETER = "missing (--missing)"
#: a column of numbers except for at most this many distinct other tokens ("?", "nan", "NA", "-", "n/a")
#: is numeric with probable missing values — an error, not a many-state discrete variable — when those
#: tokens fill at most STRAY_SHARE of the rows, or fewer than half of them while the numbers alone
#: would be inferred continuous
MAX_STRAY_TOKENS = 3
STRAY_SHARE = 0.1
#: an inferred discrete column with more states than this is reported even with -q (likely a mistake)
MANY_STATES = 20
#: a discrete column with a distinct value on every row, from this many rows on, is warned about (an identifier)
MIN_ROWS_IDENTIFIER = 20


@dataclass
class Dataset:
    """Typed columns of one data set (constant columns already removed).

    ``codes[:, j]`` holds the 0..r_j−1 codes of discrete column j (−1 for continuous columns);
    ``values[:, j]`` holds the floats of continuous column j (NaN for discrete columns).
    """

    names: list[str]
    kinds: list[str]
    codes: np.ndarray
    values: np.ndarray
    arities: list[int]
    levels: list[list[str]]
    source: str = "<memory>"
    #: the SHA-256 of the file read (hex, as ``sha256sum`` gives it); None for data not read from a file
    sha256: str | None = None
    dropped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: likely mistakes in reading the file that no rule can settle (shown even with ``-q``, kept in sidecars)
    warnings: list[str] = field(default_factory=list)
    #: rows left out for a missing value (``drop_missing``): the data set is their complete rows
    rows_dropped_missing: int = 0

    def __eq__(self, other: object) -> bool:
        """Every field equal, the arrays element by element (NaN equal to NaN; the generated ``==`` compared
        arrays: "truth value … ambiguous")."""
        if not isinstance(other, Dataset):
            return NotImplemented
        return (all(getattr(self, f.name) == getattr(other, f.name) for f in fields(self)
                    if f.name not in ("codes", "values"))
                and np.array_equal(self.codes, other.codes)
                and np.array_equal(self.values, other.values, equal_nan=True))

    __hash__ = None         # mutable, as the generated dataclass is

    def __repr__(self) -> str:
        """A summary (the generated repr printed both arrays)."""
        discrete = sum(k == DISCRETE for k in self.kinds)
        return (f"Dataset({self.source!r}: {self.N} rows, {self.n} variables ({discrete} discrete, "
                f"{self.n - discrete} continuous), names={self.names[:8]!r}{'…' if self.n > 8 else ''}"
                f"{f', dropped={self.dropped!r}' if self.dropped else ''})")

    @property
    def n(self) -> int:
        """The number of variables (columns kept)."""
        return len(self.names)

    @property
    def N(self) -> int:  # noqa: N802 - the conventional name for the number of rows
        """The number of rows (samples)."""
        return int(self.codes.shape[0])

    def is_discrete(self, j: int) -> bool:
        return self.kinds[j] == DISCRETE

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise InputError(f"{self.source}: unknown variable {name!r} "
                             f"(known: {', '.join(self.names)})") from None

    @cached_property
    def twins(self) -> list[list[str]]:
        """Groups of discrete columns that are one-to-one recodings of each other (:func:`twin_columns`)."""
        return twin_columns(self)

    def columns(self, names: list[str]) -> Dataset:
        """The same rows with only the columns ``names`` (in the data's order; the dropped constant columns and
        the notes on the kept ones stay)."""
        wanted = set(names)
        keep = [j for j, nm in enumerate(self.names) if nm in wanted]
        return Dataset(names=[self.names[j] for j in keep], kinds=[self.kinds[j] for j in keep],
                       codes=np.ascontiguousarray(self.codes[:, keep]),
                       values=np.ascontiguousarray(self.values[:, keep]),
                       arities=[self.arities[j] for j in keep], levels=[self.levels[j] for j in keep],
                       source=self.source, sha256=self.sha256, dropped=list(self.dropped),
                       notes=[nt for nt in self.notes if nt.split(":", 1)[0] in wanted], warnings=list(self.warnings),
                       rows_dropped_missing=self.rows_dropped_missing)

    def discrete_indices(self) -> list[int]:
        return [j for j, k in enumerate(self.kinds) if k == DISCRETE]

    def continuous_indices(self) -> list[int]:
        return [j for j, k in enumerate(self.kinds) if k == CONTINUOUS]

    def describe(self) -> dict:
        """Plain summary for sidecars and reports."""
        return {
            "data": self.source,
            **({"data_sha256": self.sha256} if self.sha256 else {}),
            "N": self.N,
            "variables": list(self.names),
            "kinds": dict(zip(self.names, self.kinds, strict=True)),
            "arities": {nm: r for nm, r, k in zip(self.names, self.arities, self.kinds, strict=True)
                        if k == DISCRETE},
            **({"rows_dropped_missing": self.rows_dropped_missing} if self.rows_dropped_missing else {}),
            "dropped_constant": list(self.dropped),
            "twin_columns": self.twins,
            **({"warnings": list(self.warnings)} if self.warnings else {}),
        }


def twin_columns(data: Dataset) -> list[list[str]]:
    """Groups of discrete columns that are one-to-one recodings of each other ("twins").

    Columns X and Y are twins when x_r ↦ y_r is a bijection over the rows: they induce the same
    partition of the rows and have the same arity, so every partition-based local score (BIC, BDeu,
    and the discrete parts of CG/CGd/MVP) gives a family with parent X the same score as with Y, and
    X and Y as children the same scores given the same parents. Every network then has twins with X
    and Y exchanged in any of their roles, so credible sets hold many exactly tied networks (a child of
    X may take Y instead, independently for each child that is not an ancestor of Y: up to 2^k
    networks for k such children).

    Test: relabel each column's codes by the order of their first appearance (a canonical form of
    its partition); two columns are twins iff their canonical forms and their arities are equal. The
    arity is the column's r, which a ``.dat`` file may declare above the states observed (r counts in
    every score's penalty and prior, so columns split alike but declared with 2 and 3 states score apart).
    O(n·N log N) time, 4 bytes a discrete cell while it runs; groups of two or more, in column order.
    """
    groups: dict[tuple[int, bytes], list[str]] = {}
    for j in data.discrete_indices():
        _, first, inverse = np.unique(data.codes[:, j], return_index=True, return_inverse=True)
        canonical = np.argsort(np.argsort(first)).astype(np.int32)[inverse]
        groups.setdefault((data.arities[j], canonical.tobytes()), []).append(data.names[j])
    return [g for g in groups.values() if len(g) > 1]


def _split_list(cols: str | list[str] | None, name: str) -> list[str]:
    """Names from a comma-separated list (``--discrete a,b``), read as a CSV row so that a name holding a comma
    can be given in double quotes (``'"Weight, kg",Sex'``), or from a list as given (each item by ``str``, as
    column labels are named); anything else — a lone label such as ``0`` — is an :class:`InputError` naming
    ``name``, the parameter (``0`` was a ``TypeError`` from the loop)."""
    if cols is None:
        return []
    if isinstance(cols, str):
        return [c.strip() for c in next(csv.reader([cols], skipinitialspace=True), []) if c.strip()]
    if isinstance(cols, (bytes, Mapping)) or not isinstance(cols, Iterable):
        raise InputError(f"{name} must be a list of names or one comma-separated string, got {cols!r}"
                         + (f" (as a list: [{cols!r}])" if isinstance(cols, numbers.Integral)
                            and not isinstance(cols, bool) else ""))
    return [str(c) for c in cols]


def flag_value(*names: str) -> str:
    """``names`` as they go after ``--discrete``/``--continuous``/``--missing`` on a shell command line: a
    comma-separated list, each item in double quotes when it holds a comma or a quote (:func:`_split_list`), then
    the whole quoted for the shell where needed."""
    items = (f'"{name.replace(chr(34), chr(34) * 2)}"' if ("," in name or '"' in name) else name for name in names)
    return shlex.quote(",".join(items))


#: the delimiters :func:`_sniff_delimiter` tries, in the order that breaks ties
DELIMITERS = ("\t", ",", ";", "|")
#: the rows :func:`_sniff_delimiter` parses to see whether a delimiter gives every row one field count
SNIFF_ROWS = 50


def _sniff_delimiter(sample: str, path: str) -> str | None:
    """The delimiter (tab, comma, semicolon, bar) or ``None`` = whitespace. Each candidate splits the first
    rows as the reader will, quotes included, so a delimiter inside a quoted name (``"Weight, kg";"Sex"``)
    does not count: the delimiter whose header has the most fields (at least 2) among those that give each of
    the first :data:`SNIFF_ROWS` rows as many fields as the header, else (ragged rows, reported by the reader
    with their line) the one whose header has the most fields; ties go by :data:`DELIMITERS`' order."""
    # the reader's line breaks only: str.splitlines also breaks at U+0085, U+2028 … inside a field (a review: a name
    # holding one sniffed a ragged file and the reader's error named the wrong line)
    lines = [ln for ln in re.split(r"\r\n|\r|\n", sample) if ln.strip()]
    if not lines:
        raise InputError(f"{path}: the file is empty")
    head = "\n".join(lines[:SNIFF_ROWS + 1])
    if len(lines) > SNIFF_ROWS + 1 or len(sample) >= 65536:     # the last line may be cut short: not counted
        head = "\n".join(lines[:max(1, min(SNIFF_ROWS + 1, len(lines) - 1))])
    fields: dict[str, tuple[int, bool]] = {}
    for delim in DELIMITERS:
        try:
            rows = [len(cells) for cells in csv.reader(io.StringIO(head), delimiter=delim, skipinitialspace=True)
                    if cells]
        except csv.Error:
            continue
        if rows and rows[0] >= 2:
            fields[delim] = (rows[0], all(n == rows[0] for n in rows))
    if not fields:
        return None
    consistent = [d for d in fields if fields[d][1]]
    pool = consistent or list(fields)
    return max(pool, key=lambda d: (fields[d][0], -DELIMITERS.index(d)))


def _read_table(path: str, delimiter: str | None) -> tuple[list[list[str]], list[int], str]:
    """Rows of string cells, the file line (1-based) each starts on — a quoted cell may span lines — and the
    file's SHA-256 (hex; ``sha256sum`` gives the same). Blank lines before the first row and after the last are
    skipped (blank lines between rows are kept: they are rows of missing cells). A UTF-8 byte-order mark (Excel's
    "CSV UTF-8") is not part of the first name."""
    try:
        raw = read_input_bytes(path)
        text = raw.decode("utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise not_utf8(path, exc) from None
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc})") from None
    digest = hashlib.sha256(raw).hexdigest()
    del raw
    as_read = text                      # a quoted cell keeps its CR or CRLF as written (pandas' reader does too)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise InputError(f"{path}: the file is empty")
    # Python 3.10's csv module refuses a NUL character: the sniffer then fell back to whitespace and the error
    # named the wrong column. Read through a stand-in character the text does not hold, the NUL put back after.
    nul = "\x00" in text and next(chr(c) for c in range(0xE000, 0x110000) if chr(c) not in text)
    if nul:
        text, as_read = text.replace("\x00", nul), as_read.replace("\x00", nul)
    if delimiter is None:
        delimiter = _sniff_delimiter(text[:65536], path)
        if delimiter is None:
            _check_comment_line(text, path)
    rows: list[list[str]] = []
    starts: list[int] = []
    lines = text.split("\n")
    if delimiter is None:
        for number, line in enumerate(lines, start=1):
            rows.append(_whitespace_cells(line))
            starts.append(number)
    else:
        # strict: a quote never closed (or text after a closing quote) is an error, not a cell that swallows the rest
        # (the lines as read: csv ends a record at CR, LF or CRLF outside quotes, and counts them as the
        # normalised text does)
        # (a quote after spaces opens a quoted cell, as one at the cell's start: ``1, "x"`` is the state x)
        reader = csv.reader(io.StringIO(as_read, newline=""), delimiter=delimiter, strict=True,
                            skipinitialspace=True)
        end = 0
        try:
            for cells in reader:
                rows.append(list(map(str.strip, cells)))
                starts.append(end + 1)
                end = reader.line_num
        except csv.Error as exc:        # e.g. a cell past the csv module's field size limit
            raise InputError(_csv_error(exc, path, end + 1, lines[end:], delimiter, rows[0] if rows else None)) \
                from None
    if nul:
        rows = [[c.replace(nul, "\x00") for c in row] for row in rows]
    if not any(any(row) for row in rows):
        raise InputError(f"{path}: the file holds no values")
    blank = [len(row) <= 1 and not any(row) for row in rows]     # a line of delimiters is a row of missing cells
    lo = blank.index(False)
    hi = len(rows) - blank[::-1].index(False)
    return rows[lo:hi], starts[lo:hi], digest


#: a cell of a whitespace-separated line: in double quotes (a doubled quote inside is one quote; whitespace inside
#: is the cell's), ending at whitespace or the line's end — as R's ``write.table`` writes names and labels — or a run
#: of characters that are not whitespace
_WHITESPACE_CELL = re.compile(r'"((?:[^"]|"")*)"(?=\s|$)|(\S+)')


def _whitespace_cells(line: str) -> list[str]:
    """The cells of ``line`` of a file separated by whitespace (no delimiter sniffed), quotes respected as in a
    CSV: ``"a b" "x"`` is the two cells ``a b`` and ``x`` (the quotes were kept in names and labels: a quoted
    number column became discrete). A quote that does not make a whole quoted cell (``5"``, ``"x``, ``"x"y``) is
    part of its cell, as before: GOBNILP's ``.dat`` files have no quoting, and such labels read there."""
    if '"' not in line:                 # nearly every line: no quote, the cells are what str.split gives
        return line.split()
    return [plain if plain is not None else quoted.replace('""', '"')
            for quoted, plain in (match.groups() for match in _WHITESPACE_CELL.finditer(line))]


def _check_comment_line(text: str, path: str) -> None:
    """A first line starting with ``#`` that no delimiter splits, above lines a delimiter does (``#exported``
    over a CSV): bnilp reads no comment lines, and with it the sniffer chose whitespace and every line was
    one cell of a single column ('a,b', '1,x'), with no error. One line naming it."""
    lines = [(number, line) for number, line in enumerate(text.split("\n"), start=1) if line.strip()]
    if len(lines) > 1 and lines[0][1].lstrip().startswith("#") \
            and _sniff_delimiter("\n".join(line for _, line in lines[1:SNIFF_ROWS + 2]), path) is not None:
        raise InputError(f"{path}:{lines[0][0]}: {lines[0][1].strip()[:40]!r} reads like a comment line, which "
                         "bnilp does not skip: remove it (the names line comes first)")


def _csv_error(exc: csv.Error, path: str, line: int, lines: list[str], delimiter: str,
               names: list[str] | None) -> str:
    """The message of the csv module's error ``exc`` on the record starting at ``line`` (``lines``: the text
    from there), naming its column, found by scanning the record as the reader does: the cell whose quote is
    never closed, the one with text after its closing quote (``"x" ,``, ``"x"y``), or the one past the csv
    module's field size limit."""
    why, limit = str(exc), csv.field_size_limit()
    field, size, quoted, after_quote, blank = 0, 0, False, False, True
    record = "\n".join(lines)
    k = 0
    while k < len(record):
        if quoted:                          # to the next quote at once (a quote never closed: the rest of the file)
            close = record.find('"', k)
            size += (len(record) if close < 0 else close) - k + 1
            if close < 0 or size > limit:
                break
            k = close
            if record[k + 1:k + 2] == '"':
                k += 1
            else:
                quoted, after_quote = False, True
            k += 1
            continue
        char = record[k]
        size += 1
        if size > limit:
            break
        if char == delimiter:
            field, size, after_quote, blank = field + 1, 0, False, True
        elif char == "\n":
            break
        elif after_quote:
            text = re.split(f"[{re.escape(delimiter)}\n]", record[k:k + 40], maxsplit=1)[0]
            why = f"text after the closing quote of a quoted cell: {text!r}"
            break
        elif char == '"' and blank:
            quoted, blank = True, False
        elif char != " ":
            blank = False
        k += 1
    if quoted and "unexpected end of data" in why:
        why = "a quoted cell on this line is never closed (unexpected end of data)"
    column = f"column {names[field]!r}" if names is not None and field < len(names) else f"field {field + 1}"
    return f"{path}:{line}: {column}: {why}"


#: how a data file is read (``fmt``, ``--format``): by its name and second line, as CSV, or as GOBNILP's .dat
DATA_FORMATS = ("auto", "csv", "dat")
#: the largest magnitude a continuous value may have: its square must stay a float (the scores' variances)
MAX_CONTINUOUS_MAGNITUDE = 1e150
#: the smallest standard deviation a continuous column may have (unless it is constant, and then left out): its
#: variance, and the floor of 10⁻⁸ of it that MVP and MML put under a residual variance, must stay normal floats —
#: a column of values near 1e-200 had a variance of 0 and MVP took the logarithm of 0
MIN_CONTINUOUS_SD = 1e-140
_COMMA_NUMBER = re.compile(r"[+-]?[0-9]+(?:,[0-9]+)?")


def _check_dat_arity_line(cells: list[str], names: list[str], path: str, line: int, fmt: str) -> None:
    """A ``.dat`` file's second line is its arity line (GOBNILP's format): one whose cells are all integers or
    ``-`` but not all positive arities (``2 0 3``) was read as a data row, inventing states — an error naming
    the cell. With ``--format dat`` the line must be an arity line; a ``.dat`` named file of other values on
    its second line (pygobnilp's continuous ``gaussian.dat``) is data."""
    if _looks_like_arity_line(cells) and len(cells) == len(names):
        return
    integers = all(c == "-" or re.fullmatch(r"[+-]?[0-9]+", c) for c in cells)
    if not (fmt == "dat" or integers):
        return
    if len(cells) != len(names):
        raise InputError(f"{path}:{line}: the arity line has {len(cells)} fields for {len(names)} columns")
    j = next(j for j, c in enumerate(cells) if not (c == "-" or (c.isascii() and c.isdigit() and int(c) > 0)))
    raise InputError(f"{path}:{line}: arity line, column {names[j]!r}: {cells[j]!r} is no arity (a positive integer, "
                     "or '-' for a continuous column)"
                     + ("; give fmt='csv' (--format csv) if the file has no arity line" if fmt != "dat" else ""))


def _looks_like_arity_line(cells: list[str]) -> bool:
    return bool(cells) and all(c == "-" or (c.isascii() and c.isdigit() and int(c) > 0) for c in cells)


def load_data(
    path: str | os.PathLike[str],
    *,
    no_header: bool = False,
    discrete: str | list[str] | None = None,
    continuous: str | list[str] | None = None,
    delimiter: str | None = None,
    missing: str | list[str] | None = None,
    fmt: str = "auto",
    integer_codes: bool = False,
    drop_missing: bool = False,
) -> Dataset:
    """Load a CSV/TSV or GOBNILP ``.dat`` file into a :class:`Dataset`.

    ``no_header`` names the columns ``0..n−1`` (as GOBNILP does). ``fmt`` is ``auto``, ``csv`` or
    ``dat``; with ``auto`` a second line of positive integers and ``-`` is an arity line when the
    file ends in ``.dat``, or when the line holds a ``-`` and the file does not end in ``.csv`` (a CSV's
    ``-`` is more often a missing value); a column with more distinct values than its declared arity
    is an error. ``missing`` lists extra tokens (e.g. ``?``)
    that mean a missing value; an empty cell always does. Missing values are an error, unless ``drop_missing``
    leaves out every row that holds one (complete-case analysis, :func:`complete_rows`).
    ``discrete="all"`` makes every column discrete but those ``continuous`` names, and ``continuous="all"`` the
    other way round (a column named ``all`` is that column). ``integer_codes`` (for a discrete-only score
    with no type options) takes a column of integers in 0..:data:`MAX_INTEGER_CODE` as discrete
    whatever its number of distinct values.
    """
    if isinstance(path, pd.DataFrame):
        raise InputError("load_data reads a file: from_dataframe(df) reads a DataFrame")
    path = check_path(path, "path")
    no_header = check_flag(no_header, "no_header (--no-header)")
    integer_codes, drop_missing = _data_flags(integer_codes, drop_missing)
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '"\r\n'):
        raise InputError(f"delimiter must be one character other than a quote or a line break (or None: "
                         f"sniffed), got {delimiter!r}")
    if not isinstance(fmt, str) or fmt not in DATA_FORMATS:
        raise InputError(f"fmt (--format) must be one of {', '.join(DATA_FORMATS)}, got {fmt!r}")
    rows, lines, digest = _read_table(path, delimiter)
    names_line = lines[0]
    if no_header:
        names = [str(j) for j in range(len(rows[0]))]
    else:
        names = rows[0]
        rows, lines = rows[1:], lines[1:]
    declared: list[str] | None = None
    declared_line = 0
    csv_named = path.lower().endswith(".csv")
    if rows and (fmt == "dat" or (fmt == "auto" and path.lower().endswith(".dat"))):
        _check_dat_arity_line(rows[0], names, path, lines[0], fmt)
    if rows and fmt != "csv" and _looks_like_arity_line(rows[0]) and len(rows[0]) == len(names):
        if fmt == "dat" or path.lower().endswith(".dat") or ("-" in rows[0] and not csv_named):
            declared, declared_line = rows[0], lines[0]
            rows, lines = rows[1:], lines[1:]
    if not rows:
        raise InputError(f"{path}: no data rows")
    width = len(names)
    if drop_missing:    # a blank line between rows is a row of missing cells (README): left out as such (a review);
        # short of fields and blank — a full row of quoted spaces (states of a whitespace-separated file) stays
        rows = [[""] * width if len(row) < width and not "".join(row).strip() else row for row in rows]
    for line, row in zip(lines, rows, strict=True):
        if len(row) != width:
            raise InputError(f"{path}:{line}: expected {width} fields, found {len(row)}")
    left_out = 0
    if drop_missing:
        tokens = _missing_tokens(missing)
        keep = complete_rows(np.array([[c in tokens for c in row] for row in rows], dtype=bool), path)
        left_out = len(rows) - len(keep)
        rows, lines = [rows[i] for i in keep], [lines[i] for i in keep]
    frame = pd.DataFrame(rows, columns=range(width), dtype=str)
    kinds_hint: dict[str, str] = {}
    declared_states: dict[str, int] = {}
    if declared is not None:
        for j, (name, token) in enumerate(zip(names, declared, strict=True)):
            kinds_hint[name] = CONTINUOUS if token == "-" else DISCRETE
            if token == "-":
                continue
            arity = declared_states[name] = int(token)
            states = len(pd.unique(frame[j]))
            if states > arity:          # the states as coded: '0' and '00' are one state
                cells = frame[j].to_numpy(dtype=str)
                states = len(_code_labels(cells, _numbers(cells))[0])
            if states > arity:
                raise InputError(f"{path}:{declared_line}: column {name!r} is declared with {token} states in the "
                                 f"arity line but holds {states} distinct values (if line {declared_line} is data, "
                                 "give fmt='csv' (--format csv))")
    data = _build(frame, names, path, lines, discrete, continuous, missing, kinds_hint, integer_codes, names_line,
                  declared_states)
    if not no_header and _all_numbers(names) and names not in ([str(j) for j in range(width)],
                                                                  [str(j + 1) for j in range(width)]):
        data.warnings.append(f"{path}:{names_line}: every name in the names line is a number ("
                             f"{', '.join(names[:3])}{', …' if width > 3 else ''}): if the file has no names line, "
                             "give --no-header (no_header=True; its first row was read as the names)")
    if no_header and _first_row_looks_like_names(frame):
        data.warnings.append(f"{path}:{lines[0]}: with --no-header the first row is data, yet each of its values "
                             "occurs only there in its column while the other rows repeat theirs: is it a names "
                             "line? (then leave out --no-header, no_header=True)")
    data.sha256 = digest
    data.rows_dropped_missing = left_out
    return _warned(data)


def _data_flags(integer_codes: object, drop_missing: object) -> tuple[bool, bool]:
    """:func:`load_data`'s and :func:`from_dataframe`'s on/off settings as bools (``drop_missing="no"`` dropped
    rows: any true value was taken as on)."""
    return (bool(check_flag(integer_codes, "integer_codes")),
            bool(check_flag(drop_missing, "drop_missing (--drop-missing)")))


def _missing_tokens(missing: str | list[str] | None) -> set[str]:
    """The cells that mean a missing value: the empty cell and the tokens of ``missing`` (``--missing``)."""
    return {""} | set(_split_list(missing, MISSING_PARAMETER))


#: what a missing-value error adds
MISSING_HINT = ("bnilp needs complete data: impute it, or leave out the rows that have one (load_data or "
                "from_dataframe with drop_missing=True, --drop-missing)")


def complete_rows(missing: np.ndarray, source: str) -> np.ndarray:
    """The rows (indices) with no missing cell, given the (rows × columns) ``missing`` mask — *complete-case
    analysis*: the scores are then those of the complete rows, which estimate the full data's network without
    bias only where values are missing completely at random (Little & Rubin 2019, §3.2); where missingness
    depends on the values, the network of the complete rows can differ. An :class:`InputError` when none is
    complete."""
    keep = np.flatnonzero(~missing.any(axis=1))
    if len(keep) == 0:
        raise InputError(f"{source}: every row has a missing value: drop_missing (--drop-missing) leaves no data")
    return keep


def dropped_rows_text(data: Dataset) -> str:
    """What the command line says of the rows ``drop_missing`` left out (:func:`complete_rows`)."""
    k = data.rows_dropped_missing
    return (f"left out {k} of {data.N + k} rows with a missing value (--drop-missing): N = {data.N}, the complete rows "
            "— sound where values are missing completely at random")


def constant_column_text(name: str) -> str:
    """What the command line and :class:`bnilp.errors.DataWarning` say of a constant column left out."""
    return f"column {name!r} is constant: left out of the network"


def twin_columns_text(group: list[str]) -> str:
    """What the command line and :class:`bnilp.errors.DataWarning` say of twin columns (:func:`twin_columns`)."""
    return (f"columns {', '.join(map(repr, group))} are one-to-one recodings of each other: they score alike in "
            "every role, so networks come in tied twins with them exchanged and credible sets multiply (drop all "
            "but one to avoid it; `bnilp count` counts such a set without listing it)")


def _warned(data: Dataset) -> Dataset:
    """``data``, once each of its :attr:`Dataset.warnings`, its constant columns left out and its twin columns
    (:func:`twin_columns`) are issued as :class:`bnilp.errors.DataWarning`: through the API they were only
    in the result (``dataset.warnings``, ``report["scoring"]``) and a notebook showed nothing (a review)."""
    messages = list(data.warnings)
    messages += [f"{data.source}: {constant_column_text(name)}" for name in data.dropped]
    messages += [f"{data.source}: {twin_columns_text(group)}" for group in data.twins]
    for message in messages:             # naming the caller's line: the first frame outside bnilp
        warn_at_caller(message)
    return data


def _all_numbers(names: list[str]) -> bool:
    """Whether every name reads as a number (a data row read as the names line, or positional names)."""
    try:
        return all(math.isfinite(float(name)) for name in names)
    except ValueError:
        return False


def _first_row_looks_like_names(frame: pd.DataFrame) -> bool:
    """Every column's first cell occurs nowhere else in it, while its other cells repeat (some value twice):
    the mark of a names line read as data. Continuous columns, whose values rarely repeat, cannot say;
    so at least one column must repeat and none may contradict."""
    if len(frame) < 3:
        return False
    repeats = False
    for j in frame.columns:
        column = frame[j]
        first, rest = column.iloc[0], column.iloc[1:]
        if (rest == first).any():
            return False
        repeats = repeats or bool(rest.duplicated().any())     # one repeating column is enough
    return repeats


def from_dataframe(
    df: pd.DataFrame,
    *,
    discrete: str | list[str] | None = None,
    continuous: str | list[str] | None = None,
    source: str = "<DataFrame>",
    integer_codes: bool = False,
    drop_missing: bool = False,
) -> Dataset:
    """A :class:`Dataset` from a pandas DataFrame (categorical and bool columns are discrete; every other column,
    text and object columns included, is typed by its values as :func:`load_data` types the CSV of the frame —
    a text column of numbers such as ``"0.125"`` is numbers, as pandas 3 leaves a column read with one ``?`` and
    then cleaned; labels are discrete; ``integer_codes`` as for :func:`load_data`). The variables are named by
    ``str(label)`` of the column labels (integer labels 0, 1, … give names '0', '1', …, as a score file's are);
    labels equal as strings are refused as duplicates. A missing cell (NA, None, NaN, NaT, or text empty once
    stripped) is an error, unless ``drop_missing`` leaves out its row (:func:`complete_rows`)."""
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"{source}: df must be a pandas DataFrame, got {type(df).__name__}")
    integer_codes, drop_missing = _data_flags(integer_codes, drop_missing)
    names = [str(c) for c in df.columns]
    if len(set(names)) < len(names):      # df[name] would be a frame, not a column
        first = next(i for i, nm in enumerate(names) if names.index(nm) < i)
        raise InputError(f"{source}: duplicate column name {names[first]!r} (columns {names.index(names[first]) + 1} "
                         f"and {first + 1})")
    if df.shape[1] == 0:
        raise InputError(f"{source}: no columns")
    if df.shape[0] == 0:
        raise InputError(f"{source}: no data rows")
    hints, orders = {}, {}
    rows = _row_names(df.index)
    texts, absent = {}, []
    category_codes: dict[str, tuple[np.ndarray, np.ndarray]] = {}      # checked in _build, on the rows kept
    for j, name in enumerate(names):        # by position: labels such as 1 and True are one key to df[...]
        col = df.iloc[:, j]
        if isinstance(col.dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(col.dtype):
            hints[name] = DISCRETE
        try:
            missing = _missing(col)
            if missing.any() and not drop_missing:
                raise InputError(f"{source}: {rows(int(np.flatnonzero(missing)[0]))}, column {name!r}: missing value "
                                 f"({MISSING_HINT})")
            absent.append(missing)
            if isinstance(col.dtype, pd.CategoricalDtype):
                # the cells and the order from one spelling of the categories, as a column of them is spelt
                # (pandas 2 spelt a datetime, a timedelta or a float32 category one way in the column and another
                # in its categories, and the order fell back to sorted)
                spelt = pd.Series(col.cat.categories).astype(str).str.strip().to_numpy(dtype=object)
                orders[name] = list(spelt)
                at = col.cat.codes.to_numpy()       # −1: missing (left out by drop_missing, else refused above)
                category_codes[name] = (spelt, at)
                texts[j] = pd.Series(np.append(spelt, "")[np.where(at >= 0, at, len(spelt))], dtype=object)
            else:                           # as a CSV's cells are read: ' a' and 'a' are one state, as in its CSV
                texts[j] = col.astype(str).str.strip().reset_index(drop=True)
        except (UnicodeDecodeError, ValueError, TypeError, ArithmeticError) as exc:
            raise InputError(f"{source}: column {name!r}: a value that cannot be read as text or a number "
                             f"({type(exc).__name__}: {exc})") from None
    frame, row_names, left_out = pd.DataFrame(texts), rows, 0
    if drop_missing:        # NA cells, and text cells empty once stripped (missing in a CSV, and in _build)
        keep = complete_rows(np.column_stack(absent) | (frame == "").to_numpy(dtype=bool), source)
        left_out = len(frame) - len(keep)
        frame = frame.iloc[keep].reset_index(drop=True)
        category_codes = {nm: (spelt, at[keep]) for nm, (spelt, at) in category_codes.items()}

        def row_names(r: int) -> str:       # the row as the caller's frame has it
            return rows(int(keep[r]))
    data = _build(frame, names, source, None, discrete, continuous, None, hints, integer_codes,
                  row_names=row_names, level_orders=orders, category_codes=category_codes)
    data.rows_dropped_missing = left_out
    return _warned(data)


def _check_categories_apart(spelt: np.ndarray, codes: np.ndarray, name: str, source: str) -> None:
    """Refuse a discrete categorical column two of whose observed categories (``codes``: the rows read, after any
    left out) would be one state once read as a CSV's cells are (stripped; numbers that are one number, ``1`` and
    ``01``, one state: :func:`_code_labels`): the dtype lists them as distinct states, and merging them silently
    changed the model (a review: categories ``"1"``, ``"01"``, ``"2"`` gave 2 states). Read as continuous, the
    values are numbers and nothing is merged."""
    used = [str(spelt[k]) for k in np.unique(codes[codes >= 0]) if str(spelt[k])]      # '' is a missing value
    numeric = _numbers(np.array(used, dtype=str))
    keys = ([_exact_number(u) for u in used] if used and not np.isnan(numeric).any() else used)
    first: dict = {}
    for label, key in zip(used, keys, strict=True):
        if key in first:
            raise InputError(f"{source}: column {name!r}: categories {first[key]!r} and {label!r} would be one state "
                             "(cells are read as a CSV's: stripped, and numbers equal as numbers one state); rename "
                             "one of them (df[col].cat.rename_categories)")
        first[key] = label


#: pandas before 2.2 (the floor is 2.1) swallows the error ``isna`` meets on ``Decimal('sNaN')`` and the value became
#: a state; from 2.2 ``isna`` raises it. Only there is an object column's every value looked at (a Python loop)
_SNAN_PASSES_ISNA = tuple(int(x) for x in pd.__version__.split(".")[:2]) < (2, 2)


def _missing(col: pd.Series) -> np.ndarray:
    """Where ``col`` is missing: NA, None, NaN, NaT — and a NaN that a nullable float column holds as a value
    (pandas 2's ``Float64``: 0/0 there is NaN, not NA, and ``isna`` passed it, so it became a state ``'nan'``)."""
    if _SNAN_PASSES_ISNA and col.dtype == object and any(isinstance(v, Decimal) and v.is_snan()
                                                         for v in col.to_numpy()):
        raise InvalidOperation("Decimal('sNaN') is a signalling NaN")
    missing = col.isna().to_numpy(dtype=bool)
    if pd.api.types.is_float_dtype(col.dtype) and not isinstance(col.dtype, np.dtype):
        missing = missing | np.isnan(col.to_numpy(dtype="float64", na_value=np.nan))
    return missing


def _numbers(cells: np.ndarray) -> np.ndarray:
    """Each cell's number: :func:`_cell_numbers` of each distinct cell (a column of 10⁶ rows holds few)."""
    codes, distinct = pd.factorize(cells)
    if 2 * len(distinct) >= len(cells):
        return _cell_numbers(cells)
    return _cell_numbers(np.asarray(distinct, dtype=cells.dtype))[codes]


def _cell_numbers(cells: np.ndarray) -> np.ndarray:
    """Each cell's number, NaN where it is none (``pd.to_numeric(errors="coerce")`` decides which cells are
    numbers), correctly rounded (NumPy's parse, as Python's ``float``): pandas 2's parser is not — a third of
    normal deviates written by ``repr`` came back one unit in the last place off, so a DataFrame's floats changed
    in :func:`from_dataframe` (a column of 10¹⁵ ± 1 lost its eighths: MVP 0.2 nats off), and one CSV gave other
    values, and other score files, under pandas 2 than under pandas 3; a number past the float range is ±inf
    (refused as such later), as pandas 3 and Python read it — pandas 2 read it as a label, with an exponent
    (``1e500``) or without (309 nines)."""
    numeric = np.array(pd.to_numeric(pd.Series(cells), errors="coerce"), dtype=float)     # a copy: written below
    ok = ~np.isnan(numeric)
    if ok.any():
        try:
            numeric[ok] = cells[ok].astype(np.float64)
        except ValueError:          # a form pandas reads and NumPy does not: pandas' value
            pass
    if not ok.all():    # pandas 2 reads a number past the float range ('1e500', 400 nines) as none; pandas 3 as inf
        rest = np.flatnonzero(~ok)
        codes, distinct = pd.factorize(cells[rest])     # a label column holds few distinct labels: match those
        big = rest[pd.Series(distinct).str.fullmatch(_DECIMAL_FORM).to_numpy(dtype=bool)[codes]]
        numeric[big] = cells[big].astype(np.float64)
    return numeric


#: a number in decimal notation, with or without an exponent (the forms of one past the float range); ASCII
#: digits only, as pandas reads numbers (Arabic-Indic ١ and full-width １ were read as 1: labels merged)
_DECIMAL_FORM = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*", re.ASCII)


def _plain_label(label: Any) -> Any:
    """An index label as Python writes it: a NumPy scalar as its Python value."""
    return label.item() if isinstance(label, np.generic) else label


def _row_names(index: pd.Index) -> Callable[[int], str]:
    """A DataFrame row for messages: its position, and its index label where that differs (a filtered or
    re-indexed frame: ``df.loc[label]`` finds it)."""
    default = isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1

    def name(r: int) -> str:
        label = index[r]
        # 12, not np.int64(12); a MultiIndex's (2, 0), not (np.int64(2), np.int64(0)) (a review)
        label = tuple(map(_plain_label, label)) if isinstance(label, tuple) else _plain_label(label)
        return f"row {r}" if default else f"row {r} (index {label!r})"
    return name


def _build(
    frame: pd.DataFrame,
    names: list[str],
    source: str,
    lines: list[int] | None,
    discrete: str | list[str] | None,
    continuous: str | list[str] | None,
    missing: str | list[str] | None,
    hints: dict[str, str],
    integer_codes: bool = False,
    names_line: int = 1,
    declared_states: dict[str, int] | None = None,
    row_names: Callable[[int], str] | None = None,
    level_orders: dict[str, list[str]] | None = None,
    category_codes: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
) -> Dataset:
    """Validate names and cells, decide kinds, code the columns (``lines``: each row's line in the file, for
    messages; None for a DataFrame, whose rows ``row_names`` names). ``declared_states``: a ``.dat`` file's
    arities (:func:`_with_declared`). ``level_orders``: a categorical column's categories, whose order the
    observed states keep (else states are sorted). ``category_codes``: a categorical column's spelt categories and
    each row's code (:func:`_check_categories_apart`, where the column is discrete)."""
    if lines is not None:
        def where(r: int) -> str:
            return f"{source}:{lines[r]}"
    else:
        def where(r: int) -> str:
            return f"{source}: {row_names(r) if row_names is not None else f'row {r}'}"
    header = f"{source}:{names_line}" if lines is not None else source     # a DataFrame has no names line
    seen: dict[str, int] = {}
    for j, name in enumerate(names):
        if not name:
            raise InputError(f"{header}: column {j + 1} has an empty name")
        if name in seen:
            raise InputError(f"{header}: duplicate column name {name!r} "
                             f"(columns {seen[name] + 1} and {j + 1})"
                             + ("; every name is a number: if the file has no names line, read it with "
                                "load_data(..., no_header=True) (--no-header)"
                                if lines is not None and _all_numbers(names) else ""))
        seen[name] = j
    want_discrete = _split_list(discrete, "discrete (--discrete)")
    want_continuous = _split_list(continuous, "continuous (--continuous)")
    discrete_all, continuous_all = ([ALL_COLUMNS] == want and ALL_COLUMNS not in seen
                                    for want in (want_discrete, want_continuous))
    if discrete_all and continuous_all:
        raise InputError(f"{source}: discrete and continuous (--discrete/--continuous) cannot both be 'all'")
    if discrete_all:            # every column, but those named continuous
        want_discrete = [name for name in names if name not in want_continuous]
    if continuous_all:
        want_continuous = [name for name in names if name not in want_discrete]
    for name in want_discrete + want_continuous:
        if name not in seen:
            raise InputError(f"{source}: unknown variable {name!r} in discrete/continuous (--discrete/--continuous) "
                             f"(known: {', '.join(names)})")
    both = set(want_discrete) & set(want_continuous)
    if both:
        raise InputError(f"{source}: {sorted(both)[0]!r} is named both discrete and continuous")
    missing_tokens = _missing_tokens(missing)
    N = len(frame)
    codes = np.full((N, len(names)), -1, dtype=np.int64)
    values = np.full((N, len(names)), np.nan)
    kinds, arities, levels, notes, dropped, keep = [], [], [], [], [], []
    warnings: list[str] = []
    for j, name in enumerate(names):
        # NumPy's strings below drop a trailing NUL: 'a' and 'a\x00' became one state (the distinct cells looked at,
        # by Python's hashing: pandas 2's pd.unique takes 'a\x00' for 'a' in an object column)
        if any("\x00" in str(u) for u in set(frame[j].tolist())):
            r = int(np.flatnonzero(frame[j].str.contains("\x00", regex=False).to_numpy(dtype=bool))[0])
            raise InputError(f"{where(r)}: column {name!r}: a NUL character in {str(frame[j].iloc[r])!r}")
        cells = frame[j].to_numpy(dtype=str)
        bad = np.isin(cells, list(missing_tokens))
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            if lines is not None and all(str(frame[k].iloc[r]).strip() == "" for k in range(len(names))):
                raise InputError(f"{where(r)}: the row holds no value at all (a line of delimiters alone, as a "
                                 "spreadsheet may leave below a table): delete it, or leave out such rows with "
                                 "drop_missing=True (--drop-missing)")
            raise InputError(f"{where(r)}: column {name!r}: missing value {str(cells[r])!r} ({MISSING_HINT})")
        numeric = _numbers(cells)
        if name in want_discrete:
            kind, why = DISCRETE, "given"
        elif name in want_continuous:
            kind, why = CONTINUOUS, "given"
        elif hints.get(name) in (DISCRETE, CONTINUOUS):
            kind, why = hints[name], "declared"
        elif np.isnan(numeric).any():
            _check_stray_tokens(cells, numeric, name, where, [t for t in _split_list(missing, MISSING_PARAMETER) if t],
                                in_file=lines is not None)
            kind, why = DISCRETE, "non-numeric values"
            if _decimal_commas(cells):
                example = str(cells[np.char.find(cells, ",") >= 0][0])
                warnings.append(f"{source}: column {name!r} reads like numbers with decimal commas ("
                                f"{example!r}): taken as labels, one state per "
                                "distinct value; bnilp reads decimal points (convert the file, or give "
                                f"--discrete {flag_value(name)}, discrete=[{name!r}], to keep it as labels)")
        elif not np.isfinite(numeric).all():   # 'inf', '-Infinity': numbers no state should be; one-line error below
            kind, why = CONTINUOUS, "numeric"
        elif (np.all(numeric == np.round(numeric))
              and (floats := len(np.unique(numeric))) <= MAX_INFERRED_LEVELS
              and _exact_distinct(cells, floats) <= MAX_INFERRED_LEVELS):
            kind, why = DISCRETE, f"integers with ≤ {MAX_INFERRED_LEVELS} distinct values"
        elif integer_codes and np.all(numeric == np.round(numeric)) and numeric.min() >= 0 \
                and numeric.max() <= MAX_INTEGER_CODE:
            kind, why = DISCRETE, (f"integer codes 0..{MAX_INTEGER_CODE} with more than {MAX_INFERRED_LEVELS} "
                                   "values, discrete for a discrete-only score")
        else:
            kind, why = CONTINUOUS, "numeric"
        if kind == DISCRETE and category_codes and name in category_codes:
            _check_categories_apart(*category_codes[name], name, source)
        dtype = "categorical dtype" if name in (level_orders or {}) else "bool dtype"    # a frame's declaration
        if why == "declared":       # the file's own types are said too (a review: only the inferred ones were)
            notes.append(f"{name}: {kind} ({'declared in the arity line' if lines is not None else dtype})")
        elif why != "given":
            notes.append(f"{name}: {kind} ({why})")
        elif kind == CONTINUOUS and continuous_all and hints.get(name) == DISCRETE:
            declared = "in the arity line" if lines is not None else f"by its {dtype}"
            notes.append(f"{name}: continuous (declared discrete {declared}, read as numbers: every column "
                         "continuous)")
        if kind == CONTINUOUS:
            if np.isnan(numeric).any() or not np.isfinite(numeric).all():
                r = int(np.flatnonzero(~np.isfinite(numeric))[0])
                # a token that is no number is most likely a missing value: say how to leave its rows out (a review:
                # under --score bge the only hint was a mixed score)
                # (a DataFrame's reader takes no missing tokens, and a bool column holds no missing value: a review)
                hint = "" if not np.isnan(numeric[r]) else (
                    f" (a missing value? --missing {flag_value(str(cells[r]))} --drop-missing leaves its rows out; "
                    f"from Python missing={str(cells[r])!r}, drop_missing=True)") if lines is not None else \
                    " (booleans: a continuous column needs numbers — .astype(int) — or a mixed score, which reads " \
                    "it as discrete)" if set(np.unique(cells)) <= {"True", "False"} else \
                    " (a missing value? make those cells NA and read the frame with from_dataframe(..., " \
                    "drop_missing=True), which leaves their rows out)"
                raise InputError(f"{where(r)}: column {name!r} is continuous but holds {str(cells[r])!r}{hint}")
            if np.abs(numeric).max() > MAX_CONTINUOUS_MAGNITUDE:
                r = int(np.argmax(np.abs(numeric)))
                raise InputError(f"{where(r)}: column {name!r} holds {str(cells[r])!r}: continuous values beyond "
                                 f"±{MAX_CONTINUOUS_MAGNITUDE:g} overflow the scores' sums of squares (rescale the "
                                 "column)")
            if np.ptp(numeric) == 0:
                if _exact_distinct(cells, 1) > 1:      # one float, but the values differ past its 16 digits
                    apart = sorted(pd.unique(cells), key=_exact_number)
                    raise InputError(f"{source}: column {name!r} is continuous, and its values differ only past a "
                                     f"float's precision ({str(apart[0])!r} … {str(apart[-1])!r}): they would be "
                                     "read as one value (shift or rescale the column, or give it as discrete)")
                dropped.append(name)
                continue
            scale = float(np.max(np.abs(numeric)))      # > 0 here: the SD of values near 1e-200 underflowed to 0
            spread = float(np.std(numeric / scale)) * scale   # and the message said so (a review)
            if not spread >= MIN_CONTINUOUS_SD:
                raise InputError(f"{source}: column {name!r} is continuous with a standard deviation of {spread:.3g}: "
                                 f"below {MIN_CONTINUOUS_SD:g} its variance underflows the scores' arithmetic "
                                 "(rescale the column)")
            values[:, j] = numeric
            arities.append(0)
            levels.append([])
        else:
            labels, inverse = _code_labels(cells, numeric)
            if level_orders and name in level_orders:
                labels, inverse = _in_category_order(labels, inverse, level_orders[name])
            if declared_states and declared_states.get(name, 0) > len(labels):
                labels, inverse = _with_declared(labels, inverse, numeric, declared_states[name])
                notes.append(f"{name}: {len(labels)} states declared in the arity line, "
                             f"{len(np.unique(inverse))} observed (every declared state counts in r, as GOBNILP's)")
            if len(labels) < 2:
                dropped.append(name)
                continue
            codes[:, j] = inverse
            arities.append(len(labels))
            levels.append(labels)
            if why not in ("given", "declared") and len(labels) > MANY_STATES:
                notes[-1] += f", {len(labels)} states"
            if len(labels) == N >= MIN_ROWS_IDENTIFIER:
                warnings.append(f"{source}: column {name!r} has a distinct value on every one of its {N} rows: an "
                                "identifier? As a parent it makes a cell of every row and carries nothing about "
                                "the others; leave it out of the file")
        kinds.append(kind)
        keep.append(j)
    if not keep:
        raise InputError(f"{source}: every column is constant; there is nothing to learn")
    return Dataset(
        names=[names[j] for j in keep],
        kinds=kinds,
        codes=np.ascontiguousarray(codes[:, keep]),
        values=np.ascontiguousarray(values[:, keep]),
        arities=arities,
        levels=levels,
        source=source,
        dropped=dropped,
        notes=notes,
        warnings=warnings,
    )


def _decimal_commas(cells: np.ndarray) -> bool:
    """Every cell a number written with a decimal comma (``1,5``, ``-0,25``) or an integer, and some with
    the comma: a European spreadsheet's measurements, which would otherwise pass silently for labels."""
    return bool(np.char.find(cells, ",").max() >= 0) and all(_COMMA_NUMBER.fullmatch(c) for c in np.unique(cells))


def _check_stray_tokens(cells: np.ndarray, numeric: np.ndarray, name: str, where, given: list[str],
                        in_file: bool = True) -> None:
    """Refuse a column of numbers with a few non-numeric tokens (rule at :data:`MAX_STRAY_TOKENS`): they
    are probably missing values, and taking the column as discrete would silently turn a measurement
    into a variable with one state per distinct number. Mostly-label columns stay discrete. The error's
    ``--missing`` list holds the tokens ``given`` already and these (one suggestion to paste, not one a token); a
    DataFrame's (``in_file`` False) is told to make them NA, as :func:`from_dataframe` takes no ``missing``."""
    stray = np.isnan(numeric)
    tokens = list(dict.fromkeys(cells[stray].tolist()))
    share = float(stray.mean())
    if len(tokens) > MAX_STRAY_TOKENS or share >= 0.5:
        return
    numbers = numeric[~stray]
    continuous_alone = (not np.all(numbers == np.round(numbers))
                        or len(np.unique(numbers)) > MAX_INFERRED_LEVELS)
    if share > STRAY_SHARE and not continuous_alone:
        return
    r = int(np.flatnonzero(stray)[0])
    shown = ", ".join(repr(t) for t in tokens)
    listed = list(dict.fromkeys([*given, *tokens]))
    if in_file:
        leave = (f"leave them out with --missing {flag_value(*listed)} --drop-missing — from Python "
                 f"missing={','.join(listed)!r}, drop_missing=True")
        state = f"give --discrete {flag_value(name)} if {tokens[0]!r} is a state (discrete={name!r})"
    else:       # from_dataframe has no missing=: the cells are made NA (a review: the hint named a parameter it lacks)
        leave = ("make those cells NA and read the frame with from_dataframe(..., drop_missing=True), which leaves "
                 "their rows out")
        state = f"give discrete=[{name!r}] if {tokens[0]!r} is a state"
    raise InputError(f"{where(r)}: column {name!r} holds numbers except {shown} ({int(stray.sum())} of {stray.size} "
                     f"rows): a probable missing value, and bnilp needs complete data (impute those rows, or "
                     f"{leave}); {state}")


def _with_declared(labels: list[str], inverse: np.ndarray, numeric: np.ndarray,
                   r: int) -> tuple[list[str], np.ndarray]:
    """The states of a column whose ``.dat`` arity line declares ``r`` of them, more than it holds: GOBNILP and
    pygobnilp count every declared state in r (the BIC penalty's r − 1, BDeu's α/(q·r)), so the scores agree
    with theirs. Codes 0..r−1 written as integers make the states ``0``..``r−1`` (a code's state is itself);
    other labels keep theirs, followed by ``unobserved 1``, ``unobserved 2`` … — the numbers no observed label
    already holds (an observed ``unobserved 1`` made two states of one name, and BIF readers refuse those)."""
    if not np.isnan(numeric).any() and np.all(numeric == np.round(numeric)) and numeric.min() >= 0 \
            and numeric.max() < r:
        return [str(k) for k in range(r)], numeric.astype(np.int64)
    taken = set(labels)
    free = (name for name in (f"unobserved {k}" for k in itertools.count(1)) if name not in taken)
    extra = list(itertools.islice(free, r - len(labels)))
    return labels + extra, inverse


def _exact_distinct(cells: np.ndarray, floats: int) -> int:
    """The number of distinct numbers in ``cells`` (all numbers, ``floats`` distinct as floats), compared exactly:
    integers past 2**53 that one float holds are counted apart (counted as floats, 88 distinct integers near
    2**60 were "integers with ≤ 10 distinct values")."""
    strings = pd.unique(cells)
    return floats if len(strings) == floats else len({_exact_number(s) for s in strings})


def _code_labels(cells: np.ndarray, numeric: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Codes 0..r−1 in sorted label order (numeric order when every label is a number). Numbers are one
    state when they are one number (``1`` and ``1.0``, ``01234`` and ``1234``), compared exactly: labels
    that a float cannot tell apart (integers past 2**53 such as identifiers) stay apart."""
    if not np.isnan(numeric).any():
        uniq, inverse = np.unique(numeric, return_inverse=True)
        strings = pd.unique(cells)
        if len(strings) > len(uniq):        # some labels share a float: group them by their exact value
            exact = [_exact_number(s) for s in strings]
            if len(set(exact)) > len(uniq):
                rank = {v: k for k, v in enumerate(sorted(set(exact)))}
                code_of = {s: rank[v] for s, v in zip(strings, exact, strict=True)}
                inverse = np.array([code_of[c] for c in strings], dtype=np.int64)[pd.Index(strings).get_indexer(cells)]
                uniq = np.arange(len(rank))
        first = {}
        for label, code in zip(cells, inverse, strict=True):
            first.setdefault(int(code), label)
            if len(first) == len(uniq):
                break
        return [first[c] for c in range(len(uniq))], inverse.astype(np.int64)
    uniq, inverse = np.unique(cells, return_inverse=True)
    return [str(u) for u in uniq], inverse.astype(np.int64)


def _in_category_order(labels: list[str], inverse: np.ndarray, order: list[str]) -> tuple[list[str], np.ndarray]:
    """The states of a categorical column in its categories' order (``["lo", "mid", "hi"]``, not sorted), the
    codes renumbered alike; a state the categories lack (none should) keeps its place after them."""
    position = {c: k for k, c in enumerate(order)}
    new = sorted(range(len(labels)), key=lambda k: (position.get(labels[k], len(order)), k))
    code = np.empty(len(labels), dtype=np.int64)
    code[new] = np.arange(len(labels))
    return [labels[k] for k in new], code[inverse]


def _exact_number(text: str) -> Decimal:
    """The exact value of a numeric label (``pd.to_numeric`` read it as a number)."""
    try:
        return Decimal(text.strip())
    except InvalidOperation:        # a spelling pandas reads and Decimal does not: its float is all there is
        return Decimal(float(text))


def default_path(name: str) -> Path:
    """Path of a file bundled with the package (``bnilp/instances/``, package data: the ASIA instance of ``bnilp
    learn`` without DATA; the repository's ``instances/asia.csv`` links to it). It was looked for beside the
    package, in the repository, and a regular install had none."""
    return Path(__file__).resolve().parent / "instances" / name
