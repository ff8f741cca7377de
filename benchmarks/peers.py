"""bnilp against the Python peers on their own ground: pgmpy's searches (discrete) and causal-learn's exact search.

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/peers.py [--only wine,zoo|skip] [--scores bic,bdeu]
[--causal-learn DIR|skip] [--nodes 6,8,10,12,14,16] [--time-limit 400]``. bnilp is timed on its second run of each
problem (the first compiles or loads its numba kernels).

1. **pgmpy** (``pgmpy.estimators``, the test extra): on Table 1 data sets, ``HillClimbSearch`` (from the empty
   graph, pgmpy's defaults: tabu list 100, no in-degree limit; three processes under different ``PYTHONHASHSEED``
   values, since its result depends on Python's set order) and ``GES`` with the same score as bnilp's — pgmpy's
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
import importlib.util
import json
import math
import multiprocessing
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd
from common import data_path, run_script, table1

from bnilp.data import from_dataframe, load_data
from bnilp.pipeline import learn
from bnilp.scores import make_score

#: Table 1 data sets whose scoring at BF 1 without a parent limit takes seconds here (both scores)
DEFAULT_ROWS = "tic-tac-toe,wine,adult,nltcs,voting,zoo,hepatitis"
#: the scores both bnilp and pgmpy have (the pgmpy side builds BIC or BDeu)
SCORES = ("bic", "bdeu")
#: PYTHONHASHSEED values hill climbing runs under: pgmpy's hill climbing meets tied moves in the order of Python
#: sets, so its network changes from one process to the next (a review: adult, BIC, gaps of 12 to 100 nats)
HASH_SEEDS = (0, 1, 2)


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


def _timed_learn(data, score_name: str, settings: dict):
    """(result, seconds) of bnilp's proven optimum, timed on a second run: the first compiles or loads the numba
    kernels this data's scoring and search use (seconds once per installation, about 0.3 s per process), which
    pgmpy and causal-learn have no counterpart of."""
    learn(data, score=score_name, bf=1, optimum_only=True, **settings)
    start = time.perf_counter()
    result = learn(data, score=score_name, bf=1, optimum_only=True, **settings)
    return result, time.perf_counter() - start


# ----------------------------------------------------------------------------------------- pgmpy

def _pgmpy_frame(name: str, names: list[str]) -> pd.DataFrame:
    frame = pd.read_csv(data_path(table1(names=[name])[0]), header=None).astype(str)
    frame.columns = [str(c) for c in frame.columns]
    return frame[names]                               # constant columns left out, as bnilp's scoring does


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
        return [[str(u), str(v)] for u, v in dag.edges()], time.perf_counter() - start


def _pgmpy_worker(spec: str) -> None:
    """One pgmpy search in this process (started by :func:`_pgmpy_in_process`): its edges and seconds as JSON."""
    method, name, score_name, ess, names = json.loads(spec)
    edges, seconds = _pgmpy_search(method, _pgmpy_frame(name, names), score_name, ess)
    print(json.dumps({"edges": edges, "seconds": seconds}))


def _pgmpy_in_process(method: str, name: str, score_name: str, ess: float, names: list[str],
                      hash_seed: int) -> tuple[list, float]:
    """(edges, seconds) of a pgmpy search in a fresh interpreter under ``PYTHONHASHSEED=hash_seed``."""
    done = subprocess.run([sys.executable, __file__, "--pgmpy-worker",
                           json.dumps([method, name, score_name, ess, names])],
                          env={**os.environ, "PYTHONHASHSEED": str(hash_seed)}, capture_output=True, text=True)
    if done.returncode:     # its traceback's last line, not the parent's CalledProcessError (a review)
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise SystemExit(f"pgmpy's {method} on {name} failed: {last}")
    got = json.loads(done.stdout.strip().splitlines()[-1])
    return got["edges"], got["seconds"]


def against_pgmpy(rows: list[dict[str, str]], scores: list[str], ess: float) -> None:
    print("pgmpy 1.x searches against bnilp's proven optimum (seconds include scoring; gap = OPT − score of the "
          "network found, in nats = ln BF; hill climbing: the median seconds and the best–worst gap of "
          f"{len(HASH_SEEDS)} processes, PYTHONHASHSEED {', '.join(map(str, HASH_SEEDS))}; GES: one, seed "
          f"{HASH_SEEDS[0]})\n")
    head = f"{'data':<12}{'n':>4}{'N':>7} {'score':<6}{'bnilp s':>9}{'OPT':>14}  " \
           f"{'HC s':>8}{'HC gap':>18}{'HC/bnilp':>9}  {'GES s':>8}{'GES gap':>10}{'GES/bnilp':>10}  bnilp's limits"
    print(head + "\n" + "-" * len(head))
    for row in rows:
        data = load_data(data_path(row), no_header=True, discrete="all")
        names = list(data.names)
        for score_name in scores:
            settings = {"ess": ess} if score_name == "bdeu" else {}
            result, ours = _timed_learn(data, score_name, settings)
            opt = result.solution.optimum
            scorer = make_score(score_name, data, **settings)
            runs = [_pgmpy_in_process("hill climbing", row["name"], score_name, ess, names, k) for k in HASH_SEEDS]
            gaps = sorted(opt - _network_score(scorer, names, edges) for edges, _ in runs)
            seconds = float(np.median([t for _, t in runs]))
            hill = f"{seconds:>8.2f}{f'{gaps[0]:.3f}–{gaps[-1]:.3f}':>18}{seconds / ours:>8.1f}×"
            edges, seconds = _pgmpy_in_process("ges", row["name"], score_name, ess, names, HASH_SEEDS[0])
            gap = opt - _network_score(scorer, names, edges)
            ges = f"{seconds:>8.2f}{gap:>10.3f}{seconds / ours:>9.1f}×"
            print(f"{row['name']:<12}{len(names):>4}{data.N:>7} {score_name:<6}{ours:>9.2f}{opt:>14.3f}  "
                  f"{hill}  {ges}  {_limits(result)}", flush=True)


# ----------------------------------------------------------------------------------------- causal-learn

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
    """(adjacency matrix, seconds) of causal-learn's exact search in its own process; None past ``limit``; the
    process's exit code (an int) where it ended without an answer — a crash is not a run past the limit (it was
    waited out and printed as one: a review)."""
    receive, send = multiprocessing.Pipe(duplex=False)
    proc = multiprocessing.get_context("fork").Process(target=_causal_learn_run,
                                                       args=(path, centred, method, send))
    proc.start()
    end, got = time.perf_counter() + limit, None
    while got is None and time.perf_counter() < end:
        if receive.poll(min(0.5, max(0.0, end - time.perf_counter()))):
            got = receive.recv()
        elif not proc.is_alive():
            got = receive.recv() if receive.poll(0) else proc.exitcode
            break
    proc.kill()
    proc.join()
    return got


def _causal_learn_found(path: str | None) -> bool:
    """Whether ``causallearn`` imports from ``path`` (or the installed packages), as each run's process imports it."""
    if path:
        sys.path.insert(0, path)
    try:
        return importlib.util.find_spec("causallearn") is not None
    finally:
        if path:
            sys.path.remove(path)


