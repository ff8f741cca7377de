"""Credible sets of the Table 1 rows with identical columns, counted from the table with each twin pair merged.

parkinsons and hailfinder (two and three pairs of identical columns), lung-cancer (two), soybean and bands (one
each): for each data set and BF, score (BIC, no palim), find the twin pairs that meet the conditions of
:mod:`bnilp.twins` (T1–T3: checked on the table), list the classes of the reduced table and count the DAGs and
classes of the whole credible set from them (``bnilp.twins.count_credible``). Prints the pairs used (of those in
the data), the reduced table's classes and DAGs, the whole set's DAGs and classes, whether it is complete, and the
seconds (scoring apart). With ``--compare`` the same table is also enumerated class by class on the whole table
(``--compare-limit`` seconds) and the counts are checked to agree where that finishes, the edge posteriors
(arrows and undirected-in-the-CPDAG shares, both priors) against the average over the classes listed, and the class
table by groups (``bnilp.twins.class_groups``) against the listed classes grouped by the class their representative
contracts to (``tests/oracles.contract_twins``): "groups same" where every group has the same classes, DAGs and sizes.

    python benchmarks/twins.py [--only hailfinder500,hailfinder100] [--bf 3,20,150] [--time-limit 1800]
                               [--jobs 1] [--compare] [--compare-limit 600] [--no-posteriors]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter

from common import ROOT, all_columns, data_path, table1

sys.path.insert(0, str(ROOT))

from bnilp import ilp  # noqa: E402
from bnilp.averaging import PRIORS  # noqa: E402
from bnilp.data import load_data  # noqa: E402
from bnilp.mec import class_counts, count_dags_in_mec, cpdag_edges  # noqa: E402
from bnilp.parentsets import score_parent_sets  # noqa: E402
from bnilp.scores import make_score  # noqa: E402
from bnilp.twins import class_groups, count_credible  # noqa: E402
from tests.oracles import contract_twins, cpdag_class, markov_class  # noqa: E402

WITH_TWINS = "parkinsons,hailfinder100,hailfinder500,lung-cancer,soybean,bands"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=WITH_TWINS)
    parser.add_argument("--bf", default="3,20,150")
    parser.add_argument("--time-limit", type=float, default=1800.0,
                        help="for listing the reduced table's classes and counting them (count_credible's time_limit)")
    parser.add_argument("--jobs", type=int, default=1, help="processes for listing the reduced table's classes")
    parser.add_argument("--compare", action="store_true", help="also list the classes of the whole table")
    parser.add_argument("--no-posteriors", action="store_true",
                        help="count only (count_credible(posteriors=False)): no edge posteriors under the two priors")
    parser.add_argument("--compare-limit", type=float, default=600.0)
    args = parser.parse_args()
    head = (f"{'data':<14} {'BF':>4} {'twins':>6} {'used':>5} {'reduced MECs':>12} {'reduced DAGs':>13} "
            f"{'DAGs':>16} {'MECs':>12} {'complete':>8} {'score s':>8} {'count s':>8}  whole table listed")
    print(head)
    print("-" * len(head))
    for row in table1(names=[s for s in args.only.split(",") if s]):
        data = load_data(data_path(row), no_header=True, discrete=all_columns(data_path(row)))
        twins = sum(len(group) - 1 for group in data.twins)
        score = make_score("bic", data)
        for bf in (int(b) for b in args.bf.split(",")):
            eps = math.log(bf)
            t0 = time.perf_counter()
            table = score_parent_sets(score, epsilon=eps)
            t1 = time.perf_counter()
            counted = count_credible(table, eps, time_limit=args.time_limit, jobs=args.jobs,
                                     posteriors=not args.no_posteriors)
            t2 = time.perf_counter()
            listed = ""
            if args.compare:
                whole = ilp.solve(table, eps, enumerate_by="mecs", max_networks=10**7, time_limit=args.compare_limit)
                classes = len(whole.networks)
                dags = sum(count_dags_in_mec(net.parents) for net in whole.networks)
                agree = "" if not (whole.complete and counted.complete) else \
                    (" agree" if (classes, dags) == (counted.classes, counted.dags) else " DIFFER")
                if agree and counted.posteriors:
                    gap = max(_largest_difference(counted.posteriors[prior], _listed_posteriors(whole, prior))
                              for prior in PRIORS)
                    agree += f"; posteriors (both priors) to {gap:.1e}; groups {_groups_agree(counted, whole)}"
                listed = (f"{dags:,} DAGs, {classes:,} MECs, {whole.status}, "
                          f"{time.perf_counter() - t2:.1f} s{agree}")
            print(f"{row['name']:<14} {bf:>4} {twins:>6} {len(counted.pairs):>5} {counted.reduced_classes:>12,} "
                  f"{counted.reduced_dags:>13,} {counted.dags:>16,} {counted.classes:>12,} "
                  f"{'yes' if counted.complete else counted.status:>8} {t1 - t0:>8.1f} {t2 - t1:>8.1f}  {listed}",
                  flush=True)


def _listed_posteriors(whole, prior: str) -> tuple[dict, dict]:
    """(P(u → v), P(u — v undirected in the CPDAG)) averaged over every class listed, each weighted by exp(score −
    OPT), times its DAGs under "dags"."""
    best = max(net.score for net in whole.networks)
    arrows: dict = {}
    undirected: dict = {}
    total = 0.0
    for net in whole.networks:
        cpdag = cpdag_edges(net.parents)
        size, shares = class_counts(cpdag)
        w = math.exp(net.score - best) * (size if prior == "dags" else 1)
        total += w
        for arrow, share in shares.items():
            arrows[arrow] = arrows.get(arrow, 0.0) + w * share
        for edge in cpdag[1]:
            undirected[frozenset(edge)] = undirected.get(frozenset(edge), 0.0) + w
    return {a: x / total for a, x in arrows.items()}, {e: x / total for e, x in undirected.items()}


def _groups_agree(counted, whole) -> str:
    """Whether ``bnilp count``'s class table by groups (:func:`bnilp.twins.class_groups`) holds the classes listed,
    grouped by the class their representative contracts to (each twin pair merged, ``tests/oracles.contract_twins``):
    per group the same classes, DAGs and class sizes ("same"), or how many groups differ."""
    pairs = [(p.kept, p.dropped) for p in counted.pairs]
    listed: dict = {}
    for net in whole.networks:
        listed.setdefault(markov_class(contract_twins(net.parents, pairs)), []).append(count_dags_in_mec(net.parents))
    groups = class_groups(counted)
    differ = len(listed) != len(groups)
    for group, expansion in zip(groups, counted.expansions, strict=True):
        sizes = listed.get(cpdag_class(*expansion.cpdag), [])
        differ += (group["n_mecs"], group["n_dags"], group["class_sizes"]) != (
            len(sizes), sum(sizes), sorted(map(list, Counter(sizes).items())))
    return "same" if not differ else f"{differ} DIFFER"


def _largest_difference(got: tuple[dict, dict], want: tuple[dict, dict]) -> float:
    return max((abs(g.get(k, 0.0) - w.get(k, 0.0)) for g, w in zip(got, want, strict=True) for k in set(g) | set(w)),
               default=0.0)


if __name__ == "__main__":
    main()
