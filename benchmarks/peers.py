"""bnilp against the Python peers on their own ground: pgmpy's searches (discrete) and causal-learn's exact search.

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/peers.py [--only wine,zoo] [--scores bic,bdeu] [--causal-learn DIR]
[--nodes 6,8,10,12] [--time-limit 300]``.

1. **pgmpy** (``pgmpy.estimators``, the test extra): on Table 1 data sets, ``HillClimbSearch`` (from the empty
   graph, pgmpy's defaults: tabu list 100, no in-degree limit) and ``GES`` with the same score as bnilp's — pgmpy's
   BIC and BDeu family scores are bnilp's to 1e-12 (``tests/test_against_pgmpy.py``) — against ``bnilp.learn(...,
   bf=1, optimum_only=True)``: seconds (scoring included on both sides), the network's score, and how far below the
   proven optimum it is, in nats = ln BF (a network inside OPT − ln 20 is in the BF-20 credible set). GES returns a
   CPDAG; it is scored by one of its DAGs (pgmpy's ``to_dag``), which all score alike under these
   score-equivalent scores.
2. **causal-learn** (``causallearn.search.ScoreBased.ExactSearch.bic_exact_search``: DP over the order graph, or
   A*, the exact searches of Yuan & Malone 2013) on simulated linear-Gaussian data: its linear-Gaussian BIC,
   n·ln(RSS/n) + k·ln n (regression without intercept, so the data are centred first), ranks DAGs as bnilp's
   CG score does on continuous columns (−2 × CG's BIC, up to a constant: ``tests/test_against_pgmpy.py`` pins CG to
   pgmpy's Gaussian BIC), so the two must reach the same optimum: the table checks it (causal-learn's DAG
   scored by CG equals bnilp's proven OPT) and gives both times. causal-learn is not a dependency of bnilp:
   ``pip install --no-deps --target DIR causal-learn pydot graphviz momentchi2 pyparsing`` and pass ``--causal-learn
   DIR`` (or install it). Each of its runs has its own process and ``--time-limit``.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
import time
import warnings

import numpy as np
import pandas as pd
from common import data_path, table1

from bnilp.data import from_dataframe, load_data
from bnilp.pipeline import learn
from bnilp.scores import make_score

#: Table 1 data sets whose scoring at BF 1 without a parent limit takes seconds here (both scores)
DEFAULT_ROWS = "tic-tac-toe,wine,adult,nltcs,voting,zoo,hepatitis"


def _limits(result) -> str:
    """What the exact search was exact for: nothing ("—"), or its limits (a palim the scoring chose where no rule
    bounds the parent sets: CG beyond the family budget), with which OPT is the optimum of that restricted problem."""
    return ", ".join(result.report.get("limits") or []) or "—"


def _network_score(score, names: list[str], edges) -> float:
    index = {nm: i for i, nm in enumerate(names)}
    parents: dict[int, list[int]] = {i: [] for i in range(len(names))}
    for u, v in edges:
        parents[index[str(v)]].append(index[str(u)])
    return sum(score.local(child, tuple(sorted(ps))) for child, ps in parents.items())


def _pgmpy_search(method: str, frame: pd.DataFrame, score_name: str, ess: float) -> tuple[list, float]:
    from pgmpy import estimators

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scoring = estimators.BIC(frame) if score_name == "bic" else \
            estimators.BDeu(frame, equivalent_sample_size=ess)
        start = time.perf_counter()
        if method == "hill climbing":
            dag = estimators.HillClimbSearch(frame).estimate(scoring_method=scoring, show_progress=False)
        else:
            dag = estimators.GES(frame).estimate(scoring_method=scoring).to_dag()
        return list(dag.edges()), time.perf_counter() - start


def _warm_up() -> None:
    """One small run first, so that neither table charges its first row with loading bnilp's compiled kernels and
    SCIP (about 0.3 s)."""
    frame = pd.DataFrame({"a": [0, 1, 0, 1, 1, 0], "b": [0, 1, 1, 1, 0, 0]})
    learn(from_dataframe(frame, discrete="all"), score="bic", bf=1, optimum_only=True)
    learn(from_dataframe(frame.astype(float), continuous="all"), score="cg", bf=1, optimum_only=True)


def against_pgmpy(rows: list[dict[str, str]], scores: list[str], ess: float) -> None:
    print("pgmpy 1.x searches against bnilp's proven optimum (score seconds include scoring; gap = OPT − score of "
          "the network found, in nats = ln BF)\n")
    head = f"{'data':<12}{'n':>4}{'N':>7} {'score':<6}{'bnilp s':>9}{'OPT':>14}  " \
           f"{'HC s':>8}{'HC gap':>10}{'HC/bnilp':>9}  {'GES s':>8}{'GES gap':>10}{'GES/bnilp':>10}  bnilp's limits"
    print(head + "\n" + "-" * len(head))
    for row in rows:
        path = data_path(row)
        data = load_data(path, no_header=True, discrete="all")
        frame = pd.read_csv(path, header=None).astype(str)
        frame.columns = [str(c) for c in frame.columns]
        frame = frame[list(data.names)]                   # constant columns left out, as bnilp's scoring does
        for score_name in scores:
            settings = {"ess": ess} if score_name == "bdeu" else {}
            start = time.perf_counter()
            result = learn(data, score=score_name, bf=1, optimum_only=True, **settings)
            ours = time.perf_counter() - start
            opt = result.solution.optimum
            scorer = make_score(score_name, data, **settings)
            cells = []
            for method in ("hill climbing", "ges"):
                edges, seconds = _pgmpy_search(method, frame, score_name, ess)
                gap = opt - _network_score(scorer, list(data.names), edges)
                cells.append(f"{seconds:>8.2f}{gap:>10.3f}{seconds / ours:>9.1f}×")
            print(f"{row['name']:<12}{len(data.names):>4}{data.N:>7} {score_name:<6}{ours:>9.2f}{opt:>14.3f}  "
                  f"{cells[0]}  {cells[1]}  {_limits(result)}", flush=True)


def _simulate(n: int, N: int, seed: int) -> pd.DataFrame:
    """A linear-Gaussian DAG: each variable has up to two earlier parents, weights ±U(0.5, 1)."""
    rng = np.random.default_rng(seed)
    x = np.zeros((N, n))
    for j in range(n):
        x[:, j] = rng.normal(size=N)
        for p in (rng.choice(j, size=min(j, 2), replace=False) if j else []):
            x[:, j] += rng.uniform(0.5, 1.0) * rng.choice([-1.0, 1.0]) * x[:, p]
    return pd.DataFrame(x, columns=[f"X{j}" for j in range(n)])


def _causal_learn_run(path: str | None, centred: np.ndarray, method: str, out) -> None:
    if path:
        sys.path.insert(0, path)
    from causallearn.search.ScoreBased.ExactSearch import bic_exact_search

    start = time.perf_counter()
    dag, _ = bic_exact_search(centred, search_method=method)
    out.send((dag, time.perf_counter() - start))


def _causal_learn(path: str | None, centred: np.ndarray, method: str, limit: float):
    """(adjacency matrix, seconds) of causal-learn's exact search in its own process, or None past ``limit``."""
    receive, send = multiprocessing.Pipe(duplex=False)
    proc = multiprocessing.get_context("fork").Process(target=_causal_learn_run,
                                                       args=(path, centred, method, send))
    proc.start()
    got = receive.recv() if receive.poll(limit) else None
    proc.kill()
    proc.join()
    return got


