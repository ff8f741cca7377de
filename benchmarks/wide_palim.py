"""Wide data at a small parent limit, end to end: scoring, search and report seconds and the peak memory.

    OPENBLAS_NUM_THREADS=1 python benchmarks/wide_palim.py [--nodes 1000,3000] [--samples 200] [--bf 3]
        [--palim 1] [--cap 100] [--jobs 2] [--tiers 0] [--time-limit 600]

Data: ``bnilp.simulate`` (discrete, 2–3 categories, average degree 1.5, seed 7), BIC at the BF with the palim,
then ``solve_table`` in class mode with the cap. Each size runs in a fresh interpreter, so "peak GB" is that
size's own maximum resident memory. At palim 1 the classes are forests (:mod:`bnilp.ilp.forests`); "search s"
is both phases, "report s" the rest of ``solve_table`` (class counts, shares, posteriors). ``--tiers K`` splits
the variables into K tiers of consecutive columns (no arrow from a later tier to an earlier one): the table then
holds some arrows one way only, and the classes are listed by :mod:`bnilp.ilp.branchings`.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time


def _one(n: int, args: argparse.Namespace) -> dict:
    from bnilp.data import from_dataframe
    from bnilp.knowledge import Knowledge, restrict_table
    from bnilp.parentsets import score_parent_sets
    from bnilp.pipeline import solve_table
    from bnilp.scores import make_score
    from bnilp.simulate import simulate

    frame, _ = simulate(n, args.samples, 1.5, max_degree=5, discrete_fraction=1.0, categories=(2, 3), seed=7)
    data = from_dataframe(frame, discrete=list(frame.columns))
    eps = math.log(args.bf)
    t0 = time.perf_counter()
    table = score_parent_sets(make_score("bic", data), epsilon=eps, palim=args.palim, n_jobs=args.jobs)
    knowledge = None
    if args.tiers > 1:
        names = list(frame.columns)
        knowledge = Knowledge(tiers=[names[i * n // args.tiers:(i + 1) * n // args.tiers] for i in range(args.tiers)])
        table = restrict_table(table, knowledge)
    t1 = time.perf_counter()
    result = solve_table(table, epsilon=eps, enumerate_by="mecs", max_networks=args.cap, knowledge=knowledge,
                         time_limit=args.time_limit)
    t2 = time.perf_counter()
    sol = result.solution
    search = sol.stats["phase1"]["seconds"] + sol.stats.get("phase2", {}).get("seconds", 0.0)
    return {"n": n, "families": table.meta["scored"], "kept": table.n_parent_sets(), "score_s": t1 - t0,
            "search_s": search, "report_s": (t2 - t1) - search, "classes": len(sol.networks),
            "method": sol.stats["phase1"].get("method", "—"), "status": sol.status,
            "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", default="1000,3000")
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--bf", type=float, default=3.0)
    ap.add_argument("--palim", type=int, default=1)
    ap.add_argument("--cap", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--tiers", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--one", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(_one(args.one, args)))
        return
    print("| variables | families scored | kept | score s | search s (phase 1 by) | report s | classes, status | "
          "peak GB |")
    print("|---|---|---|---|---|---|---|---|")
    for n in (int(x) for x in args.nodes.split(",")):
        cmd = [sys.executable, __file__, "--one", str(n), "--samples", str(args.samples), "--bf", str(args.bf),
               "--palim", str(args.palim), "--cap", str(args.cap), "--jobs", str(args.jobs), "--tiers", str(args.tiers)]
        if args.time_limit is not None:
            cmd += ["--time-limit", str(args.time_limit)]
        r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
        print(f"| {r['n']:,} | {r['families']:,} | {r['kept']:,} | {r['score_s']:.1f} | {r['search_s']:.2f} "
              f"({r['method']}) | {r['report_s']:.1f} | {r['classes']:,}, {r['status']} | {r['peak_gb']:.2f} |",
              flush=True)


if __name__ == "__main__":
    main()
