"""Phase 2's no-goods, lazily (a hash set, rows cut in on demand) against constraints of the model.

    OPENBLAS_NUM_THREADS=1 python benchmarks/nogoods.py FILE.jkl … --bf 150 [--enumerate mecs|dags]
        [--time-limit 240] [--modes lazy,constraints] [--branch-and-cut]

For each Jaakkola score file and each ``NOGOODS`` mode of :mod:`bnilp.ilp.settings` (one after the other, the
same process), one solve at ``--bf``: how many DAGs or classes phase 2 had listed after 15, 30, 60, 120, 240, …
seconds of phase 2 — the rate over time shows whether each node's cost grows with what was found — then
the status, the total, phase 2's seconds, nodes and no-goods cut in again (``nogood_recut``). Where every mode
finished, the listed sets must be identical (DAGs by their parent sets, classes by their Verma–Pearl key)
and the script says so; it exits 1 if they differ. ``--branch-and-cut`` turns the dynamic programme off
(``DP_MAX_VARIABLES = 0``), so files of up to 22 variables are listed by branch-and-cut too. Without it such
files are listed by peeling, which has no no-goods: every mode then runs the same code, and the script
warns (phase 2's ``method`` in the result's stats).
"""

from __future__ import annotations

import argparse
import math
import os
import time

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


from bnilp import ilp  # noqa: E402
from bnilp.ilp import settings  # noqa: E402
from bnilp.mec import mec_key  # noqa: E402
from bnilp.scorefile import read_jaakkola  # noqa: E402

MARKS = (15, 30, 60, 120, 240, 480, 900, 1800, 3600)


def _listing(table, bf: float, unit: str, time_limit: float | None) -> tuple[ilp.SolveResult, list[tuple[int, int]]]:
    """One solve; the (mark, networks listed) pairs of phase 2 as it passed each mark."""
    seen: list[tuple[int, int]] = []
    start: list[float] = []

    def progress(d: dict) -> None:
        if d["phase"] != "enumerate":
            return
        if not start:
            start.append(d["elapsed"])
        t = d["elapsed"] - start[0]
        while len(seen) < len(MARKS) and t >= MARKS[len(seen)]:
            seen.append((MARKS[len(seen)], d["networks"]))

    res = ilp.solve(table, math.log(bf), time_limit=time_limit, enumerate_by=unit, max_networks=10 ** 9,
                    progress=progress)
    return res, seen


def _keys(res: ilp.SolveResult, unit: str) -> set:
    if unit == "mecs":
        return {mec_key(nw.parents) for nw in res.networks}
    return {tuple(sorted((v, tuple(sorted(p))) for v, p in nw.parents.items())) for nw in res.networks}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--bf", type=float, required=True)
    parser.add_argument("--enumerate", choices=settings.ENUMERATE_UNITS, default="mecs")
    parser.add_argument("--time-limit", type=float, default=240.0)
    parser.add_argument("--modes", default=",".join(settings.NOGOODS_MODES))
    parser.add_argument("--branch-and-cut", action="store_true", help="DP_MAX_VARIABLES = 0")
    parser.add_argument("--no-warm-up", dest="warm_up", action="store_false",
                        help="skip the untimed listing (30 s at most) of each file before its modes (without it the "
                             "first mode pays the process's first solve: on wine 6.3 s of phase 2 against 0.6 s)")
    args = parser.parse_args(argv)
    modes = args.modes.split(",")
    unit = args.enumerate
    print(f"{'file':26} {'mode':12} {'status':10} {unit:>8} {'phase 2 s':>9} {'per s':>7} {'nodes':>8} "
          f"{'recut':>6}  listed after 15, 30, 60, … s of phase 2")
    bad = False
    saved_dp, saved_mode = settings.DP_MAX_VARIABLES, settings.NOGOODS
    try:
        if args.branch_and_cut:
            settings.DP_MAX_VARIABLES = 0
        for path in args.files:
            table = read_jaakkola(path)
            name = os.path.basename(path)
            done: dict[str, set] = {}
            totals: dict[str, float] = {}
            methods: set[str] = set()
            if args.warm_up:            # the kernels' and SCIP's first loading, outside every timed mode
                warm, _ = _listing(table, args.bf, unit, min(30.0, args.time_limit))
                print(f"{name:26} {'(warm-up)':12} {warm.status[:10]:10} untimed", flush=True)
            for mode in modes:
                settings.NOGOODS = mode
                t0 = time.perf_counter()
                res, seen = _listing(table, args.bf, unit, args.time_limit)
                s2 = res.stats.get("phase2", {})
                sec2 = s2.get("seconds", time.perf_counter() - t0)
                count = len(res.networks)
                totals[mode] = count / sec2 if sec2 else float("nan")
                print(f"{name:26} {mode:12} {res.status[:10]:10} {count:>8} {sec2:>9.1f} {totals[mode]:>7.1f} "
                      f"{s2.get('nodes', 0):>8} {s2.get('cuts', {}).get('nogood_recut', 0):>6}  "
                      + ", ".join(f"{n}" for _, n in seen), flush=True)
                if "method" in s2:   # none when phase 2 did not run (phase 1 stopped)
                    methods.add(s2["method"])
                if res.status == "optimal":
                    done[mode] = _keys(res, unit)
            if methods - {"branch-and-cut"}:
                print(f"{'':26} WARNING: phase 2 listed by {', '.join(sorted(methods))}, not branch-and-cut: "
                      f"NOGOODS plays no part there, so the modes ran the same code (--branch-and-cut lists "
                      f"files of up to 22 variables by branch-and-cut)", flush=True)
            if len(done) == len(modes) > 1:
                same = all(k == done[modes[0]] for k in done.values())
                bad |= not same
                print(f"{'':26} every mode finished: the listed {unit} are "
                      + ("identical" if same else "DIFFERENT"), flush=True)
            if len(totals) > 1:
                base = totals[modes[0]]
                print(f"{'':26} {unit} per second of phase 2, {modes[0]} over "
                      + ", ".join(f"{m}: {base / v:.2f}×" if v else f"{m}: —" for m, v in totals.items()
                                  if m != modes[0]), flush=True)
    finally:
        settings.DP_MAX_VARIABLES, settings.NOGOODS = saved_dp, saved_mode
    return 1 if bad else 0


if __name__ == "__main__":
    from common import run_script  # here: the tests load this script without its folder

    run_script(main)