def against_causal_learn(path: str | None, nodes: list[int], N: int, limit: float) -> None:
    print(f"\ncausal-learn's exact search (linear-Gaussian BIC) against bnilp (CG = the same BIC up to a constant), "
          f"simulated data, N = {N}; seconds include scoring; 'same OPT': causal-learn's DAG scored by CG equals "
          "bnilp's proven optimum to 1e-9\n")
    head = f"{'n':>3} {'bnilp s':>9}{'A* s':>10}{'A*/bnilp':>10}{'DP s':>10}{'DP/bnilp':>10}  same OPT  bnilp's limits"
    print(head + "\n" + "-" * len(head))
    for n in nodes:
        frame = _simulate(n, N, seed=n)
        data = from_dataframe(frame, continuous="all")
        start = time.perf_counter()
        result = learn(data, score="cg", bf=1, optimum_only=True)
        ours = time.perf_counter() - start
        scorer = make_score("cg", data)
        centred = (frame - frame.mean()).to_numpy()
        cells, same = [], []
        for method in ("astar", "dp"):
            got = _causal_learn(path, centred, method, limit)
            if got is None:
                cells.append(f"{'> ' + format(limit, 'g'):>10}{'':>10}")
                continue
            dag, seconds = got
            edges = [(f"X{u}", f"X{v}") for u, v in zip(*np.nonzero(dag), strict=True)]
            s = _network_score(scorer, list(data.names), edges)
            same.append(math.isclose(s, result.solution.optimum, rel_tol=1e-9))
            cells.append(f"{seconds:>10.2f}{seconds / ours:>9.1f}×")
        verdict = "yes" if same and all(same) else ("—" if not same else "NO")
        print(f"{n:>3} {ours:>9.2f}{cells[0]}{cells[1]}  {verdict:<8}  {_limits(result)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=DEFAULT_ROWS, help="Table 1 data sets for pgmpy (comma-separated)")
    parser.add_argument("--scores", default="bic,bdeu")
    parser.add_argument("--ess", type=float, default=1.0)
    parser.add_argument("--causal-learn", dest="causal_learn", default=None,
                        help="folder holding causallearn (pip install --target); 'skip' to leave part 2 out")
    parser.add_argument("--nodes", default="6,8,10,12")
    parser.add_argument("--rows", type=int, default=1000, help="N of the simulated Gaussian data")
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds for each causal-learn run")
    args = parser.parse_args()
    with warnings.catch_warnings():                 # pgmpy's notice that its scores' module moves
        warnings.simplefilter("ignore")
        import pgmpy.estimators  # noqa: F401
    _warm_up()
    if args.only != "skip":
        against_pgmpy(table1(names=args.only.split(",")), args.scores.split(","), args.ess)
    if args.causal_learn != "skip":
        against_causal_learn(args.causal_learn, [int(k) for k in args.nodes.split(",")], args.rows, args.time_limit)


if __name__ == "__main__":
    main()
