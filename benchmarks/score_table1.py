"""Scoring benchmark (issue 12): every Table 1 data set, BIC and BDeu (ESS 1), BF 3 and 150, no palim.

Each run is a child process with a time limit (default 30 minutes, the issue's bound); a run past it is
reported as such, with how many children's walks had ended by then and the sets they scored; so is a
run whose walk stopped itself short of memory ("memory limit", with the free memory it saw). Prints,
per data set, score and BF: seconds of the scoring call (``score_parent_sets``, the score's construction
included; reading the file is ``load_seconds``, "load s"), parent sets scored and kept, the largest kept
parent set, and the seed's parent limit beside ours (none: the rules bound the size).

The seed's limit ("seed palim", ``seed_palim``) is, for BIC, ⌊log2 N + ln BF⌋ + 1 with N the file's
rows: Corollary 1 of the paper (sets of more than ⌈log2 N + ε⌉ parents can be pruned; its table, BF 20:
13 at N = 1,000) and what eBNSL's scoring script computed from May 2019 (``run_csv.sh``) to January 2020
(``gen_score.sh``: bc truncating l(N)/l(2)+l(BF)+1, N = ``wc -l``, lines − 2 before September 2019). Its
last version (commit fe66380) computes ⌊log2(N + ln BF)⌋ + 1 instead, about ⌊log2 N⌋ + 1 whatever the BF
(recorded as ``ebnsl_final_palim``). For BDeu the seed set no such limit — Table 1 is BIC only, and
``gen_score.sh`` sets a palim only for BIC (its BDeu runs got GOBNILP's default of 3) — so "—" (null).

Results are appended to a JSON-lines file as they come, so a long sweep can be read while it runs and
resumed (``--resume`` skips rows already there with the same data, score, BF, ``--counts`` and
``--score-time-limit``). The default output folder, ``benchmarks/results/``, is git-ignored.

    OPENBLAS_NUM_THREADS=1 python benchmarks/score_table1.py [--jobs 2] [--scores bic,bdeu] [--bfs 3,150]
        [--only wine,zoo] [--limit 1800] [--out benchmarks/results/score_table1.jsonl] [--resume] [--write]
        [--write-dir DIR] [--counts auto|subsets|families] [--score-time-limit S]

``--write`` keeps each row's score file as ``NAME.SCORE.BF.scores`` in ``--write-dir`` (by default the repository's
``scorefiles/``, whose files the tests read: write elsewhere to keep them as they are).

``--score-time-limit S`` scores each row with ``score_parent_sets(time_limit=S)`` (iterative deepening
over the palim): a row that does not finish reports the palim for which its file is exact ("exact ≤ K").
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import queue as queue_module
import time
from pathlib import Path

from common import ROOT, data_path, table1

from bnilp.data import load_data
from bnilp.errors import LimitError
from bnilp.lattice import stop_pool
from bnilp.parentsets import score_parent_sets
from bnilp.scorefile import write_jaakkola
from bnilp.scores import make_score


def _one(path: str, score_name: str, bf: float, jobs: int, write: str | None, counts: str,
         time_limit: float | None, queue: mp.Queue) -> None:
    t0 = time.perf_counter()
    data = load_data(path, no_header=True, integer_codes=True)
    settings = {"ess": 1.0} if score_name == "bdeu" else {}
    started = time.perf_counter()   # "seconds" is the scoring call alone; reading the file is "load_seconds"
    load_seconds = round(started - t0, 2)

    def finished(stats) -> None:   # one message a child walked to its end: what a cut run got through
        if not stats.finished:     # a running walk's level
            return
        queue.put({"child_done": stats.child, "scored": stats.scored, "at": round(time.perf_counter() - started, 1)})

    try:
        table = score_parent_sets(make_score(score_name, data, **settings), epsilon=math.log(bf), n_jobs=jobs,
                                  counts=counts, time_limit=time_limit, progress=None if time_limit else finished)
    except LimitError as exc:     # the walk stopped itself short of memory: no table, the reason
        queue.put({"limited": str(exc), "seconds": round(time.perf_counter() - started, 1),
                   "load_seconds": load_seconds})
        return
    seconds = time.perf_counter() - started
    stop_pool()   # the idle workers would hold this process open for their 30 s timeout
    if write:
        write_jaakkola(table, write)
    sizes = [st["max_kept_size"] for st in table.meta["per_variable"].values()]
    queue.put({"n": data.n, "N": data.N, "seconds": round(seconds, 2), "load_seconds": load_seconds,
               "scored": table.meta["scored"],
               "kept": table.meta["kept"], "max_kept_size": max(sizes), "pruned": table.meta["pruned"],
               "counts": table.meta["counts"],
               "exact_up_to": table.meta["exact_for_parent_sets_up_to"] if table.meta["palim_reached"] else None,
               "deepening": table.meta.get("deepening")})


def records(path: Path) -> int:
    """The data rows of a headerless CSV (its non-blank lines; the last one may lack a newline)."""
    with open(path, "rb") as handle:
        return sum(1 for line in handle if line.strip())


def seed_palim(score_name: str, n_rows: int, bf: float) -> int | None:
    """The seed's parent limit: ⌊log2 N + ln BF⌋ + 1 for BIC (Corollary 1), none for other scores."""
    return math.floor(math.log2(n_rows) + math.log(bf)) + 1 if score_name == "bic" else None


def ebnsl_final_palim(score_name: str, n_rows: int, bf: float) -> int | None:
    """What eBNSL's last ``gen_score.sh`` computes, ⌊log2(N + ln BF)⌋ + 1, for BIC; none for other scores."""
    return math.floor(math.log2(n_rows + math.log(bf))) + 1 if score_name == "bic" else None


