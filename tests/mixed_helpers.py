"""Small helpers shared by the mixed-score tests: build a :class:`Dataset` from plain arrays."""

from __future__ import annotations

import itertools
import math
import os
import time

import numpy as np

from bnilp.data import Dataset
from bnilp.scores.cg import ConditionalGaussian


def make_dataset(columns: list[np.ndarray], kinds: str) -> Dataset:
    """A Dataset from columns; ``kinds`` has one letter per column, ``d`` (codes) or ``c`` (floats)."""
    n_rows = len(columns[0])
    codes = np.full((n_rows, len(columns)), -1, dtype=np.int64)
    values = np.full((n_rows, len(columns)), np.nan)
    arities, levels, kind_names = [], [], []
    for j, (col, kind) in enumerate(zip(columns, kinds, strict=True)):
        if kind == "d":
            uniq, inv = np.unique(np.asarray(col), return_inverse=True)
            codes[:, j] = inv.ravel()
            arities.append(int(uniq.size))
            levels.append([str(u) for u in uniq])
            kind_names.append("discrete")
        else:
            values[:, j] = np.asarray(col, dtype=float)
            arities.append(0)
            levels.append([])
            kind_names.append("continuous")
    names = [f"V{j}" for j in range(len(columns))]
    return Dataset(names=names, kinds=kind_names, codes=codes, values=values, arities=arities, levels=levels)


def random_mixed(rng: np.random.Generator, kinds: str, n_rows: int, arity: int = 3) -> Dataset:
    """Random dependent mixed data: each column depends on the previous ones."""
    cols: list[np.ndarray] = []
    for kind in kinds:
        signal = np.zeros(n_rows)
        for prev in cols:
            signal += 0.8 * (prev - prev.mean()) / (prev.std() + 1e-12)
        if kind == "d":
            noisy = signal + rng.normal(size=n_rows)
            cuts = np.quantile(noisy, np.linspace(0, 1, arity + 1)[1:-1])
            cols.append(np.searchsorted(cuts, noisy).astype(float))
        else:
            cols.append(signal + rng.normal(size=n_rows) * rng.uniform(0.5, 2.0) + rng.normal() * 3)
    return make_dataset(cols, kinds)


def assert_true_parents_of_g_win(score) -> None:
    """On bnlearn's clgaussian.test (G | A:D:E:F), the true parents of G beat ∅, a wrong set and a subset."""
    data = score.data
    g = data.index("G")

    def ix(*names: str) -> tuple[int, ...]:
        return tuple(sorted(data.index(v) for v in names))

    true = score.local(g, ix("A", "D", "E", "F"))
    assert true > score.local(g, ())
    assert true > score.local(g, ix("B", "C", "H"))
    assert true > score.local(g, ix("A", "D", "E"))


def degenerate_dataset(seed: int) -> Dataset:
    """40 rows built to break naive fits: a 15-level factor (tiny cells), collinear and duplicated
    columns, a discrete copy of a sign, and a column fitted exactly by another (σ̂² = 0)."""
    rng = np.random.default_rng(seed)
    n = 40
    many = rng.integers(0, 15, size=n)
    x = rng.normal(size=n)
    collinear = 2 * x + 1
    dup = np.repeat(rng.normal(size=4), 10)
    y = x + rng.normal(size=n)
    flag = (y > 0).astype(int)
    exact = 3 * x
    return make_dataset([many, x, collinear, dup, y, flag, exact], "dccccdc")


def assert_every_family_finite(score, max_parents: int = 3) -> None:
    """Every allowed parent set of every child up to ``max_parents`` has a finite raw score."""
    n = score.data.n
    for child in range(n):
        others = [j for j in range(n) if j != child and score.allowed_parent(child, j)]
        for size in range(max_parents + 1):
            for pa in itertools.combinations(others, size):
                assert math.isfinite(score.raw(child, pa)), (child, pa)



class WorkerKillingCG(ConditionalGaussian):
    """The CG score, except that ``local`` and the set function (what a worker computes: a block of families,
    or a task of the parallel walk's set table) end any process but the one that built it — as the kernel's
    out-of-memory killer would end a scoring worker (tests of how a lost worker is reported)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.builder_pid = os.getpid()

    def local(self, child, parents):
        if os.getpid() != self.builder_pid:
            os._exit(1)
        time.sleep(0.005)       # the coordinator is slower than a worker's start, so a worker surely takes a block
        return super().local(child, parents)

    def _set_value(self, variables):
        if os.getpid() != self.builder_pid:
            os._exit(1)
        time.sleep(0.01)        # as in local: a worker surely takes a task
        return super()._set_value(variables)
