"""Helpers shared by the benchmark scripts: the instance manifest and the shared data folder."""

from __future__ import annotations

import csv
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("BNILP_SHARED_DATA", ROOT.parent / "shared" / "data"))

for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(var, "1")


def table1(max_n: int | None = None, names: list[str] | None = None) -> list[dict[str, str]]:
    """Rows of ``instances/table1.csv`` (filtered by n and/or name)."""
    with open(ROOT / "instances" / "table1.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
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
