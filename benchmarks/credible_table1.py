"""Credible-set benchmark (the seed's Table 1, BIC): DAGs, MECs and time per row vs Liao et al.

For each data set and BF: score (BIC, no palim), prove OPT, then enumerate the credible set — every
DAG (``--enumerate dags``, cap 150,000 networks as in the seed) or one representative per
equivalence class with its DAGs counted from the CPDAG (``--enumerate mecs``; the cap then counts
classes; with ``--count-past-cap`` it only limits the classes reported in full, and the DAG and class
columns count every class found). Prints our DAG and class counts next to the paper's, the search time (solve only, like
the seed's T, which excludes scoring) next to the seed's T, the ratio, and DAGs/second.

The paper's |M| is not a class count: it groups DAGs by skeleton and *all* colliders, shielded ones
too (``../shared/data/README.md``). Where DAGs were listed (``dags`` mode or ``--compare``), the
column "seed key" gives that grouping of our DAGs, beside the true class count. ``--compare`` runs
both modes on the same score table and checks that the DAG and class counts agree.

    python benchmarks/credible_table1.py [--max-n 17] [--bf 3,20,150] [--only wine,zoo] [--time-limit 900]
                                         [--enumerate mecs|dags|auto] [--compare] [--count-past-cap]
                                         [--jobs 2] [--search-jobs 2] [--save-dir DIR] [--load-dir DIR]
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from pathlib import Path

from common import all_columns, data_path, table1

from bnilp.data import load_data
from bnilp.ilp import DEFAULT_MAX_NETWORKS
from bnilp.parentsets import score_parent_sets
from bnilp.pipeline import ENUMERATE_CHOICES, solve_table
from bnilp.scorefile import read_jaakkola, write_jaakkola
from bnilp.scores import make_score


def seed_key(parents: dict) -> tuple:
    """The seed's |M| grouping: skeleton plus every collider a → c ← b (shielded or not)."""
    skel = frozenset(frozenset((p, c)) for c, ps in parents.items() for p in ps)
    colliders = frozenset((a, c, b) for c, ps in parents.items() for a, b in itertools.combinations(sorted(ps), 2))
    return skel, colliders


def _run(table, eps: float, mode: str, args: argparse.Namespace):
    t = time.perf_counter()
    result = solve_table(table, epsilon=eps, time_limit=args.time_limit, max_networks=args.max_networks,
                         enumerate_by=mode, jobs=args.search_jobs,
                         count_past_cap=args.count_past_cap and mode != "dags")
    return result, time.perf_counter() - t


