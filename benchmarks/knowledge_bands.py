"""Phase 1 in bands under knowledge rows (``search._optimum_in_bands``) against the whole table.

    OPENBLAS_NUM_THREADS=1 python benchmarks/knowledge_bands.py --only wine,zoo,hepatitis --kind dependent

For each Table 1 data set with n ≤ 22 (the programme runs there, and its best DAG through each family bounds the
bands) and each seed, scores the data with BIC at ``--bf`` under ``--count`` statements of ``--kind``
(conditional dependences or independences, Z of 0–2 other variables) that the unconstrained optimum breaks, then
times :func:`bnilp.pipeline.solve_table` on that table (the credible set, DAGs; ``--time-limit`` each) with the
bands (the default) and without (``settings.KNOWLEDGE_BAND_NATS`` 0, the code before), checking that both give
the same OPT and set. A
dependence switches pruning off, so its table holds every parent set (up to the default palim past 16
variables). Prints families, OPT below the unconstrained one, phase 1 and total seconds both ways, the rounds'
outcomes, and the geometric mean of the total-time ratios.
"""

from __future__ import annotations

import argparse
import math
import random
import time

import networkx as nx
from common import data_path, table1

from bnilp.data import load_data
from bnilp.errors import InputError
from bnilp.ilp import settings
from bnilp.knowledge import Knowledge
from bnilp.parentsets import score_parent_sets
from bnilp.pipeline import solve_table
from bnilp.scores import make_score


def _statements(names: list[str], best: dict, rng: random.Random, count: int, kind: str):
    """``count`` statements of ``kind`` that the DAG ``best`` breaks (a, b not adjacent in it)."""
    graph = nx.DiGraph()
    graph.add_nodes_from(names)
    graph.add_edges_from((p, c) for c, ps in best.items() for p in ps)
    out = []
    for _ in range(10_000):
        a, b = rng.sample(names, 2)
        z = set(rng.sample([v for v in names if v not in (a, b)], rng.randint(0, 2)))
        if graph.has_edge(a, b) or graph.has_edge(b, a):
            continue
        if nx.is_d_separator(graph, {a}, {b}, z) == (kind == "dependent"):
            out.append((a, b, sorted(z)))
            if len(out) == count:
                return out
    return None


def _timed(table, eps: float, k: Knowledge, bands: bool, limit: float):
    settings.KNOWLEDGE_BAND_NATS = 1.0 if bands else 0.0
    t0 = time.perf_counter()
    res = solve_table(table, epsilon=eps, knowledge=k, enumerate_by="dags", time_limit=limit)
    return time.perf_counter() - t0, res


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated Table 1 names (default: every row with n ≤ 22)")
    parser.add_argument("--kind", choices=("dependent", "independent"), default="dependent")
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--bf", type=float, default=3.0)
    parser.add_argument("--time-limit", type=float, default=120.0, help="per solve")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args(argv)
    eps = math.log(args.bf)
    rows = table1(max_n=22, names=args.only.split(",") if args.only else None)
    seen: set[str] = set()
    ratios, limited = [], 0
    print(f"{args.count} {args.kind} statement(s) the optimum breaks, BIC BF {args.bf:g}; seconds with bands / "
          "without (the whole table)")
    print(f"{'data':>12} {'seed':>4} {'families':>9} {'OPT drop':>9} | {'phase 1':>7} {'without':>8} | "
          f"{'total':>7} {'without':>8} {'ratio':>6} | rounds")
    for row in rows:
        if row["name"] in seen:
            continue
        seen.add(row["name"])
        data = load_data(data_path(row), no_header=True, discrete="all")
        score = make_score("bic", data)
        free = solve_table(score_parent_sets(score, epsilon=0.0), epsilon=0.0, optimum_only=True)
        for seed in args.seeds:
            drawn = _statements(list(data.names), free.solution.networks[0].parents, random.Random(seed),
                                args.count, args.kind)
            if drawn is None:
                continue
            k = Knowledge(**{args.kind: drawn})
            try:
                table = score_parent_sets(score, epsilon=eps, knowledge=k)
                with_s, res = _timed(table, eps, k, True, args.time_limit)
                without_s, plain = _timed(table, eps, k, False, args.time_limit)
            except InputError as exc:
                print(f"{row['name']:>12} {seed:>4} {exc}")
                continue
            if res.solution.status == plain.solution.status == "optimal" and not (
                    math.isclose(res.solution.optimum, plain.solution.optimum, abs_tol=1e-6)
                    and res.report["n_networks"] == plain.report["n_networks"]):
                raise AssertionError(f"{row['name']} seed {seed} {drawn}: OPT {res.solution.optimum!r} / "
                                     f"{plain.solution.optimum!r}, {res.report['n_networks']} / "
                                     f"{plain.report['n_networks']} DAGs with / without the bands")
            p1, q1 = res.solution.stats["phase1"], plain.solution.stats["phase1"]
            ratio = without_s / with_s
            both = res.solution.status == plain.solution.status == "optimal"
            if both:            # a run cut at the limit gives a bound on its time, not a time: not in the mean
                ratios.append(ratio)
            else:
                limited += 1
            rounds = ", ".join(f"{r['families']} {r['outcome']}" for r in p1.get("bands", []))
            print(f"{row['name']:>12} {seed:>4} {table.n_parent_sets():>9} "
                  f"{free.solution.optimum - res.solution.optimum:>9.2f} | {p1['seconds']:>7.2f} "
                  f"{q1['seconds']:>8.2f} | {with_s:>7.2f} {without_s:>8.2f} {ratio:>6.2f} | {rounds}"
                  + ("" if both else
                     f" (status {res.solution.status} / {plain.solution.status})"), flush=True)
    if ratios:
        print(f"geometric mean of without / with (total): {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}"
              + (f" over the {len(ratios)} rows both solved" if limited else ""))
    if limited:
        print(f"{limited} row(s) with a run stopped at --time-limit left out of the mean (their ratio is a bound)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
