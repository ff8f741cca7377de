"""Helpers shared by the benchmark scripts: the instance manifest and the shared data folder."""

from __future__ import annotations

import csv
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("BNILP_SHARED_DATA", ROOT.parent / "shared" / "data"))

for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(var, "1")


def table1(max_n: int | None = None, names: list[str] | None = None) -> list[dict[str, str]]:
    """Rows of ``instances/table1.csv`` (filtered by n and/or name). A name that is no row's ends the script with
    the names there are (a typo printed an empty table and exit 0: a review)."""
    with open(ROOT / "instances" / "table1.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    unknown = sorted(set(names or ()) - {r["name"] for r in rows})
    if unknown:
        raise SystemExit(f"no Table 1 data set named {', '.join(map(repr, unknown))}; the names are: "
                         + ", ".join(sorted({r["name"] for r in rows})))
    if max_n is not None:
        rows = [r for r in rows if int(r["n"]) <= max_n]
    if names:
        rows = [r for r in rows if r["name"] in names]
    return rows


def data_path(row: dict[str, str]) -> Path:
    return SHARED_DATA / row["data"]


def all_columns(path: Path) -> list[str]:
    """Every column of an integer-coded Table 1 file (some have more than 10 codes: discrete all the same)."""
    with open(path, encoding="utf-8") as handle:
        first = handle.readline()
    width = len(first.split(",")) if "," in first else len(first.split())
    return [str(j) for j in range(width)]


def run_script(main: Callable[[], Any]) -> None:
    """Run a script's ``main`` and exit with its return code; bad input — a missing file, a file bnilp refuses
    (:class:`bnilp.errors.InputError`) — is one line on stderr and exit 2, not a traceback (a review)."""
    from bnilp.errors import InputError

    try:
        code = main()
    except (InputError, OSError) as exc:
        where = "" if isinstance(exc, InputError) or not exc.filename else f"{exc.filename}: "
        why = exc if isinstance(exc, InputError) else exc.strerror or exc
        print(f"{Path(sys.argv[0]).name}: error: {where}{why}", file=sys.stderr)
        sys.exit(2)
    sys.exit(code)
