"""Would the BDeu bounds of Correia, Cussens & de Campos (2020) prune the walks that R6 does not stop?

Their bounds on the BDeu score of every superset Π′ ⊇ Π refine R6 (each non-empty cell costs ≥ ln r) through
*atoms*: a configuration of Π together with all the columns a superset could still add. A configuration of
any superset is a union of atoms, so an atom whose rows hold two or more child states stays impure in every
superset and costs more than ln r per state there; a pure atom costs ln r whatever the superset. Where every
atom is pure, their bounds are no tighter than R6 (their Lemma 5 term vanishes, and their likelihood bound is
then −q⁺·ln r, R5). In the lattice walk the columns a superset can add are all the other variables, so an
atom is a group of rows equal on every column but the child. This prints, per data set, how many rows lie
in impure atoms (per child: median, largest, children with any): where it is 0 the bounds cannot fire
beyond R6. No timing; reads the Table 1 files in place.

    python benchmarks/bdeu_atoms.py [--min-n 25]
"""

from __future__ import annotations

import argparse

import numpy as np
from common import data_path, run_script, table1

from bnilp.data import load_data


def impure_atom_rows(codes: np.ndarray, child: int) -> int:
    """Rows whose values on every column but ``child`` equal another row's that has another child state."""
    rest = np.delete(codes, child, axis=1)
    _, group = np.unique(rest, axis=0, return_inverse=True)
    group = group.ravel()
    pairs = np.unique(np.stack([group, codes[:, child]], axis=1), axis=0)
    states = np.bincount(pairs[:, 0], minlength=group.max() + 1)
    return int((states[group] > 1).sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--min-n", type=int, default=25)
    args = parser.parse_args()
    largest = max(int(row["n"]) for row in table1())
    if args.min_n > largest:        # an empty table and exit 0 (a review)
        parser.error(f"--min-n {args.min_n}: no Table 1 data set has that many variables (the most: {largest})")
    print("| data | n | N | distinct rows | rows in impure atoms, per child: median | largest | children with any |")
    print("|---|---|---|---|---|---|---|")
    for row in table1():
        if int(row["n"]) < args.min_n:
            continue
        data = load_data(data_path(row), no_header=True, integer_codes=True)
        codes = data.codes   # constant columns dropped: they add nothing to an atom
        rows = [impure_atom_rows(codes, c) for c in range(codes.shape[1])]
        distinct = len(np.unique(codes, axis=0))
        print(f"| {row['name']} | {codes.shape[1]} | {codes.shape[0]:,} | {distinct:,} | {int(np.median(rows))} | "
              f"{max(rows)} | {sum(r > 0 for r in rows)} |", flush=True)


if __name__ == "__main__":
    run_script(main)
