"""bnilp vs pygobnilp (Gurobi) on the same Jaakkola score files: time to a proven optimum.

Whole process, one optimal network: bnilp is timed as ``bnilp solve FILE --optimum-only -q`` in a
fresh interpreter, pygobnilp as a fresh interpreter that imports it, reads the file and solves
(``--pygobnilp-python`` picks that interpreter, e.g. a venv with pygobnilp and gurobipy). Prints
the ratio bnilp / pygobnilp per file and their geometric mean over the files that count: bnilp proved
its optimum (status optimal, not stopped at ``--time-limit``), pygobnilp solved, and the two optima agree
within 1e-6 (``OPT_TOLERANCE``). Any other row shows its ratio in brackets and says why it is left out.

pygobnilp 1.0 calls ``Model.addConstr(lhs, sense, rhs)``, which gurobipy 13 removed; this script
patches that call on pygobnilp's ``Gobnilp`` class and on the ``Model`` it uses for its cluster
sub-IP (both forward to ``addLConstr``). Gurobi's bundled licence is size-limited (2,000 variables
and 2,000 constraints), so only small score files run. Not installed with bnilp:

    python -m venv --system-site-packages /tmp/pgv && /tmp/pgv/bin/pip install pygobnilp gurobipy
    python benchmarks/pygobnilp_compare.py --pygobnilp-python /tmp/pgv/bin/python scorefiles/wine.BIC.20.scores ...
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import common  # noqa: F401  (BLAS threads)

from bnilp.scorefile import read_jaakkola

ROOT = Path(__file__).resolve().parent.parent
#: the two optima must agree this closely for a row to enter the geometric mean
OPT_TOLERANCE = 1e-6


def left_out(ours: float | None, status: str, theirs: float | None, note: str) -> str:
    """Why a row does not count ("" when it does): both proved an optimum and the optima agree."""
    if ours is None or status != "optimal":
        return f"bnilp {status}"
    if theirs is None or note != "ok":
        return "pygobnilp did not solve"
    if abs(ours - theirs) >= OPT_TOLERANCE:
        return f"optima differ by {ours - theirs:.3g}"
    return ""


def _bnilp_process(path: str, time_limit: float) -> tuple[float | None, float, str]:
    """(OPT, wall seconds, status) of ``bnilp solve PATH --optimum-only`` in a fresh interpreter."""
    out = Path(f"/tmp/bnilp_compare_{os.getpid()}.json")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-c", "from bnilp.cli import main; main()", "solve", path, "--optimum-only", "-q",
           "--time-limit", str(time_limit), "--json", str(out)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if not out.exists():
        return None, wall, f"failed (exit {proc.returncode})"
    doc = json.loads(out.read_text())
    out.unlink()
    return doc["optimum"], wall, doc["status"]


_PYGOBNILP_SCRIPT = """
import contextlib, io, sys
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
model = pg.Gobnilp()
try:
    with contextlib.redirect_stdout(io.StringIO()):
        model.learn(local_scores_source=sys.argv[1], end="MIP solution", plot=False, output_dag=False,
                    output_cpdag=False, pruning=False)
    print(repr((float(model.ObjVal), "ok")))
except Exception as exc:
    print(repr((None, "failed: " + str(exc).splitlines()[0][:60])))
"""


def _pygobnilp_process(python: str, path: str) -> tuple[float | None, float, str]:
    """(OPT, wall seconds, note) of pygobnilp in a fresh interpreter (with the patch described above)."""
    t0 = time.perf_counter()
    proc = subprocess.run([python, "-c", _PYGOBNILP_SCRIPT, path], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    try:
        value, note = ast.literal_eval(proc.stdout.strip().splitlines()[-1])
    except (IndexError, SyntaxError, ValueError):
        return None, wall, f"failed: {proc.stderr.strip().splitlines()[-1][:60] if proc.stderr.strip() else '?'}"
    return value, wall, note


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds for bnilp per file")
    parser.add_argument("--pygobnilp-python", default=sys.executable,
                        help="interpreter with pygobnilp and gurobipy installed")
    args = parser.parse_args()
    print(f"{'file':<28} {'sets':>6} {'bnilp OPT':>16} {'bnilp s':>8} {'pygobnilp OPT':>16} {'pyg s':>8} "
          f"{'ratio':>6}  note")
    ratios = []
    for path in args.files:
        table = read_jaakkola(path)
        ours, ours_s, status = _bnilp_process(path, args.time_limit)
        theirs, theirs_s, note = _pygobnilp_process(args.pygobnilp_python, path)
        why = left_out(ours, status, theirs, note)
        ratio = f"{ours_s / theirs_s:.2f}" if theirs is not None and ours is not None else ""
        if why:
            ratio = f"({ratio})" if ratio else ""
        else:
            ratios.append(ours_s / theirs_s)
        their_opt = f"{theirs:>16.6f}" if theirs is not None else f"{'—':>16}"
        our_opt = f"{ours:>16.6f}" if ours is not None else f"{'—':>16}"
        print(f"{path.split('/')[-1]:<28} {table.n_parent_sets():>6} {our_opt} {ours_s:>8.2f} "
              f"{their_opt} {theirs_s:>8.2f} {ratio:>6}  bnilp {status}; pygobnilp {note}"
              + (f"; NOT COUNTED: {why}" if why else ""), flush=True)
    if ratios:
        print(f"geometric mean of the time ratio over {len(ratios)} of {len(args.files)} files (both optimal, "
              f"optima within {OPT_TOLERANCE:g}): {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}")
    else:
        print(f"no file counts (both optimal, optima within {OPT_TOLERANCE:g}): no geometric mean")


if __name__ == "__main__":
    main()
