"""MVP's least squares against exact rational least squares: how far ℓ is from the true fit of the given floats.

Run: ``python benchmarks/mvp_accuracy.py [--rows 500] [--seed 3]``. Each case is one family of two or three
continuous parents and a continuous or discrete child, no discrete parent (one cell, degree ⌊ln N⌋ = 6 at 500
rows): ℓ by bnilp (per-cell orthonormal bases, :mod:`bnilp.scores.mvp`), by ``np.linalg.lstsq`` on the paper's
standardised powers (the computation before), and exactly — the normal equations of the raw powers x^k, taken
exactly, solved over the rationals (``tests.oracles.exact_least_squares``: every float is a rational, so this
is the least-squares fit of the data as given). The table prints |ℓ − exact| in nats for both.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from common import ROOT

sys.path.insert(0, str(ROOT))

from bnilp.scores.mvp import MixedVariablePolynomial  # noqa: E402
from tests.mixed_helpers import make_dataset  # noqa: E402
from tests.oracles import exact_least_squares, exact_variance, power_columns  # noqa: E402


def cases(rows: int, rng: np.random.Generator) -> list[tuple[str, list[np.ndarray], str]]:
    """(label, columns: parents then the child, kinds)."""
    x = rng.normal(size=rows)
    w = rng.normal(size=rows)
    noise = rng.normal(size=rows)
    out = []
    for gap in (1e-2, 1e-4, 1e-6):
        x2 = 2 * x + gap * rng.normal(size=rows)
        out.append((f"x2 = 2·x1 + {gap:g}·noise, continuous y", [x, x2, x ** 2 - x2 + 0.3 * noise], "ccc"))
        labels = (x + 0.5 * noise > 0).astype(int) + (x2 > 1)
        out.append((f"x2 = 2·x1 + {gap:g}·noise, discrete y", [x, x2, labels], "ccd"))
    out.append(("y = x³ + 10⁻³·noise (a nearly exact fit)", [x, w, x ** 3 + 1e-3 * noise], "ccc"))
    r = np.round(x, 1)
    three = [r, 2 * r + 1e-7 * rng.normal(size=rows), r ** 3 + 1e-5 * rng.normal(size=rows)]
    out.append(("x1 to 0.1, x2 = 2·x1 + 1e-7·noise, x3 ≈ x1³; discrete y", [*three, rng.integers(0, 4, rows)],
                "cccd"))
    out.append(("the same parents, continuous y = x1 + noise", [*three, r + noise], "cccc"))
    out.append(("independent parents, y = sin(2x) + w + noise", [x, w, np.round(rng.normal(size=rows), 1),
                                                                  np.sin(2 * x) + w + noise], "cccc"))
    return out


def powers_lstsq(data, child: int, parents: tuple[int, ...], degree: int) -> float:
    """ℓ by ``lstsq`` on [1, z, …, z^g] per parent (z standardised), as MVP computed it before."""
    n = data.N
    cols = [np.ones(n)]
    for p in parents:
        z = (data.values[:, p] - data.values[:, p].mean()) / data.values[:, p].std()
        cols += [z ** e for e in range(1, degree + 1)]
    design = np.column_stack(cols)
    if data.kinds[child] == "discrete":
        d = data.arities[child]
        y = data.codes[:, child]
        fitted = design @ np.linalg.lstsq(design, np.eye(d)[y], rcond=None)[0]
        return _shrunk_loglik(fitted, y, d)
    y = data.values[:, child] / data.values[:, child].std()
    resid = y - design @ np.linalg.lstsq(design, y, rcond=None)[0]
    return -n / 2 * (math.log(2 * math.pi) + math.log(float(resid @ resid) / n) + 1)


def exact(data, child: int, parents: tuple[int, ...], degree: int) -> float:
    """ℓ from exact rational least squares on the raw powers, taken exactly (the same span)."""
    n = data.N
    cols: list = [np.ones(n)] + [col for p in parents for col in power_columns(data.values[:, p], degree)]
    if data.kinds[child] == "discrete":
        d = data.arities[child]
        y = data.codes[:, child]
        fitted, _ = exact_least_squares(cols, np.eye(d)[y])
        return _shrunk_loglik(fitted, y, d)
    _, (rss,) = exact_least_squares(cols, data.values[:, child])
    s2 = float(rss / exact_variance(data.values[:, child])) / n
    return -n / 2 * (math.log(2 * math.pi) + math.log(s2) + 1)


def _shrunk_loglik(fitted: np.ndarray, y: np.ndarray, d: int) -> float:
    """Eq. 21: each row shrunk towards uniform until its least entry is 1/n."""
    n = y.size
    low = fitted.min(axis=1)
    alpha = np.where(low < 1 / n, np.clip((1 / n - 1 / d) / np.minimum(low - 1 / d, -1e-300), 0, 1), 1.0)
    return float(np.log(alpha * fitted[np.arange(n), y] + (1 - alpha) / d).sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    if args.rows < 5:   # the widest case regresses on 1 + 3·⌊ln N⌋ columns: fewer rows fit it exactly (ℓ = ln 0)
        parser.error(f"--rows must be at least 5, not {args.rows}")
    degree = int(math.floor(math.log(args.rows)))
    print(f"{args.rows} rows, degree {degree}; |ℓ − exact| in nats")
    print(f"{'case':52s} {'bnilp':>10s} {'lstsq on powers':>16s} {'exact ℓ':>14s} {'exact s':>8s}")
    for label, columns, kinds in cases(args.rows, np.random.default_rng(args.seed)):
        data = make_dataset(columns, kinds)
        child, parents = len(columns) - 1, tuple(range(len(columns) - 1))
        start = time.perf_counter()
        truth = exact(data, child, parents, degree)
        seconds = time.perf_counter() - start
        ours = MixedVariablePolynomial(data, degree=degree).loglik_df(child, parents)[0]
        before = powers_lstsq(data, child, parents, degree)
        print(f"{label:52s} {abs(ours - truth):10.1e} {abs(before - truth):16.1e} {truth:14.6f} {seconds:8.1f}")


if __name__ == "__main__":
    from common import run_script

    run_script(main)