def _load_saved(path: Path, data, eps: float):
    """A table ``--save-dir`` wrote, refused unless its sidecar says it is BIC on these data (rows, columns)
    pruned for this ε: a file copied or left from another BF gave the other BF's counts, said as this one's."""
    table = read_jaakkola(path)
    meta = table.meta
    made = (meta.get("score"), meta.get("N"), meta.get("n_variables"), meta.get("epsilon"))
    if made[:3] != ("bic", data.N, len(data.names)) or made[3] is None or not math.isclose(made[3], eps):
        sys.exit(f"{path}: made for score {made[0]}, N {made[1]}, {made[2]} variables, ε {made[3]} (no sidecar: "
                 f"all None), not BIC on these data at ε {eps}: score it again (drop --load-dir or save anew)")
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-n", type=int, default=17)
    parser.add_argument("--bf", default="3,20,150")
    parser.add_argument("--only", default="")
    parser.add_argument("--time-limit", type=float, default=900.0)
    parser.add_argument("--max-networks", type=int, default=DEFAULT_MAX_NETWORKS)
    parser.add_argument("--enumerate", dest="mode", choices=ENUMERATE_CHOICES, default="mecs")
    parser.add_argument("--count-past-cap", action="store_true",
                        help="class mode lists on past --max-networks classes (counted compactly); the totals of "
                             "every class found are printed under the row")
    parser.add_argument("--compare", action="store_true", help="also enumerate DAGs and check the counts agree")
    parser.add_argument("--jobs", type=int, default=1,
                        help="processes for scoring (the search is one process unless --search-jobs; the "
                             "forward pass of its dynamic programme takes a thread per core, DP_THREADS)")
    parser.add_argument("--search-jobs", type=int, default=1,
                        help="processes for phase 2 by branch-and-cut (bnilp.ilp.cubes; from 30 variables)")
    parser.add_argument("--save-dir", default="", help="write each score table there as NAME_bfBF.jkl (with its "
                                                      "sidecar, which --load-dir checks)")
    parser.add_argument("--load-dir", default="", help="read NAME_bfBF.jkl from there where it exists instead of "
                                                      "scoring (\"score s\" is then the time to read it)")
    args = parser.parse_args()
    rows = table1(args.max_n, [s for s in args.only.split(",") if s])
    head = (f"{'data':<12} {'BF':>4} {'mode':>4} {'DAGs':>8} {'paper':>8} {'MECs':>7} {'seed key':>8} {'paper':>7} "
            f"{'score s':>8} {'solve s':>8} {'paper T':>8} {'T ratio':>8} {'DAGs/s':>9} {'dags s':>8} "
            f"{'agree':>5} {'OPT':>10} {'status':<14}")
    print(head)
    print("-" * len(head))
    for row in rows:
        data = load_data(data_path(row), no_header=True, discrete=all_columns(data_path(row)))
        score = make_score("bic", data)
        for bf in (int(b) for b in args.bf.split(",")):
            eps = math.log(bf)
            t0 = time.perf_counter()
            saved = Path(args.load_dir) / f"{row['name']}_bf{bf}.jkl" if args.load_dir else None
            if saved is not None and saved.exists():
                table = _load_saved(saved, data, eps)
            else:
                table = score_parent_sets(score, epsilon=eps, n_jobs=args.jobs)
            t_score = time.perf_counter() - t0
            if args.save_dir:
                write_jaakkola(table, Path(args.save_dir) / f"{row['name']}_bf{bf}.jkl")
            result, t_solve = _run(table, eps, args.mode, args)
            rep = result.report
            mode = rep["enumerate"]
            key = "—"
            if mode == "dags":
                key = str(len({seed_key(n.parents) for n in result.solution.networks}))
            dags_s, agree = "", ""
            if args.compare and mode == "mecs":
                listed, t_dags = _run(table, eps, "dags", args)
                key = str(len({seed_key(n.parents) for n in listed.solution.networks}))
                dags_s = f"{t_dags:.2f}" + ("" if listed.complete else "*")
                if listed.complete and result.complete:
                    agree = "yes" if (listed.report["n_networks"] == rep["n_networks"]
                                      and listed.report["n_mecs"] == rep["n_mecs"]) else "NO"
            paper_t = row[f"T{bf}"]
            ratio = f"{t_solve / float(paper_t):>8.2f}" if paper_t not in ("", "OT") else f"{'':>8}"
            # every class found (the compact tail past the cap included) where the report has it
            n_dags, n_mecs = rep.get("posterior_dags", rep["n_networks"]), rep.get("posterior_classes", rep["n_mecs"])
            rate = n_dags / max(t_solve, 1e-9)
            status = rep["status"] + ("" if rep["complete"] else " (incomplete)")
            gap = result.solution.gap
            proven = "proven" if gap is not None and gap <= 1e-9 * max(1.0, abs(result.solution.optimum or 0.0)) \
                else f"gap {gap:.3g}"
            print(f"{row['name']:<12} {bf:>4} {mode:>4} {n_dags:>8} {row[f'G{bf}'] or '—':>8} "
                  f"{n_mecs:>7} {key:>8} {row[f'M{bf}'] or '—':>7} {t_score:>8.2f} {t_solve:>8.2f} "
                  f"{paper_t or '—':>8} {ratio} {rate:>9.1f} {dags_s:>8} {agree:>5} {proven:>10} {status:<14}",
                  flush=True)
            p2 = result.solution.stats.get("phase2", {})
            if "which hold" in (result.solution.message or ""):     # the class cap cut a complete listing
                print(f"{'':<12} {'':>4} all credible (peeling listed them all; the report holds the best "
                      f"{rep['n_mecs']:,} classes): {p2['dags_listed']:,} DAGs in {p2['classes_found']:,} classes; "
                      f"peeling {p2['seconds']:.1f} s of the {t_solve:.1f} s", flush=True)
            elif rep.get("posterior_classes", 0) > rep["n_mecs"]:     # counted past the cap
                whole = "all credible" if rep["status"] == "network_limit" else "all found (incomplete)"
                print(f"{'':<12} {'':>4} {whole} (the report holds the best {rep['n_mecs']:,} classes): "
                      f"{rep['posterior_dags']:,} DAGs in {rep['posterior_classes']:,} classes", flush=True)
            if not rep["complete"]:            # where the search stopped, and what the report took after it
                stop = p2.get("memory_stop")
                why = (f"; stopped by the memory guard: {stop['free_bytes'] / 2**30:.2f} GiB free, "
                       f"{stop['needed_bytes'] / 2**30:.2f} GiB kept for the report" if stop else "")
                print(f"{'':<12} {'':>4} search {result.solution.seconds:.1f} s, report "
                      f"{t_solve - result.solution.seconds:.1f} s{why}", flush=True)


if __name__ == "__main__":
    main()
