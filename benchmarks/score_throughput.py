"""Scoring throughput (issue 12): before (the one-family walk) and after (batched lattice walk), speed-ups.

Parts (``--parts``):
- ``throughput``: BIC BF 3, the first ``--children`` variables of alarm1000 and letter and the
  first of alarm.csv (its walk alone scores 391,343 sets; ``--throughput-data`` picks other files),
  one process: parent sets per second and row·families per second (N × families scored) per core, for
  the one-family walk (``bnilp.parentsets.walk_child``, the walk of before issue 12 — it now counts each
  family with the compiled kernel, ``canonical_stats``; cut at ``--before-limit`` seconds per variable)
  and for the lattice walk.
- ``jobs``: alarm1000 BIC BF 20 and hailfinder500 BIC BF 3, whole files: --jobs 1, --jobs 2 (its pool
  started by the call), --jobs 2 again (the pool of the previous call still running, as for a second
  call in one process) and --scheduler local (2 workers); seconds and ratios, and whether the score
  files are byte-identical (after one untimed call on a tiny slice of the data, so that loading the
  compiled kernels does not fall on --jobs 1). ``--jobs-data NAME:BF,...`` picks other Table 1 files
  (e.g. ``bands:3``); ``--repeat R`` then runs R rounds of the three (running) configurations in turn
  and reports medians.
- ``alarm``: alarm.csv (the seed's alarm row), BIC BF 3, no palim, --jobs 2: seconds.
- ``bign``: 10^6 simulated rows, 20 discrete variables (2–4 states, a random DAG, 2 parents at most),
  BIC BF 20, ``--bign-jobs`` (2), ``--bign-counts`` (auto: the subset table): seconds and peak resident
  memory of the scoring process (and its peak before scoring: imports and the simulated data with its
  temporaries) and of its workers; past ``--bign-limit`` seconds, "not finished".
- ``wide``: data wider than one mask word (``--wide-n`` variables, default 200, × ``--wide-rows`` rows, default
  50; the ``simulated`` DAG, 2–4 states), BIC BF 3, ``--wide-palims`` (2,3), one process: the whole file by the
  lattice walk (seconds, sets scored and kept, sets per second) and, on its first ``--children`` variables, the
  one-family walk against the lattice walk (sets per second, speed-up) — wider data took the one-family walk
  before the thirty-fifth session.

    OPENBLAS_NUM_THREADS=1 python benchmarks/score_throughput.py [--parts throughput,jobs,alarm,bign,wide]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import multiprocessing as mp
import os
import resource
import signal
import threading
import time

import numpy as np
from common import SHARED_DATA, run_script

from bnilp import parentsets
from bnilp.data import DISCRETE, Dataset, load_data
from bnilp.lattice import stop_local_cluster, stop_pool
from bnilp.parentsets import WalkStats, _run_lattice, score_parent_sets, walk_child
from bnilp.scorefile import format_jaakkola
from bnilp.scores import make_score
from bnilp.scores.subsets import COUNT_MODES

DATA = SHARED_DATA / "liao2019_ebnsl"


class _Stop(Exception):
    pass


def _alarm(*_: object) -> None:
    raise _Stop


def before(score, children: list[int], eps: float, limit: float) -> tuple[int, float]:
    """(families scored, seconds) of the one-family walk, each variable cut at ``limit`` seconds.

    "Scored" as for the lattice walk (``WalkStats.scored``: not pruned before or by their counts); a cut
    walk returns no stats, so each walk's ``WalkStats`` is kept as it is made and read after the cut.
    """
    scored, seconds = 0, 0.0
    made: list[WalkStats] = []

    def recorded(*a, **k) -> WalkStats:
        made.append(WalkStats(*a, **k))
        return made[-1]

    parentsets.WalkStats = recorded   # walk_child makes its stats through the module's name
    signal.signal(signal.SIGALRM, _alarm)
    try:
        for child in children:
            t0 = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, limit)
            try:
                walk_child(score, child, epsilon=eps)
            except _Stop:
                pass
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            seconds += time.perf_counter() - t0
            scored += made[-1].scored
    finally:
        parentsets.WalkStats = WalkStats
    return scored, seconds


def throughput(args) -> None:
    eps = math.log(3)
    print(f"BIC BF 3, first {args.children} variables, one process; before = one-family walk, "
          f"cut at {args.before_limit:g} s per variable")
    print("| data | N | distinct rows | before sets/s | before row·fam/s | after sets/s | after row·fam/s | "
          "speed-up | after: sets scored, s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.throughput_data.split(","):
        data = load_data(DATA / f"{name}.csv", no_header=True, integer_codes=True)
        children = list(range(min(1 if name == "alarm" else args.children, data.n)))
        warm_up(data, eps)          # the first data set paid the kernels' loading (wine first: 0.6×)
        score = make_score("bic", data)
        n_old, s_old = before(score, children, eps, args.before_limit)
        score = make_score("bic", data)
        t0 = time.perf_counter()
        res, _counting = _run_lattice(score, children, eps, None, None, 1, None, None)
        s_new = time.perf_counter() - t0
        n_new = sum(st.scored for _, st in res)
        print(f"| {name} | {data.N:,} | {score.n_rows:,} | {n_old / s_old:,.0f} | {n_old * data.N / s_old:.3g} | "
              f"{n_new / s_new:,.0f} | {n_new * data.N / s_new:.3g} | {(n_new / s_new) / (n_old / s_old):.1f}× | "
              f"{n_new:,}, {s_new:.1f} |", flush=True)


def warm_up(data: Dataset, eps: float) -> None:
    """One untimed scoring call on a tiny slice of ``data`` (both counting routes): the process's first call
    loads the compiled kernels (~0.5–1 s), which would otherwise fall on the first timed configuration."""
    k, rows = min(4, data.n), min(200, data.N)
    small = Dataset(data.names[:k], data.kinds[:k], data.codes[:rows, :k].copy(), data.values[:rows, :k].copy(),
                    data.arities[:k], data.levels[:k], source="warm-up")
    for counts in ("families", "subsets"):
        score_parent_sets(make_score("bic", small), epsilon=eps, counts=counts)


def jobs(args) -> None:
    for name, bf in args.jobs_data:
        data = load_data(DATA / f"{name}.csv", no_header=True, integer_codes=True)
        eps = math.log(bf)
        warm_up(data, eps)
        out = {}
        for label, kw in (("--jobs 1", {}), ("--jobs 2", {"n_jobs": 2}), ("--jobs 2, pool running", {"n_jobs": 2}),
                          ("--scheduler local", {"scheduler": "local", "n_jobs": 2}),
                          ("--scheduler local, cluster running", {"scheduler": "local", "n_jobs": 2})):
            if label == "--jobs 2":
                stop_pool()   # measured with the pool's start
            if label == "--scheduler local":
                stop_local_cluster()   # measured with the cluster's start
            t0 = time.perf_counter()
            table = score_parent_sets(make_score("bic", data), epsilon=eps, **kw)
            out[label] = (time.perf_counter() - t0, format_jaakkola(table), table.meta["scored"])
            print(f"{name} BIC BF {bf} {label}: {out[label][0]:.2f} s, scored {out[label][2]:,}", flush=True)
        one = out["--jobs 1"]
        two = out["--jobs 2"]
        dask = out["--scheduler local"]
        warm = out["--jobs 2, pool running"]
        dask_warm = out["--scheduler local, cluster running"]
        print(f"{name}: speed-up --jobs 2 / --jobs 1: {one[0] / two[0]:.2f}× (pool running: {one[0] / warm[0]:.2f}×); "
              f"--scheduler local / --jobs 2: {dask[0] / two[0]:.2f} (both running: {dask_warm[0] / warm[0]:.2f}); "
              f"identical files: {one[1] == two[1] == warm[1] == dask[1] == dask_warm[1]}", flush=True)
        if args.repeat:
            rounds(name, data, eps, args.repeat, one[1])


def rounds(name: str, data, eps: float, repeat: int, expected: str) -> None:
    """``repeat`` rounds of --jobs 1, --jobs 2 and --scheduler local one after the other (pool and cluster
    running): on a machine whose speed drifts, the medians and their ratios are what to quote."""
    configs = {"--jobs 1": {}, "--jobs 2": {"n_jobs": 2}, "--scheduler local": {"scheduler": "local", "n_jobs": 2}}
    seconds: dict[str, list[float]] = {label: [] for label in configs}
    same = True
    for _ in range(repeat):
        for label, kw in configs.items():
            t0 = time.perf_counter()
            table = score_parent_sets(make_score("bic", data), epsilon=eps, **kw)
            seconds[label].append(time.perf_counter() - t0)
            same = same and format_jaakkola(table) == expected
    med = {label: float(np.median(v)) for label, v in seconds.items()}
    for label, v in seconds.items():
        print(f"{name} {label}, {repeat} rounds: median {med[label]:.2f} s ({', '.join(f'{x:.2f}' for x in v)})",
              flush=True)
    print(f"{name}, medians of {repeat} rounds: --jobs 2 / --jobs 1 speed-up {med['--jobs 1'] / med['--jobs 2']:.2f}×; "
          f"--scheduler local / --jobs 2: {med['--scheduler local'] / med['--jobs 2']:.2f}; identical files: {same}",
          flush=True)


def alarm(args) -> None:
    data = load_data(DATA / "alarm.csv", no_header=True, integer_codes=True)
    t0 = time.perf_counter()
    table = score_parent_sets(make_score("bic", data), epsilon=math.log(3), n_jobs=2)
    print(f"alarm.csv BIC BF 3, no palim, --jobs 2: {time.perf_counter() - t0:.1f} s, scored "
          f"{table.meta['scored']:,}, kept {table.meta['kept']:,}", flush=True)


def simulated(n: int, N: int, seed: int = 1) -> Dataset:
    """N rows from a random DAG on n discrete variables (2–4 states, ≤ 2 parents, Dirichlet(1) CPTs)."""
    rng = np.random.default_rng(seed)
    arity = rng.integers(2, 5, n)
    codes = np.zeros((N, n), dtype=np.int64)
    for v in range(n):
        parents = sorted(rng.choice(v, size=min(v, int(rng.integers(0, 3))), replace=False)) if v else []
        config = np.zeros(N, dtype=np.int64)
        for p in parents:
            config = config * arity[p] + codes[:, p]
        q = int(np.prod([arity[p] for p in parents])) if parents else 1
        cpt = rng.dirichlet(np.ones(arity[v]), size=q)
        cum = np.cumsum(cpt, axis=1)[config]
        codes[:, v] = (rng.random(N)[:, None] > cum).sum(axis=1).clip(max=arity[v] - 1)
    levels = [[str(c) for c in range(int(arity[v]))] for v in range(n)]
    return Dataset([f"X{v}" for v in range(n)], [DISCRETE] * n, codes, np.full((N, n), np.nan), list(map(int, arity)),
                   levels, source="simulated")


def wide(args) -> None:
    eps = math.log(3)
    data = simulated(args.wide_n, args.wide_rows)
    warm_up(data, eps)
    children = list(range(min(args.children, data.n)))
    # the kernels of data wider than one mask word compile on their first call: untimed here (a review saw the
    # compile as the lattice's throughput on a fresh checkout, 0.4× where a warm cache gives 20×)
    _run_lattice(make_score("bic", data), children[:1], eps, 2, None, 1, None, None)
    print(f"{data.n} variables × {data.N} rows (simulated), BIC BF 3, one process; one-family walk vs lattice on "
          f"the first {len(children)} variables, then the whole file")
    print("| palim | one-family sets/s | lattice sets/s | speed-up | whole file: sets scored | kept | s | sets/s |")
    print("|---|---|---|---|---|---|---|---|")
    for palim in (int(p) for p in args.wide_palims.split(",")):
        score = make_score("bic", data)
        t0 = time.perf_counter()
        n_old = sum(walk_child(score, c, epsilon=eps, palim=palim)[1].scored for c in children)
        s_old = time.perf_counter() - t0
        t0 = time.perf_counter()
        res, _ = _run_lattice(make_score("bic", data), children, eps, palim, None, 1, None, None)
        s_new = time.perf_counter() - t0
        n_new = sum(st.scored for _, st in res)
        t0 = time.perf_counter()
        table = score_parent_sets(make_score("bic", data), epsilon=eps, palim=palim)
        s_all, scored = time.perf_counter() - t0, table.meta["scored"]
        print(f"| {palim} | {n_old / s_old:,.0f} | {n_new / s_new:,.0f} | {(n_new / s_new) / (n_old / s_old):.1f}× | "
              f"{scored:,} | {table.meta['kept']:,} | {s_all:.1f} | {scored / s_all:,.0f} |", flush=True)


def _peak_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("VmHWM"))


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as handle:
            kids += [int(k) for k in handle.read().split()]
    return kids


def _watch_children(peaks: dict[int, int], stop: threading.Event) -> None:
    """Peak RSS of every child process (the pool's workers exit when idle, so sample them while they run)."""
    while not stop.wait(0.5):
        for pid in _children(os.getpid()):
            with contextlib.suppress(OSError, StopIteration):
                peaks[pid] = max(peaks.get(pid, 0), _peak_kib(pid))


def _bign(queue: mp.Queue, jobs: int, counts: str) -> None:
    data = simulated(20, 1_000_000)
    # the peak so far: imports, the simulated codes, the NaN values array and the simulation's temporaries
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peaks: dict[int, int] = {}
    stop = threading.Event()
    watcher = threading.Thread(target=_watch_children, args=(peaks, stop), daemon=True)
    watcher.start()
    t0 = time.perf_counter()
    score = make_score("bic", data)
    table = score_parent_sets(score, epsilon=math.log(20), n_jobs=jobs, counts=counts)
    stop.set()
    watcher.join()
    workers = sorted((kib for kib in peaks.values() if kib > 100 * 1024), reverse=True)   # not the trackers
    queue.put((time.perf_counter() - t0, table.meta["scored"], table.meta["kept"], score.n_rows, rss0,
               resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, workers, table.meta["counts"]))


def bign(args) -> None:
    """10^6 rows: the whole file within ``--bign-limit`` seconds (else: not finished, and the peak memory)."""
    queue: mp.Queue = mp.Queue()
    proc = mp.Process(target=_bign, args=(queue, args.bign_jobs, args.bign_counts))
    t0 = time.perf_counter()
    proc.start()
    label = f"10^6 rows × 20 discrete variables, BIC BF 20, --jobs {args.bign_jobs}, counts {args.bign_counts}"
    while proc.is_alive() and time.perf_counter() - t0 < args.bign_limit and queue.empty():
        time.sleep(1.0)
    if queue.empty() and not proc.is_alive():   # it failed (its error above): not a run past the limit
        proc.join()
        raise SystemExit(f"{label}: the scoring process ended with exit code {proc.exitcode} after "
                         f"{time.perf_counter() - t0:.0f} s, without a result")
    if queue.empty():
        peak = _peak_kib(proc.pid)
        for pid in _children(proc.pid):
            os.kill(pid, signal.SIGTERM)
        proc.terminate()
        proc.join()
        print(f"{label}: not finished in {time.perf_counter() - t0:.0f} s; peak RSS {peak / 1024:.0f} MiB", flush=True)
        return
    seconds, scored, kept, rows, rss0, rss, workers, counting = queue.get()
    proc.join()
    extra = f", workers' peak RSS {', '.join(f'{w / 1024:.0f}' for w in workers)} MiB" if workers else ""
    print(f"{label}: {seconds:.1f} s, scored {scored:,}, kept {kept:,}, {rows:,} distinct rows; peak RSS "
          f"{rss / 1024:.0f} MiB (before scoring, after simulating the data: {rss0 / 1024:.0f} MiB){extra}; "
          f"counts {counting}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default="throughput,jobs,alarm,bign")
    parser.add_argument("--children", type=int, default=3)
    parser.add_argument("--jobs-data", default="alarm1000:20,hailfinder500:3",
                        help="data sets of the jobs part, NAME:BF (e.g. bands:3 for a longer job)")
    parser.add_argument("--before-limit", type=float, default=30.0)
    parser.add_argument("--throughput-data", default="alarm,alarm1000,letter",
                        help="data sets of the throughput part (alarm: its first variable only)")
    parser.add_argument("--bign-limit", type=float, default=1800.0, help="seconds for the 10^6-row part")
    parser.add_argument("--repeat", type=int, default=0,
                        help="jobs part: then this many rounds of the three configurations, medians")
    parser.add_argument("--bign-jobs", type=int, default=2, help="--jobs of the 10^6-row part")
    parser.add_argument("--bign-counts", default="auto", help="counts mode of the 10^6-row part")
    parser.add_argument("--wide-n", type=int, default=200, help="variables of the wide part")
    parser.add_argument("--wide-rows", type=int, default=50, help="rows of the wide part")
    parser.add_argument("--wide-palims", default="2,3", help="palims of the wide part")
    args = parser.parse_args()
    parts = {"throughput": throughput, "jobs": jobs, "alarm": alarm, "bign": bign, "wide": wide}
    unknown = [p for p in args.parts.split(",") if p not in parts]
    if unknown:
        parser.error(f"--parts: no part named {', '.join(map(repr, unknown))}; the parts are {', '.join(parts)}")
    if args.bign_counts not in COUNT_MODES:
        parser.error(f"--bign-counts: one of {', '.join(COUNT_MODES)}, not {args.bign_counts!r}")
    try:
        args.jobs_data = [(item.split(":")[0], int(item.split(":")[1])) for item in args.jobs_data.split(",")]
    except (IndexError, ValueError):
        parser.error(f"--jobs-data: comma-separated NAME:BF (e.g. bands:3), not {args.jobs_data!r}")
    wanted = {"throughput": ("--throughput-data", args.throughput_data.split(",")),
              "jobs": ("--jobs-data", [name for name, _ in args.jobs_data])}
    for part, (flag, names) in wanted.items():    # before any table is begun
        missing = [name for name in names if part in args.parts.split(",") and not (DATA / f"{name}.csv").is_file()]
        if missing:
            parser.error(f"{flag}: no {', '.join(f'{name}.csv' for name in missing)} in {DATA}")
    print(f"{os.cpu_count()} cores")
    for part in args.parts.split(","):
        parts[part](args)


if __name__ == "__main__":
    run_script(main)
