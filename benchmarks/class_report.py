"""The class report's cost: what a class enumeration spends after its search.

A class enumeration that passes ``--max-networks`` with ``--count-past-cap`` reports its best classes in full
(``credible_classes``: CPDAGs as edge sets, counted DAGs, edge shares; ``summarise_classes``: the JSON) and
sums the rest compactly (``class_tail_mass``). On the Table 1 rows that run to their 30-minute limit with a
million classes and more, that report runs after the limit, so its cost is time the user waits past it.

The search runs once (or its result is read back with ``--load``, so that two versions of the code time the
same classes); then each part of the report is timed, with classes per second, and the whole report's peak
memory above what the process held before it is printed:

    python benchmarks/class_report.py SCOREFILE --bf 3 --time-limit 150 --max-networks 50000 --jobs 2 \\
        [--save RESULT.pkl | --load RESULT.pkl]

SCOREFILE: a Jaakkola score file (``credible_table1.py --save-dir``). The pickle is this machine's scratch
(a ``SolveResult``), not an exchange format.
"""

from __future__ import annotations

import argparse
import math
import pickle
import resource
import time

from bnilp import ilp
from bnilp.mec import class_tail_mass, credible_classes
from bnilp.pipeline import _class_report, classes_whole
from bnilp.scorefile import read_jaakkola


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scorefile")
    parser.add_argument("--bf", type=float, default=3.0)
    parser.add_argument("--time-limit", type=float, default=150.0)
    parser.add_argument("--max-networks", type=int, default=50_000)
    parser.add_argument("--jobs", type=int, default=2, help="processes for the search (phase 2 in cubes)")
    parser.add_argument("--save", default="", help="write the search's result there")
    parser.add_argument("--load", default="", help="read the search's result from there instead of searching")
    args = parser.parse_args()
    table = read_jaakkola(args.scorefile)
    eps = math.log(args.bf)
    if args.load:
        with open(args.load, "rb") as fh:
            result = pickle.load(fh)
    else:
        result = ilp.solve(table, eps, enumerate_by="mecs", time_limit=args.time_limit,
                           max_networks=args.max_networks, count_past_cap=True, jobs=args.jobs)
        if args.save:
            with open(args.save, "wb") as fh:
                pickle.dump(result, fh)
    listed = len(result.networks)
    tail = len(result.unlisted) if result.unlisted is not None else 0
    print(f"{args.scorefile}: {listed:,} classes listed, {tail:,} past the cap ({result.status})")

    def timed(f):
        t0 = time.perf_counter()
        out = f()
        return time.perf_counter() - t0, out

    # the whole report first, as a run makes it (cold: its caches of component shapes empty), then its parts;
    # its memory: the process's peak resident size after it less its resident size before (Linux: KB)
    before, peak_before = _resident_kb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t_all, (report, _) = timed(lambda: _class_report(table, result, eps, "dags", False))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    grew = max(0, peak - before) * 1024
    bound = "" if peak > peak_before else "at most "       # the report never passed the peak of reading it
    whole = classes_whole(table, result, eps)     # as the report counts them (a file without its sidecar: not)
    t_listed, _ = timed(lambda: credible_classes(result.networks, table.families, table.variables,
                                                 complete_classes=whole))
    t_tail, mass = (timed(lambda: class_tail_mass(result.unlisted, table.families, table.variables,
                                                  result.optimum, "dags", complete_classes=whole))
                    if tail else (0.0, None))
    print(f"{'part':<44} {'classes':>10} {'s':>8} {'classes/s':>10}")
    for name, n, t in (("the whole report (_class_report)", listed + tail, t_all),
                       ("its listed classes: credible_classes", listed, t_listed),
                       ("its classes past the cap: class_tail_mass", tail, t_tail)):
        print(f"{name:<44} {n:>10,} {t:>8.2f} {n / max(t, 1e-9):>10,.0f}")
    print(f"posterior_classes {report['posterior_classes']:,}  posterior_dags {report['posterior_dags']:,}"
          + (f"  tail DAGs {mass.dags:,}" if mass is not None else ""))
    print(f"the whole report's peak memory over the result held: {bound}{grew / 2**20:,.0f} MB "
          f"({grew / max(listed + tail, 1) / 1024:.1f} KB a class)")


def _resident_kb() -> int:
    """This process's resident memory now (VmRSS, KB)."""
    with open("/proc/self/status", encoding="ascii") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("VmRSS:"))


if __name__ == "__main__":
    from common import run_script  # here: the tests load this script without its folder

    run_script(main)
