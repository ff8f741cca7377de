"""Overhead of background knowledge in the search: alarm1000 with k random forbidden arrows vs none.

    OPENBLAS_NUM_THREADS=1 python benchmarks/knowledge_overhead.py --bf 3 --seeds 0 1 2 --repeat 2

Scores alarm1000 (BIC, pruned for the BF; cached as a score file under ``--cache``) once, then for
each seed draws ``--forbid`` (default 20) arrows uniformly among the n(n−1) ordered pairs and times
:func:`bnilp.pipeline.solve_table` with ``Knowledge(forbidden=...)`` against the same call without
knowledge (fastest of ``--repeat`` runs each, same process). Prints one row per seed: how many of the
forbidden arrows the unconstrained optimum uses, families left, OPT and credible-set size both ways,
and the time ratio with/without. Forbidden arrows only remove families (a filter before the model is
built), so the model is smaller, never larger.

    OPENBLAS_NUM_THREADS=1 python benchmarks/knowledge_overhead.py --independent 3 --kind contradict --seeds 1 2 3

``--independent K`` times conditional independences instead: per seed K statements ``a, b | Z`` (Z of 0–3
other variables, a and b not adjacent in the unconstrained optimum) drawn among those the optimum breaks
(``--kind contradict``) or keeps (``agree``); OPT alone (``optimum_only``) with the independences' rows
separated at LP points and enforced at integral points alone (``ANCESTRY_SEPAFREQ`` 1 and 0), then the
credible set at the BF (the default setting) within ``--time-limit``; ``--no-short-trails`` leaves the trails of
two arrows to those rows too (``INDEPENDENCE_SHORT_TRAILS`` off: the code before they were written up front).
"rows" counts the lazy rows only. Prints seconds, OPT, branch-and-cut nodes,
rows added and the credible set's size and status.

    OPENBLAS_NUM_THREADS=1 python benchmarks/knowledge_overhead.py --dependent 1 --seeds 1 2 3 --time-limit 120

``--dependent K`` does the same for conditional dependences: K statements ``a, b | Z`` (Z of 0–3 other
variables) that the unconstrained optimum breaks (Z d-separates a and b in it; ``--kind agree``: keeps). The
table is pruned without them — a dependence holds in supergraphs, so an exact table is scored under it with no
pruning (a palim on 37 variables): this measures the search's cost, and the report carries the knowledge note.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from pathlib import Path

import networkx as nx
from common import SHARED_DATA  # noqa: F401  (sets the thread variables)

from bnilp.data import load_data
from bnilp.errors import LimitError
from bnilp.ilp import settings
from bnilp.knowledge import Knowledge
from bnilp.parentsets import score_parent_sets
from bnilp.pipeline import solve_table
from bnilp.scorefile import read_jaakkola, write_jaakkola
from bnilp.scores import make_score


def _table(bf: float, cache: Path):
    path = cache / f"alarm1000.BIC.bf{bf:g}.scores"
    if path.exists():
        return read_jaakkola(path)
    data = load_data(SHARED_DATA / "liao2019_ebnsl" / "alarm1000.csv", no_header=True, discrete="all")
    t0 = time.perf_counter()
    table = score_parent_sets(make_score("bic", data), epsilon=math.log(bf))
    print(f"scored alarm1000 in {time.perf_counter() - t0:.1f} s ({table.n_parent_sets()} parent sets)")
    cache.mkdir(parents=True, exist_ok=True)
    write_jaakkola(table, path)
    return read_jaakkola(path)


def _timed(table, eps: float, knowledge, repeat: int):
    """(fastest total seconds, phase-1 seconds of that run, result)."""
    best, phase1, result = math.inf, math.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = solve_table(table, epsilon=eps, knowledge=knowledge, enumerate_by="dags")
        took = time.perf_counter() - t0
        if took < best:
            best, phase1, result = took, res.solution.stats["phase1"]["seconds"], res
    return best, phase1, result


def _statements(table, best, rng: random.Random, count: int, agree: bool,
                dependent: bool = False) -> list[tuple[str, str, list[str]]]:
    """``count`` independences the DAG ``best`` keeps (``agree``) or breaks, a and b not adjacent in it; with
    ``dependent``, dependences it keeps or breaks."""
    graph = nx.DiGraph()
    graph.add_nodes_from(table.variables)
    graph.add_edges_from((p, c) for c, ps in best.items() for p in ps)
    out: list[tuple[str, str, list[str]]] = []
    while len(out) < count:
        a, b = rng.sample(table.variables, 2)
        if graph.has_edge(a, b) or graph.has_edge(b, a):
            continue
        z = set(rng.sample([v for v in table.variables if v not in (a, b)], rng.randint(0, 3)))
        if nx.is_d_separator(graph, {a}, {b}, z) == (agree != dependent):
            out.append((a, b, sorted(z)))
    return out


def _independences(table, eps: float, args) -> int:
    """The ``--independent`` and ``--dependent`` tables (module doc)."""
    t0 = time.perf_counter()
    free = solve_table(table, epsilon=0.0, optimum_only=True)
    dependent = bool(args.dependent)
    count = args.dependent or args.independent
    print(f"alarm1000 BIC BF {args.bf:g}: OPT without knowledge {free.solution.optimum:.4f} in "
          f"{time.perf_counter() - t0:.2f} s ({free.solution.stats['phase1'].get('method')}); {count} "
          f"{'dependences' if dependent else 'independences'} per seed that the "
          f"optimum {'keeps' if args.kind == 'agree' else 'breaks'}")
    print(f"{'seed':>4} {'OPT with':>14} | {'separated s':>11} {'nodes':>6} {'rows':>5} | {'integral s':>10} "
          f"{'nodes':>6} {'rows':>5} | {'BF set s':>8} {'DAGs':>5} {'MECs':>4} status")
    if args.no_short_trails:
        settings.INDEPENDENCE_SHORT_TRAILS = False
    print(f"trails of two arrows up front: {settings.INDEPENDENCE_SHORT_TRAILS}")
    rows_of = ("dependence", "dependence_sepa") if dependent else ("independence", "independence_sepa")
    for seed in args.seeds:
        drawn = _statements(table, free.solution.networks[0].parents, random.Random(seed), count,
                            args.kind == "agree", dependent)
        k = Knowledge(**{"dependent" if dependent else "independent": drawn})
        cells, default = [], settings.ANCESTRY_SEPAFREQ
        for freq in (1, 0):
            settings.ANCESTRY_SEPAFREQ = freq
            t0 = time.perf_counter()
            try:
                res = solve_table(table, epsilon=0.0, optimum_only=True, knowledge=k, time_limit=args.time_limit)
            except LimitError as exc:       # dependences: the table pruned without them holds no DAG that meets them
                print(f"{seed:>4} {str(exc).split(':')[0]}: no DAG of the table satisfies "
                      f"{'; '.join(k.statements())} ({time.perf_counter() - t0:.2f} s)")
                break
            st = res.solution.stats["phase1"]
            cells.append((time.perf_counter() - t0, st.get("nodes", 0), sum(st["cuts"].get(r, 0) for r in rows_of)))
        settings.ANCESTRY_SEPAFREQ = default
        if len(cells) < 2:
            continue
        t0 = time.perf_counter()
        full = solve_table(table, epsilon=eps, knowledge=k, time_limit=args.time_limit)
        took = time.perf_counter() - t0
        print(f"{seed:>4} {res.solution.optimum:>14.4f} | "
              + " | ".join(f"{s:>{w}.2f} {n:>6} {r:>5}" for (s, n, r), w in zip(cells, (11, 10), strict=True))
              + f" | {took:>8.1f} {full.report['n_networks']:>5} {full.report['n_mecs']:>4} {full.solution.status}")
        print(f"     {'; '.join(k.statements())}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bf", type=float, default=3.0)
    parser.add_argument("--forbid", type=int, default=20, help="forbidden arrows per seed")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--repeat", type=int, default=2, help="runs per solve; the fastest is reported")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/bnilp-bench"))
    parser.add_argument("--independent", type=int, default=0, help="time K conditional independences instead")
    parser.add_argument("--dependent", type=int, default=0, help="time K conditional dependences instead")
    parser.add_argument("--kind", choices=("agree", "contradict"), default="contradict")
    parser.add_argument("--time-limit", type=float, default=300.0, help="per solve, with --independent")
    parser.add_argument("--no-short-trails", action="store_true",
                        help="with --independent: the trails of two arrows left to the lazy rows "
                             "(settings.INDEPENDENCE_SHORT_TRAILS off), the code before they were written up front")
    args = parser.parse_args(argv)
    eps = math.log(args.bf)
    table = _table(args.bf, args.cache)
    if args.independent or args.dependent:
        return _independences(table, eps, args)
    names = table.variables
    base_s, _, base = _timed(table, eps, None, args.repeat)
    opt_arrows = {(p, v) for v, ps in base.solution.networks[0].parents.items() for p in ps}
    print(f"alarm1000 BIC BF {args.bf:g}: n = {len(names)}, {table.n_parent_sets()} families; without knowledge "
          f"{base_s:.2f} s, OPT {base.solution.optimum:.4f}, {base.report['n_networks']} DAGs")
    print(f"{'seed':>4} {'in OPT':>6} {'families':>8} {'OPT with':>14} {'DAGs':>5} | {'phase 1 s':>9} {'without':>7} "
          f"{'ratio':>5} | {'total s':>7} {'without':>7} {'ratio':>5} | {'s/DAG':>6} {'without':>7}")
    r1, rt = [], []
    for seed in args.seeds:
        rng = random.Random(seed)
        pairs = rng.sample([(a, b) for a in names for b in names if a != b], args.forbid)
        k = Knowledge(forbidden=pairs)
        with_s, with_1, res = _timed(table, eps, k, args.repeat)
        without_s, without_1, plain = _timed(table, eps, None, args.repeat)
        kept = sum(1 for v in names for ps in table.families[v] if k.family_ok(v, ps))
        dags, dags0 = res.report["n_networks"], plain.report["n_networks"]
        r1.append(with_1 / without_1)
        rt.append(with_s / without_s)
        print(f"{seed:>4} {len(opt_arrows & set(pairs)):>6} {kept:>8} {res.solution.optimum:>14.4f} {dags:>5} | "
              f"{with_1:>9.2f} {without_1:>7.2f} {r1[-1]:>5.2f} | {with_s:>7.2f} {without_s:>7.2f} {rt[-1]:>5.2f} | "
              f"{with_s / dags:>6.3f} {without_s / dags0:>7.3f}")

    def gmean(xs: list[float]) -> float:
        return math.exp(sum(map(math.log, xs)) / len(xs))

    print(f"geometric mean ratio with/without: phase 1 {gmean(r1):.2f}, total {gmean(rt):.2f} "
          "(the total also enumerates a different credible set when a forbidden arrow is in the optimum)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
