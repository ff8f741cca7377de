"""bnilp vs pygobnilp (Gurobi) on the same Jaakkola score files: time to a proven optimum.

pygobnilp 1.0 calls ``Model.addConstr(lhs, sense, rhs)``, which gurobipy 13 removed; this script
patches that call on pygobnilp's ``Gobnilp`` class and on the ``Model`` it uses for its cluster
sub-IP (both forward to ``addLConstr``). Gurobi's bundled licence is size-limited (2,000 variables
and 2,000 constraints), so only small score files run. Not installed with bnilp:

    pip install pygobnilp gurobipy
    python benchmarks/pygobnilp_compare.py ../scorefiles/wine.BIC.20.scores ...
"""

from __future__ import annotations

import argparse
import contextlib
import io
import time

import common  # noqa: F401  (BLAS threads)

from bnilp import ilp
from bnilp.scorefile import read_jaakkola


def _patched_pygobnilp():
    import gurobipy
    import pygobnilp.gobnilp as pg

    def add_constr(self, lhs, sense=None, rhs=None, name=""):
        if sense is None:
            return gurobipy.Model.addConstr(self, lhs, name=name)
        return self.addLConstr(lhs, sense, rhs, name=name)

    class PatchedModel(gurobipy.Model):
        addConstr = add_constr

    pg.Gobnilp.addConstr = add_constr
    pg.Model = PatchedModel
    return pg


def pygobnilp_optimum(path: str) -> tuple[float | None, float, str]:
    pg = _patched_pygobnilp()
    model = pg.Gobnilp()
    t0 = time.perf_counter()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            model.learn(local_scores_source=path, end="MIP solution", plot=False, output_dag=False,
                        output_cpdag=False, pruning=False)
        return float(model.ObjVal), time.perf_counter() - t0, "ok"
    except Exception as exc:  # Gurobi licence limits surface as GurobiError
        return None, time.perf_counter() - t0, f"failed: {str(exc).splitlines()[0][:60]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds for bnilp per file")
    args = parser.parse_args()
    print(f"{'file':<28} {'sets':>6} {'bnilp OPT':>16} {'bnilp s':>8} {'pygobnilp OPT':>16} {'pyg s':>8} "
          f"{'ratio':>6}  note")
    for path in args.files:
        table = read_jaakkola(path)
        t0 = time.perf_counter()
        ours = ilp.solve(table, 0.0, enumerate_ties=False, time_limit=args.time_limit)
        ours_s = time.perf_counter() - t0
        theirs, theirs_s, note = pygobnilp_optimum(path)
        ratio = f"{ours_s / theirs_s:>6.2f}" if theirs is not None else f"{'':>6}"
        their_opt = f"{theirs:>16.6f}" if theirs is not None else f"{'—':>16}"
        print(f"{path.split('/')[-1]:<28} {table.n_parent_sets():>6} {ours.optimum:>16.6f} {ours_s:>8.2f} "
              f"{their_opt} {theirs_s:>8.2f} {ratio}  bnilp {ours.status}, gap {ours.gap:.2e}; pygobnilp {note}",
              flush=True)


if __name__ == "__main__":
    main()
