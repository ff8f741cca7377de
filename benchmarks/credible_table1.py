"""Credible-set benchmark (the seed's Table 1, BIC): DAGs, MECs and time per row vs Liao et al.

For each data set and BF: score (BIC, no palim), prove OPT, enumerate every DAG within the BF
(cap 150,000 networks as in the seed), group into MECs. Prints our counts next to the paper's,
the search time (solve only, like the seed's T, which excludes scoring) next to the seed's T,
the ratio, and networks/second of enumeration. A time limit marks a row incomplete.

    python benchmarks/credible_table1.py [--max-n 17] [--bf 3,20,150] [--only wine,zoo] [--time-limit 900]
"""

from __future__ import annotations

import argparse
import math
import time

from common import data_path, table1

from bnilp.data import load_data
from bnilp.parentsets import score_parent_sets
from bnilp.pipeline import solve_table
from bnilp.scores import make_score


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-n", type=int, default=17)
    parser.add_argument("--bf", default="3,20,150")
    parser.add_argument("--only", default="")
    parser.add_argument("--time-limit", type=float, default=900.0)
    parser.add_argument("--max-networks", type=int, default=150_000)
    args = parser.parse_args()
    rows = table1(args.max_n, [s for s in args.only.split(",") if s])
    head = (f"{'data':<12} {'BF':>4} {'DAGs':>8} {'paper':>8} {'MECs':>7} {'paper':>7} {'score s':>8} "
            f"{'solve s':>8} {'paper T':>8} {'T ratio':>8} {'nets/s':>8} {'status':<14}")
    print(head)
    print("-" * len(head))
    for row in rows:
        data = load_data(data_path(row), no_header=True)
        score = make_score("bic", data)
        for bf in (int(b) for b in args.bf.split(",")):
            eps = math.log(bf)
            t0 = time.perf_counter()
            table = score_parent_sets(score, epsilon=eps)
            t1 = time.perf_counter()
            result = solve_table(table, epsilon=eps, time_limit=args.time_limit, max_networks=args.max_networks)
            t2 = time.perf_counter()
            rep = result.report
            paper_t = row[f"T{bf}"]
            ratio = f"{(t2 - t1) / float(paper_t):>8.2f}" if paper_t not in ("", "OT") else f"{'':>8}"
            rate = rep["n_networks"] / max(t2 - t1, 1e-9)
            status = rep["status"] + ("" if rep["complete"] else " (incomplete)")
            print(f"{row['name']:<12} {bf:>4} {rep['n_networks']:>8} {row[f'G{bf}'] or '—':>8} {rep['n_mecs']:>7} "
                  f"{row[f'M{bf}'] or '—':>7} {t1 - t0:>8.2f} {t2 - t1:>8.2f} {paper_t or '—':>8} {ratio} "
                  f"{rate:>8.1f} {status:<14}", flush=True)


if __name__ == "__main__":
    main()
