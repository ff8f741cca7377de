"""Scoring benchmark (issue: discrete scoring): bnilp's pruned walk vs eBNSL's scoring settings.

For each Table 1 data set (default n ≤ 20): BIC, BF 20, no palim. Prints seconds, parent sets
scored and kept, and how many sets eBNSL's settings keep (R1 only, prune gap ln BF,
palim = ⌊log2(N + ln BF)⌋ + 1), computed with the same walk restricted to R1 and that palim
(skipped past --ebnsl-budget seconds). With --write, saves the score files to scorefiles/.

    python benchmarks/score_table1.py [--max-n 20] [--bf 20] [--only wine,zoo] [--write]
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import time

from common import ROOT, data_path, table1

from bnilp.data import load_data
from bnilp.parentsets import score_parent_sets
from bnilp.scorefile import write_jaakkola
from bnilp.scores import make_score


def _ebnsl_count(path: str, eps: float, palim: int, queue: mp.Queue) -> None:
    data = load_data(path, no_header=True)
    table = score_parent_sets(make_score("bic", data), epsilon=eps, palim=palim, rules={"R1"})
    queue.put((table.n_parent_sets(), table.meta["scored"]))


def ebnsl_kept(path: str, eps: float, palim: int, budget: float) -> tuple[int, int] | None:
    """(kept, scored) under eBNSL's settings, or None past the time budget."""
    queue: mp.Queue = mp.Queue()
    proc = mp.Process(target=_ebnsl_count, args=(path, eps, palim, queue))
    proc.start()
    proc.join(budget)
    if proc.is_alive():
        proc.terminate()
        proc.join()
        return None
    return queue.get()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-n", type=int, default=20)
    parser.add_argument("--bf", type=float, default=20.0)
    parser.add_argument("--only", default="")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--ebnsl-budget", type=float, default=120.0)
    parser.add_argument("--write", action="store_true", help="write scorefiles/NAME.BIC.BF.scores")
    args = parser.parse_args()
    eps = math.log(args.bf)
    rows = table1(args.max_n, [s for s in args.only.split(",") if s])
    print(f"BIC, BF {args.bf:g} (ε = {eps:.4f}), no palim; eBNSL: R1 only, palim ⌊log2(N+ln BF)⌋+1")
    head = f"{'data':<12} {'n':>3} {'N':>6} {'seconds':>8} {'scored':>9} {'kept':>7} {'eBNSL palim':>11} " \
           f"{'eBNSL kept':>10} {'kept ratio':>10}"
    print(head)
    print("-" * len(head))
    for row in rows:
        path = data_path(row)
        t0 = time.perf_counter()
        data = load_data(path, no_header=True)
        table = score_parent_sets(make_score("bic", data), epsilon=eps, n_jobs=args.jobs)
        seconds = time.perf_counter() - t0
        if args.write:
            write_jaakkola(table, ROOT / "scorefiles" / f"{row['name']}.BIC.{args.bf:g}.scores")
        palim = int(math.floor(math.log2(data.N + eps))) + 1
        ref = ebnsl_kept(str(path), eps, palim, args.ebnsl_budget)
        ref_kept = f"{ref[0]:>10}" if ref else f"{'>budget':>10}"
        ratio = f"{table.n_parent_sets() / ref[0]:>10.3f}" if ref else f"{'':>10}"
        print(f"{row['name']:<12} {data.n:>3} {data.N:>6} {seconds:>8.2f} {table.meta['scored']:>9} "
              f"{table.n_parent_sets():>7} {palim:>11} {ref_kept} {ratio}", flush=True)


if __name__ == "__main__":
    main()