def run(row: dict, score_name: str, bf: float, jobs: int, limit: float, write: str | None,
        counts: str = "auto", time_limit: float | None = None) -> dict:
    queue: mp.Queue = mp.Queue()
    proc = mp.Process(target=_one, args=(str(data_path(row)), score_name, bf, jobs, write, counts, time_limit,
                                         queue))
    t0 = time.perf_counter()
    proc.start()
    children: list[dict] = []
    res = None
    while res is None and time.perf_counter() - t0 < limit and (proc.is_alive() or not queue.empty()):
        try:
            msg = queue.get(timeout=min(5.0, max(limit - (time.perf_counter() - t0), 0.01)))
        except queue_module.Empty:
            continue
        if "child_done" in msg:
            children.append(msg)
        else:
            res = msg
    proc.join(5 if res is not None else 0)
    cut = {"children_finished": len(children), "scored_by_finished": sum(c["scored"] for c in children),
           "last_child_finished_at": children[-1]["at"] if children else None}
    if res is None and proc.is_alive():
        proc.terminate()
        proc.join()
        return {"status": "time limit", "seconds": round(time.perf_counter() - t0, 1), **cut}
    if res is None:
        return {"status": f"failed (exit {proc.exitcode})", "seconds": round(time.perf_counter() - t0, 1), **cut}
    if "limited" in res:
        return {"status": "memory limit", "reason": res["limited"], "seconds": res["seconds"],
                "load_seconds": res["load_seconds"], **cut}
    return {"status": "ok" if res["exact_up_to"] is None else f"exact ≤ {res['exact_up_to']}", **res}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scores", default="bic,bdeu")
    parser.add_argument("--bfs", default="3,150")
    parser.add_argument("--only", default="")
    parser.add_argument("--max-n", type=int, default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--limit", type=float, default=1800.0, help="seconds per run (default 30 minutes)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "score_table1.jsonl"))
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--write", action="store_true", help="write NAME.SCORE.BF.scores into --write-dir")
    parser.add_argument("--write-dir", default=str(ROOT / "scorefiles"),
                        help="folder of the --write files (default: the repository's scorefiles/)")
    parser.add_argument("--counts", default="auto", help="auto, subsets or families (score_parent_sets)")
    parser.add_argument("--score-time-limit", type=float, default=None,
                        help="deepen the palim for at most this many seconds (score_parent_sets(time_limit=))")
    args = parser.parse_args()
    if args.score_time_limit is not None:   # the child's own limit only guards against a stuck run
        args.limit = max(args.limit, 2 * args.score_time_limit + 60)
    rows = table1(args.max_n, [s for s in args.only.split(",") if s])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.write:
        Path(args.write_dir).mkdir(parents=True, exist_ok=True)
    done = set()
    if args.resume and out.exists():
        done = {(r["data"], r["score"], r["bf"], r.get("counts_mode", "auto"), r.get("score_time_limit"))
                for r in map(json.loads, out.read_text().splitlines())}
    print(f"{os.cpu_count()} cores, --jobs {args.jobs}, limit {args.limit:g} s per run, no palim, counts {args.counts}"
          + (f", deepening for {args.score_time_limit:g} s" if args.score_time_limit else ""))
    print(f"{'data':<14} {'score':<5} {'BF':>4} {'n':>3} {'N':>6} {'status':<10} {'seconds':>8} {'load s':>6} "
          f"{'scored':>10} {'kept':>8} {'max |Π|':>7} {'seed palim':>10} {'counted by'}")
    for score_name in args.scores.split(","):
        for bf in (float(b) for b in args.bfs.split(",")):
            for row in rows:
                key = (row["name"], score_name, bf, args.counts, args.score_time_limit)
                if key in done:
                    continue
                write = str(Path(args.write_dir) / f"{row['name']}.{score_name.upper()}.{bf:g}.scores") \
                    if args.write else None
                res = run(row, score_name, bf, args.jobs, args.limit, write, args.counts, args.score_time_limit)
                n_rows = records(data_path(row))     # the file's N, also where the run stopped before loading
                seed = seed_palim(score_name, n_rows, bf)
                rec = {"data": row["name"], "score": score_name, "bf": bf, "jobs": args.jobs, "seed_palim": seed,
                       "ebnsl_final_palim": ebnsl_final_palim(score_name, n_rows, bf),
                       "counts_mode": args.counts, "score_time_limit": args.score_time_limit, **res}
                with open(out, "a") as handle:
                    handle.write(json.dumps(rec) + "\n")
                print(f"{row['name']:<14} {score_name:<5} {bf:>4g} {res.get('n', row['n']):>3} "
                      f"{res.get('N', n_rows):>6} {res['status']:<10.10} {res.get('seconds', ''):>8} "
                      f"{res.get('load_seconds', ''):>6} "
                      f"{res.get('scored', ''):>10} {res.get('kept', ''):>8} {res.get('max_kept_size', ''):>7} "
                      f"{'—' if seed is None else seed:>10} {(res.get('counts') or {}).get('mode', '')}", flush=True)
                if len(res["status"]) > 10:     # the whole status under the row (the column keeps its width)
                    print(f"{'':<14} status: {res['status']}", flush=True)
                if "reason" in res:
                    print(f"{'':<14} {res['reason']}", flush=True)
                if "children_finished" in res and not res["status"].startswith("failed"):
                    last = res['last_child_finished_at']
                    tail = "" if last is None else f", the last at {last} s"
                    print(f"{'':<14} at the limit: {res['children_finished']} of {row['n']} children walked to "
                          f"their end ({res['scored_by_finished']:,} sets scored by them{tail})", flush=True)


if __name__ == "__main__":
    main()