def against_causal_learn(path: str | None, nodes: list[int], N: int, limit: float) -> None:
    print(f"\ncausal-learn's exact search (linear-Gaussian BIC) against bnilp (CG = the same BIC up to a constant), "
          f"simulated data, N = {N}; seconds include scoring; 'same OPT': causal-learn's DAG scored by CG equals "
          "bnilp's proven optimum to 1e-9\n")
    head = f"{'n':>3} {'bnilp s':>9}{'A* s':>10}{'A*/bnilp':>10}{'DP s':>10}{'DP/bnilp':>10}  same OPT  bnilp's limits"
    print(head + "\n" + "-" * len(head))
    for n in nodes:
        frame = _simulate(n, N, seed=n)
        data = from_dataframe(frame, continuous="all")
        result, ours = _timed_learn(data, "cg", {})
        scorer = make_score("cg", data)
        centred = (frame - frame.mean()).to_numpy()
        cells, same = [], []
        for method in ("astar", "dp"):
            got = _causal_learn(path, centred, method, limit)
            if got is None or isinstance(got, int):
                cells.append(f"{'> ' + format(limit, 'g') if got is None else f'exit {got}':>10}{'':>10}")
                continue
            dag, seconds = got
            edges = [(f"X{u}", f"X{v}") for u, v in zip(*np.nonzero(dag), strict=True)]
            s = _network_score(scorer, list(data.names), edges)
            same.append(math.isclose(s, result.solution.optimum, rel_tol=1e-9))
            cells.append(f"{seconds:>10.2f}{seconds / ours:>9.1f}×")
        verdict = "yes" if same and all(same) else ("—" if not same else "NO")
        print(f"{n:>3} {ours:>9.2f}{cells[0]}{cells[1]}  {verdict:<8}  {_limits(result)}", flush=True)


def main() -> None:
    if sys.argv[1:2] == ["--pgmpy-worker"]:
        _pgmpy_worker(sys.argv[2])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=DEFAULT_ROWS,
                        help="Table 1 data sets for pgmpy (comma-separated); 'skip' to leave part 1 out")
    parser.add_argument("--scores", default="bic,bdeu", help=f"comma-separated, of {', '.join(SCORES)}")
    parser.add_argument("--ess", type=float, default=1.0)
    parser.add_argument("--causal-learn", dest="causal_learn", default=None,
                        help="folder holding causallearn (pip install --target); 'skip' to leave part 2 out")
    parser.add_argument("--nodes", default="6,8,10,12,14,16")
    parser.add_argument("--rows", type=int, default=1000, help="N of the simulated Gaussian data")
    parser.add_argument("--time-limit", type=float, default=400.0, help="seconds for each causal-learn run")
    args = parser.parse_args()
    scores = args.scores.split(",")
    if not scores or not set(scores) <= set(SCORES):
        parser.error(f"--scores: comma-separated names of {', '.join(SCORES)}, not {args.scores!r}")
    try:
        nodes = [int(k) for k in args.nodes.split(",")]
    except ValueError:
        parser.error(f"--nodes: comma-separated variable counts, not {args.nodes!r}")
    if args.only != "skip":
        rows = table1(names=args.only.split(","))
        if importlib.util.find_spec("pgmpy") is None:
            raise SystemExit("pgmpy is not installed: pip install -e '.[pgmpy]', or --only skip")
        against_pgmpy(rows, scores, args.ess)
    if args.causal_learn != "skip":
        if not _causal_learn_found(args.causal_learn):
            where = f"in {args.causal_learn}" if args.causal_learn else "among the installed packages"
            raise SystemExit(f"causal-learn not found {where}: pip install --no-deps --target DIR causal-learn pydot "
                             "graphviz momentchi2 pyparsing and pass --causal-learn DIR, or --causal-learn skip")
        against_causal_learn(args.causal_learn, nodes, args.rows, args.time_limit)


if __name__ == "__main__":
    run_script(main)
