"""Calibration of the likelihood-ratio CI tests (bnilp.citest): type-I error and power.

For every score's test (BIC, CG, MVP) and every combination of a discrete (d) or continuous (c)
X and Y and a conditioning set Z that is empty, one discrete or one continuous variable, data come
from ``bnilp.simulate.sample_dag`` (the simulator's parameter draws, fresh per replicate):

- null:        Z → X, Z → Y            (X ⟂ Y | Z holds)
- alternative: Z → X, Z → Y, X → Y     (X and Y dependent given Z)

and ``ci_test(data, "X", "Y", ["Z"])`` is run at N = 200 and 1,000. Discrete variables have 3
states, continuous parents of discrete children act through 3 equal-frequency bins. The table
gives the rejection rate at α = 0.01 and 0.05 under the null (type-I error, with its Monte Carlo
standard error) and under the alternative (power), and the reference each test's null replicates were
referred to ("null": χ², local perm., or mixed with the share permuted — ``null="auto"`` decides per data
set; a one-direction test's p-value is always χ²'s). BIC is a discrete-only score, so its rows have no
continuous variable. MVP is not score-equivalent: both directions are tested (bnilp's default)
and both one-direction tests are reported too (``mvp:X|Y`` = X as the child).

    OPENBLAS_NUM_THREADS=1 python benchmarks/citest_calibration.py --reps 1000 --jobs 2 [--scores cgd --bins 4]
                                                     [--link logistic] [--only ddc,cdc] [--correction none]
                                                     [--null chi2]

The p-values are ``ci_test``'s defaults: ``null="auto"`` (a local permutation reference in the cells
with a discrete tested variable and a continuous Z, χ² elsewhere); ``--null chi2`` gives the χ²
reference everywhere (the seed's test). A test rejects when p ≤ α.

``--bins`` changes the simulator's bins (3 by default, as CGd's b = 3: then CGd models the discrete
children of continuous parents exactly; other values show it misspecified). ``--link logistic``
draws discrete children of continuous parents through a softmax link instead of the seed's steps
(``bnilp.simulate``). ``--only`` runs some cells (codes X Y Z, ``n`` for no Z).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import time

import numpy as np
from joblib import Parallel, delayed

from bnilp.citest import CORRECTIONS, NULL_DISTRIBUTIONS, ci_test
from bnilp.data import from_dataframe
from bnilp.scores import make_score
from bnilp.simulate import DEFAULT_LINK, LINKS, sample_dag

KINDS = ("d", "c")
CONDITIONING = ("none", "d", "c")
SAMPLE_SIZES = (200, 1000)
ALPHAS = (0.01, 0.05)
SCORES = ("bic", "cg", "mvp")          # the tests; ``--scores`` adds e.g. cgd
KIND_NAMES = {"d": "discrete", "c": "continuous"}


def combinations() -> list[tuple[str, str, str]]:
    return [(x, y, z) for x, y, z in itertools.product(KINDS, KINDS, CONDITIONING)]


def _code(combo: tuple[str, str, str]) -> str:
    """A cell as three letters, X Y Z (``n``: no Z): ``ddc``, ``cdn``."""
    return combo[0] + combo[1] + combo[2][0]


def _applies(score: str, combo: tuple[str, str, str]) -> bool:
    return score != "bic" or "c" not in combo


def one_replicate(combo: tuple[str, str, str], N: int, dependent: bool, seed: int,
                  scores: tuple[str, ...] = SCORES, bins: int = 3, link: str = DEFAULT_LINK,
                  correction: str = "bartlett", null: str = "auto") -> dict[str, tuple[float, str]]:
    """(p-value, reference distribution used) of every applicable test on one simulated data set."""
    x, y, z = combo
    parents: dict[str, list[str]] = {}
    kinds = {"X": KIND_NAMES[x], "Y": KIND_NAMES[y]}
    if z != "none":
        parents["Z"] = []
        kinds["Z"] = KIND_NAMES[z]
    given = ["Z"] if z != "none" else []
    parents["X"] = list(given)
    parents["Y"] = given + (["X"] if dependent else [])
    for attempt in range(20):
        frame = sample_dag(parents, kinds, N, seed=seed * 1000 + attempt, bins=bins, link=link)
        if all(frame[v].nunique() > 1 for v in frame):
            break
    discrete = [v for v, k in kinds.items() if k == "discrete"]
    data = from_dataframe(frame, discrete=discrete, continuous=[v for v in kinds if v not in discrete])
    out: dict[str, tuple[float, str]] = {}
    for score in scores:
        if not _applies(score, combo):
            continue
        scorer = make_score(score, data)
        res = ci_test(data, "X", "Y", given, score=scorer, correction=correction, null=null, seed=seed)
        out[score] = (res.p_value, res.null)
        if score in ("mvp", "cgd"):
            for d in res.directions:
                out[f"{score}:{d.child}|{d.parent}"] = (d.p_value, "chi2")   # a direction's p is never permuted
    return out


def run(reps: int, jobs: int, seed: int, scores: tuple[str, ...] = SCORES, bins: int = 3,
        link: str = DEFAULT_LINK, only: tuple[str, ...] = (), correction: str = "bartlett",
        null: str = "auto") -> list[dict]:
    tasks = [(combo, N, dep, seed + r, scores, bins, link, correction, null)
             for combo in combinations() for N in SAMPLE_SIZES for dep in (False, True)
             for r in range(reps) if not only or _code(combo) in only]
    results = Parallel(n_jobs=jobs, batch_size=16)(delayed(one_replicate)(*t) for t in tasks)
    rows: dict[tuple, dict] = {}
    for (combo, N, dep, *_), pv in zip(tasks, results, strict=True):
        for test, (p, used) in pv.items():
            key = (test, *combo, N)
            row = rows.setdefault(key, {"test": test, "X": combo[0], "Y": combo[1], "Z": combo[2], "N": N,
                                        "null_p": [], "alt": [], "used": []})
            row["alt" if dep else "null_p"].append(p)
            if not dep:
                row["used"].append(used)
    table = []
    for row in rows.values():
        null_p, alt = np.array(row.pop("null_p")), np.array(row.pop("alt"))
        used = row.pop("used")
        # the reference the null replicates were referred to (``auto`` resolved per data set by ci_test)
        row["permuted_share"] = used.count("local-permutation") / len(used)
        row["null"] = used[0] if len(set(used)) == 1 else "mixed"
        for a in ALPHAS:
            row[f"size@{a}"] = float(np.mean(null_p <= a))      # ci_test rejects when p ≤ α
            row[f"power@{a}"] = float(np.mean(alt <= a))
        row["reps"] = int(null_p.size)
        row["mc_se@0.05"] = math.sqrt(0.05 * 0.95 / null_p.size)
        table.append(row)
    order = {s: i for i, s in enumerate(["bic", "cg", "mvp", "mvp:X|Y", "mvp:Y|X", "cgd", "cgd:X|Y", "cgd:Y|X"])}
    table.sort(key=lambda r: (order[r["test"]], r["X"], r["Y"], r["Z"], r["N"]))
    return table


def _null_label(row: dict) -> str:
    """The reference as the README's table writes it: χ², local perm., or mixed with the permuted share."""
    if row["null"] == "mixed":
        return f"mixed {100 * row['permuted_share']:.0f}% perm"
    return {"chi2": "χ²", "local-permutation": "local perm."}.get(row["null"], row["null"])


