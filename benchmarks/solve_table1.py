"""Time bnilp.ilp on Jaakkola score files: phase 1 (OPT) and phase 2 (credible sets at given BFs).

    OPENBLAS_NUM_THREADS=1 python benchmarks/solve_table1.py ../shared/data/liao2019_ebnsl/scores/wine.BIC.3 --bf 1 3

Prints, per file, the phase-1 time, cluster cuts, LP solves, nodes and OPT, then for every Bayes
factor the number of credible networks, the phase-2 time and networks per second. ``--param`` sets
a SCIP parameter of both phases (``--param separating/maxroundsroot=5``) to compare settings.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


from bnilp import ilp  # noqa: E402
from bnilp.scorefile import read_jaakkola  # noqa: E402


def _parse_param(text: str) -> tuple[str, object]:
    name, _, raw = text.partition("=")
    value: object
    if raw.lower() in ("true", "false"):
        value = raw.lower() == "true"
    else:
        for kind in (int, float, str):
            try:
                value = kind(raw)
                break
            except ValueError:
                continue
    return name, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="Jaakkola score files")
    parser.add_argument("--bf", type=float, nargs="*", default=[1.0, 3.0],
                        help="Bayes factors for the credible sets (1 = all optimal networks)")
    parser.add_argument("--time-limit", type=float, default=None, help="seconds per solve")
    parser.add_argument("--max-networks", type=int, default=ilp.DEFAULT_MAX_NETWORKS)
    parser.add_argument("--repeat", type=int, default=1, help="repeat each solve, report the fastest")
    parser.add_argument("--param", action="append", default=[], type=_parse_param,
                        help="SCIP parameter NAME=VALUE for both phases (repeatable)")
    args = parser.parse_args(argv)
    for name, value in args.param:
        ilp.SCIP_PARAMS[name] = value

    header = (f"{'file':28} {'n':>3} {'fams':>6} {'phase1 s':>9} {'cuts':>6} {'enfo':>5} {'LPs':>6} "
              f"{'nodes':>6} {'OPT':>20}")
    print(header)
    rows2 = []
    for path in args.files:
        table = read_jaakkola(path)
        name = os.path.basename(path)
        best = None
        for _ in range(args.repeat):
            res = ilp.solve(table, 0.0, enumerate_ties=False, time_limit=args.time_limit)
            if best is None or res.stats["phase1"]["seconds"] < best.stats["phase1"]["seconds"]:
                best = res
        assert best is not None
        s1 = best.stats["phase1"]
        cuts = s1["cuts"]
        enfo = cuts.get("enfolp", 0) + cuts.get("enfops", 0)
        opt = "-" if best.optimum is None else repr(best.optimum)
        print(f"{name:28} {len(table.variables):>3} {table.n_parent_sets():>6} {s1['seconds']:>9.2f} "
              f"{cuts.get('sepa', 0):>6} {enfo:>5} {s1['lps']:>6} {s1['nodes']:>6} {opt:>20}"
              + ("" if best.status == "optimal" else f"  [{best.status}]"))
        sys.stdout.flush()
        for bf in args.bf:
            eps = math.log(bf)
            fastest = None
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                res = ilp.solve(table, eps, time_limit=args.time_limit, max_networks=args.max_networks)
                wall = time.perf_counter() - t0
                if fastest is None or wall < fastest[0]:
                    fastest = (wall, res)
            assert fastest is not None
            wall, res = fastest
            s2 = res.stats.get("phase2", {})
            rows2.append((name, bf, res, wall, s2))
    print()
    print(f"{'file':28} {'BF':>6} {'networks':>9} {'status':>13} {'total s':>8} {'phase2 s':>9} "
          f"{'nets/s':>8} {'collected':>9} {'cuts':>6} {'nodes':>7} {'py sepa s':>9}")
    for name, bf, res, wall, s2 in rows2:
        sec2 = s2.get("seconds", float("nan"))
        rate = len(res.networks) / sec2 if sec2 and sec2 > 0 else float("nan")
        cuts2 = sum(v for k, v in s2.get("cuts", {}).items() if k != "nogood")
        print(f"{name:28} {bf:>6g} {len(res.networks):>9} {res.status:>13} {wall:>8.2f} {sec2:>9.2f} "
              f"{rate:>8.1f} {s2.get('collected', 0):>9} {cuts2:>6} {s2.get('nodes', 0):>7} "
              f"{s2.get('python_sepa_seconds', 0.0):>9.2f}")
    return 0


if __name__ == "__main__":
    from common import run_script  # here: the tests load this script without its folder

    run_script(main)
