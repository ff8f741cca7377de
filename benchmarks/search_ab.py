"""A/B of search settings on phase 1 (OPT) of Jaakkola score files, interleaved in one run.

    OPENBLAS_NUM_THREADS=1 python benchmarks/search_ab.py scorefiles/adult.BIC.20.scores \
        --config base:SUBIP_MODE=off --config subip:SUBIP_MODE=fallback [--repeat 2] [--time-limit 200] [--bf 3]

Each ``--config NAME:KEY=VALUE,KEY=VALUE`` sets constants of :mod:`bnilp.ilp.settings` for that run
only (``SCIP/NAME=V``: a SCIP parameter of both phases; ``P2/NAME=V``: one of phase 2 only;
``NAME.ITEM=V`` or ``NAME.ITEM=off``: one entry of a dict constant, e.g. ``MEC_BRANCH_PRIORITY.col=off``;
``NAME={}``: an empty dict).
Configurations alternate per file and per repeat, so machine load affects them alike; their order rotates
from one repeat to the next, and each file is first solved once untimed under the default settings: the
process's first solve, and the first of a search route (dynamic programming, SCIP), pays one-off costs
(imports, loading SCIP and the compiled kernels: seconds) that would otherwise fall on whichever
configuration came first (nothing is cached on the table between solves; ``--no-warm-up`` skips it). Prints wall and
process CPU seconds, nodes, LP iterations and the split of time (SCIP's LP and strong-branching
clocks, the cluster handler's heuristic and sub-IP separation), then the ratio of each
configuration's median CPU seconds (with ``--bf``: networks per CPU second, both phases) to the first
one's — CPU time is far less disturbed than wall time by other jobs on a shared machine.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


from bnilp import ilp  # noqa: E402
from bnilp.ilp import settings  # noqa: E402
from bnilp.scorefile import read_jaakkola  # noqa: E402


def _value(raw: str) -> object:
    if raw == "{}":
        return {}
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    return raw


def _config(text: str) -> tuple[str, dict[str, object]]:
    name, _, rest = text.partition(":")
    pairs = {}
    for item in filter(None, rest.split(",")):
        key, _, raw = item.partition("=")
        pairs[key] = _value(raw)
    return name, pairs


def _apply(pairs: dict[str, object]) -> dict[str, object]:
    """Set the constants; return what to restore."""
    undo: dict[str, object] = {}
    for key, value in pairs.items():
        if key.startswith(("SCIP/", "P2/")):
            params = settings.SCIP_PARAMS if key.startswith("SCIP/") else settings.PHASE2_PARAMS
            param = key.split("/", 1)[1]
            undo[key] = params.get(param, _MISSING)
            params[param] = value
        else:   # NAME=V, or NAME.ITEM=V / NAME.ITEM=off: one entry of a dict constant
            name, _, item = key.partition(".")
            undo.setdefault(name, getattr(settings, name))
            if item:
                entries = dict(getattr(settings, name))
                if value == "off":
                    entries.pop(item, None)
                else:
                    entries[item] = value
                value = entries
            setattr(settings, name, value)
    return undo


def _restore(undo: dict[str, object]) -> None:
    for key, value in undo.items():
        if key.startswith(("SCIP/", "P2/")):
            params = settings.SCIP_PARAMS if key.startswith("SCIP/") else settings.PHASE2_PARAMS
            if value is _MISSING:
                params.pop(key.split("/", 1)[1], None)
            else:
                params[key.split("/", 1)[1]] = value
        else:
            setattr(settings, key, value)


_MISSING = object()


def _solve(table, args):
    if args.bf is None:
        return ilp.solve(table, 0.0, enumerate_ties=False, time_limit=args.time_limit)
    return ilp.solve(table, math.log(args.bf), time_limit=args.time_limit, enumerate_by=args.enumerate)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--config", action="append", type=_config, required=True)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--bf", type=float, default=None,
                        help="also list the credible set at this Bayes factor (phase 2: networks/s)")
    parser.add_argument("--enumerate", choices=("dags", "mecs"), default="dags",
                        help="with --bf: list DAGs or one representative per class")
    parser.add_argument("--no-warm-up", dest="warm_up", action="store_false",
                        help="no untimed solve of each file before its timed runs")
    args = parser.parse_args(argv)
    print(f"{'file':24} {'config':10} {'phase 1':12} {'s':>7} {'cpu s':>7} {'nodes':>6} {'LP it':>8} {'LP s':>6} "
          f"{'SB s':>6} "
          f"{'heur s':>6} {'subip s':>7} {'calls':>5} {'cuts':>5} {'subip cuts':>10} OPT")
    for path in args.files:
        table = read_jaakkola(path)
        name = os.path.basename(path)
        times: dict[str, list[float]] = {c: [] for c, _ in args.config}
        if args.warm_up:
            t0 = time.perf_counter()
            res = _solve(table, args)
            print(f"{name:24} {'(warm-up)':10} {res.status:12} {time.perf_counter() - t0:>7.2f} untimed",
                  flush=True)
        for rep in range(args.repeat):
            shift = rep % len(args.config)   # each configuration in turn goes first
            for cname, pairs in args.config[shift:] + args.config[:shift]:
                undo = _apply(pairs)
                cpu0 = time.process_time()
                try:
                    res = _solve(table, args)
                finally:
                    _restore(undo)
                cpu = time.process_time() - cpu0
                s = res.stats["phase1"]
                tm = s.get("timing", {})
                times[cname].append(cpu)
                phase1 = "OPT proven" if res.optimum_proven else res.status    # not the whole solve's status
                print(f"{name:24} {cname:10} {phase1:12} {s['seconds']:>7.2f} {cpu:>7.2f} {s['nodes']:>6} "
                      f"{s['lp_iterations']:>8} {tm.get('lp', 0):>6.1f} {tm.get('strong_branching_lp', 0):>6.1f} "
                      f"{s['sepa_heuristic_seconds']:>6.1f} {s['subip_seconds']:>7.1f} {s['subip_calls']:>5} "
                      f"{s['cuts_total']:>5} {s['cuts'].get('subip', 0):>10} {res.optimum}", flush=True)
                if args.bf is not None:
                    s2 = res.stats.get("phase2", {})
                    sec2 = s2.get("seconds", float("nan"))
                    tm2 = s2.get("timing", {})
                    print(f"{'':24} {cname:10} phase 2 BF {args.bf:g}: {len(res.networks)} networks, {res.status}, "
                          f"{sec2:.2f} s, {len(res.networks) / sec2:.1f} networks/s, nodes {s2.get('nodes')}, "
                          f"LP s {tm2.get('lp', 0):.1f}, enforce s {s2.get('python_enforce_seconds', 0):.1f}",
                          flush=True)
                    times[cname][-1] = len(res.networks) / cpu
        first = statistics.median(times[args.config[0][0]])
        what = "networks per CPU second (both phases)" if args.bf is not None else "CPU seconds"
        print(f"  median {what}, ratio to " + args.config[0][0] + ": "
              + ", ".join(f"{c} {statistics.median(t) / first:.2f}" for c, t in times.items()), flush=True)
    return 0


if __name__ == "__main__":
    from common import run_script  # here: the tests load this script without its folder

    run_script(main)