def print_table(table: list[dict], scores: tuple[str, ...] = SCORES) -> None:
    print(f"{'test':9} {'X':>2} {'Y':>2} {'Z':>5} {'N':>5} {'null':>12} {'size@.01':>9} {'size@.05':>9} "
          f"{'power@.01':>10} {'power@.05':>10}  note")
    for r in table:
        note = ""
        if r["N"] == 1000 and r["test"] in scores and not 0.03 <= r["size@0.05"] <= 0.07:
            note = "outside [0.03, 0.07]"
        print(f"{r['test']:9} {r['X']:>2} {r['Y']:>2} {r['Z']:>5} {r['N']:>5} {_null_label(r):>12} "
              f"{r['size@0.01']:9.3f} {r['size@0.05']:9.3f} {r['power@0.01']:10.3f} {r['power@0.05']:10.3f}  {note}")
    decisions = [r for r in table if r["test"] in scores and r["N"] == 1000]
    inside = sum(0.03 <= r["size@0.05"] <= 0.07 for r in decisions)
    print(f"\nN = 1,000: {inside} of {len(decisions)} tests have type-I error at α = 0.05 in [0.03, 0.07] "
          f"(Monte Carlo SE {table[0]['mc_se@0.05']:.4f} at {table[0]['reps']} replicates)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000, help="replicates per cell (null and alternative each)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="also write the table as JSON here")
    parser.add_argument("--scores", default=",".join(SCORES), help="tests to calibrate (also: cgd)")
    parser.add_argument("--bins", type=int, default=3,
                        help="equal-frequency bins through which a continuous parent acts on a discrete child")
    parser.add_argument("--link", choices=LINKS, default=DEFAULT_LINK,
                        help="how a discrete child depends on a continuous parent (bnilp.simulate.LINKS)")
    parser.add_argument("--correction", choices=CORRECTIONS, default="bartlett",
                        help="bartlett (bnilp's default) or none (the plain G of the seed and Tetrad)")
    parser.add_argument("--null", choices=NULL_DISTRIBUTIONS, default="auto",
                        help="reference distribution (bnilp's default auto: local permutation where a discrete "
                             "tested variable is modelled given a continuous Z; chi2: the seed's)")
    parser.add_argument("--only", default="", help="cells to run, as XYZ codes (e.g. ddc,cdc); default all")
    args = parser.parse_args()
    scores = tuple(s for s in args.scores.split(",") if s)
    t0 = time.perf_counter()
    only = tuple(c for c in args.only.split(",") if c)
    cells = sorted({_code(combo) for combo in combinations()})
    unknown = [c for c in only if c not in cells]
    if unknown:         # no cell ran: print_table met an empty table (IndexError, a review)
        parser.error(f"--only: no cell {', '.join(unknown)}; the cells are {', '.join(cells)}")
    table = run(args.reps, args.jobs, args.seed, scores, args.bins, args.link, only, args.correction, args.null)
    print_table(table, scores)
    print(f"{time.perf_counter() - t0:.0f} s with --jobs {args.jobs}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(table, handle, indent=1)


if __name__ == "__main__":
    main()
