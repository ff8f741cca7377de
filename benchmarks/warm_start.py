"""What a warm start changes: time to a proven optimum (BF 1) with and without a first network.

For each data set: BIC scores pruned for BF 1, then ``bnilp.ilp.solve`` from scratch, from the
greedy hill climber's network and from the GP proxy's (default settings: refined), each projected
onto the score table. Prints seconds, nodes and the starting network's gap to OPT. The optimum must
not change (it is checked). ``benchmarks/proxy.py --ilp`` runs the same on its data sets.

    python benchmarks/warm_start.py [--only tic-tac-toe,wine,zoo,voting] [--samples 100]
"""

from __future__ import annotations

import argparse
import time

from common import data_path, table1

from bnilp import ilp
from bnilp.data import Dataset, load_data
from bnilp.parentsets import score_parent_sets
from bnilp.pipeline import project_network
from bnilp.proxy import greedy_search, proxy_search
from bnilp.scores import make_score

HEAD = (f"{'data':<14} {'start':<8} {'start gap':>10} {'search s':>9} {'solve s':>8} {'nodes':>7} "
        f"{'status':<9} {'OPT':>16}")


def warm_start_rows(name: str, data: Dataset, samples: int = 100, time_limit: float = 300.0,
                    n_jobs: int = 1) -> list[str]:
    """Score ``data`` (BIC, BF 1), then solve from scratch and from the greedy and proxy networks.

    Returns one printed line per start; asserts that no start changes a proven optimum.
    """
    score = make_score("bic", data)
    table = score_parent_sets(score, epsilon=0.0, n_jobs=n_jobs)
    palim = max(len(ps) for fam in table.families.values() for ps in fam)
    starts: dict[str, tuple[dict | None, float]] = {"none": (None, 0.0)}
    lines, opt = [], None
    for label, search in (("greedy", greedy_search), ("proxy", proxy_search)):
        kwargs = {"samples": samples} if label == "proxy" else {}
        found = search(score, max_parents=palim, seed=0, **kwargs)
        start, why = project_network(table, found.parents)
        if start is None:   # no DAG of the table's sets inside the found one: no warm start to try
            lines.append(f"{name:<14} {label:<8} no start: {why}")
            continue
        starts[label] = (start, found.seconds)
    for label, (start, search_s) in starts.items():
        t0 = time.perf_counter()
        res = ilp.solve(table, 0.0, enumerate_ties=False, warm_start=start, time_limit=time_limit)
        solve_s = time.perf_counter() - t0
        if res.status == "optimal":
            opt = res.optimum if opt is None else opt
            assert abs(res.optimum - opt) < 1e-6, "a warm start changed the optimum"
        gap = f"{res.optimum - table.network_score(start):>10.3f}" if start else f"{'—':>10}"
        lines.append(f"{name:<14} {label:<8} {gap} {search_s:>9.2f} {solve_s:>8.2f} "
                     f"{res.stats.get('phase1', {}).get('nodes', '—')!s:>7} {res.status:<9} {res.optimum:>16.6f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="tic-tac-toe,wine,voting,zoo,nltcs")
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--time-limit", type=float, default=300.0)
    args = parser.parse_args()
    print(HEAD)
    for row in table1(names=args.only.split(",")):
        data = load_data(data_path(row), no_header=True)
        for line in warm_start_rows(row["name"], data, args.samples, args.time_limit):
            print(line, flush=True)


if __name__ == "__main__":
    main()
