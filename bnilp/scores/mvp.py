"""Mixed Variable Polynomial (MVP) score for mixed data.

Source: Andrews, Ramsey & Cooper, "Scoring Bayesian networks of mixed variables" (seed
``andrews-ramsey-cooper-mixed-scores.txt``), §4, eqs. 14–21, with the conventions of
``shared/docs/scores.md`` and ``shared/docs/tetrad-notes.md``.

Partition the rows by the configuration of the child's discrete parents. In a non-empty cell p with
n_p rows, the degree is g = ⌊ln n_p⌋ (``degree="log"``) or a fixed integer g ≥ 1. Every continuous
parent is standardised inside the cell (population SD); a parent constant inside the cell gives no
column. The design is [1, x_j, x_j², …, x_j^g for each remaining continuous parent j] (no cross
terms), solved by least squares. If the design has at least as many columns as the cell has rows, the
cell falls back to the intercept-only fit.

How it is computed: each parent's powers are replaced, cell by cell, by the cell's orthonormal polynomials in that
parent (:func:`polynomial_basis`; the same column space, so the same least-squares fit, with condition number near 1
instead of ~10⁶ for z¹…z¹¹). They, their cross sums Φ_aᵀΦ_b and the child's sums Φ_aᵀy depend on the discrete
parents' partition, one or two columns and the child only, so they are kept on the partition
(:class:`~bnilp.scores.cg.Partition`) and every family with those discrete parents reads them; a continuous child's
RSS is then yᵀy − bᵀG⁻¹b from the cell's small Gram matrix G (the identity with one continuous parent), a discrete
child's fitted values p̄ + Φβ for every row (the shrink needs them; one matrix product per cell). Cells whose
parents' bases are nearly collinear (:data:`GRAM_TOL`) or whose fit leaves almost nothing (:data:`CANCEL_TOL`) are
fitted by ``lstsq`` on their orthonormal columns instead. Against exact rational least squares
(``benchmarks/mvp_accuracy.py``, 500 rows, degree 6) ℓ is within 2·10⁻⁸ nat on every case there, where ``lstsq`` on
the powers was 1.3·10⁻⁴ off with three nearly collinear parents.

- Continuous child (eq. 19–20): σ̂²_p = RSS_p / n_p,
  ℓ_p = −n_p/2·(ln 2π + ln σ̃²_p + σ̂²_p/σ̃²_p) with σ̃²_p = max(σ̂²_p, 10⁻⁸) (Y standardised, below) — the usual
  ℓ_p = −n_p/2·(ln 2π + ln σ̂²_p + 1) unless the fit is exact, when the floor keeps ℓ finite (it is the
  maximum over σ² ≥ 10⁻⁸); df_p = m_p, the number of design columns (= c·g + 1 without
  fallbacks, c = number of continuous parents). SD(Y) is a positive float because the data refuse a
  continuous column with SD below :data:`bnilp.data.MIN_CONTINUOUS_SD` (values near 1e-200 had Var(Y) = 0 in
  floats, and ln 0 failed) — such a column is to be rescaled, not read as constant: its values differ.
- Discrete child with d categories (eq. 21): least squares of each category's indicator on the
  design; each row's fitted values sum to 1 (intercept in the design). With m_j the smallest value of
  row j, if m_j < 1/n_p the row is shrunk towards uniform, α_j = (1/n_p − 1/d)/(m_j − 1/d), clipped to
  [0, 1] (when n_p ≤ d the target 1/n_p ≥ 1/d cannot be reached and the row becomes uniform),
  p̂_j = α_j·ŷ_j + (1 − α_j)/d; ℓ_p = Σ_j ln p̂_j(y_j); df_p = m_p·(d − 1).
- Cells with n_p ≤ 1 contribute ℓ_p = 0 and the intercept-only df (1, or d − 1) (paper, Tetrad).
- A continuous child is scored standardised, (Y − mean)/SD(Y) (the seed standardises its data before
  scoring; the intercept makes the centring change nothing but the rounding — a child of 10¹⁵ ± 1 was fitted
  50 nats off). On raw values the score depended on Y's units: rescaling Y by a shifts every other cell's
  ℓ_p by −n_p·ln|a| but a one-row cell's 0 by nothing, so parent sets with more one-row cells gained ln|a|
  each (D → Y appeared on 60 rows when Y went from metres to millimetres: 8 one-row cells, 8·ln 1000). On the
  standardised child every transformation a·Y + b gives the same scores; the floor of σ̃² is then 10⁻⁸.
- ℓ = Σ_p ℓ_p, df = Σ_p df_p over the non-empty cells; s = ℓ − ½·c_pen·df·ln N.
- CI tests (:meth:`MixedVariablePolynomial.lr_loglik_df`) count one more parameter per non-empty
  cell for a continuous child, its variance σ̂²_p, which the score's penalty does not (paper, Tetrad),
  and give a discrete child's intercept-only cells their multinomial maximum likelihood (no shrink).

MVP is not score-equivalent (the polynomial fit of Y on X differs from that of X on Y). Pruning:
only R1 is claimed.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import xlogy

from bnilp.data import Dataset
from bnilp.errors import InputError
from bnilp.scores.base import (
    DEFAULT_PENALTY_DISCOUNT,
    LocalScore,
    StructurePrior,
    central_value,
    residual_deviance_mean,
)
from bnilp.scores.cg import Partition, PartitionCache, discrete_mask

#: MVP's polynomial degree (``degree``, ``--mvp-degree``): ⌊ln n_p⌋ per partition
DEFAULT_MVP_DEGREE = "log"
#: σ̂² floor (the standardised child's variance is 1)
VARIANCE_FLOOR = 1e-8
#: a parent whose within-cell SD is below this fraction of its overall SD counts as constant there
CONSTANT_TOL = 1e-12
#: a power whose part new to the lower powers (after orthogonalising against them, twice) is below this fraction
#: of its norm is in their span up to rounding — the cell has fewer distinct values than the degree — and gives no
#: column (two passes of Gram–Schmidt leave ~10·k·2⁻⁵² of a vector in the span: a margin of 50)
RANK_TOL = 1e-12
#: cells whose parents' bases are this close to collinear (least eigenvalue of their Gram matrix, whose blocks are
#: identities) are fitted row by row: the normal equations would lose cond(G)·2⁻⁵² of bᵀG⁻¹b
GRAM_TOL = 1e-3
#: ... and so are cells whose fit leaves less than this share of the child's scatter (RSS = yᵀy − bᵀG⁻¹b would
#: lose yᵀy/RSS·2⁻⁵² relative: at most ~10⁻¹² with both tolerances, 10⁻⁷ nat on 10⁵ rows)
CANCEL_TOL = 1e-3
#: the partitions with their bases and sums are kept up to this many bytes a process (10⁵ rows × 12 columns at
#: palim 3 hold 132 bases of 8.8 MB); past it a basis serves the family that asked and goes
#: (:meth:`MixedVariablePolynomial._keep`)
BASIS_BYTES = 2 << 30
_LN2PI = math.log(2.0 * math.pi)


@dataclass(frozen=True)
class PolynomialBasis:
    """One continuous column's powers on one row partition, orthonormalised inside each cell.

    ``phi`` (rows in the partition's sorted order × G): column i holds, in each cell where it is ``live``, the
    cell's orthonormal polynomial of degree i + 1 in the column (orthogonal to the constant and to the lower
    degrees over the cell's rows), and zeros elsewhere; ``active`` marks the cells where the column varies and
    has a degree ≥ 1 (it counts as a parent with g columns there, whatever the rank)."""

    phi: np.ndarray
    live: np.ndarray
    active: np.ndarray

    @property
    def nbytes(self) -> int:
        return self.phi.nbytes + self.live.nbytes + self.active.nbytes


def polynomial_basis(x: np.ndarray, counts: np.ndarray, degrees: np.ndarray, *, constant_sd: float,
                     rank_tol: float = RANK_TOL) -> PolynomialBasis:
    """Orthonormal polynomials of ``x`` per cell, up to each cell's degree (Stieltjes 1884; here as Lanczos with
    full reorthogonalisation: Golub & Van Loan, *Matrix Computations*, §10.1 and §5.2.8).

    ``x`` holds the cells' rows one cell after another (``counts`` rows each), ``degrees`` the degree g_p of each
    cell (0: no columns). In a cell where x varies (not all equal, and population SD > ``constant_sd``) the column z
    = (x − x̄)/SD gives φ_1 ∝ z and φ_k ∝ z·φ_(k−1) with the constant and φ_1 … φ_(k−1) projected out twice: span(1,
    φ_1, …, φ_k) = span(1, z, …, z^k) (a Krylov space), so least squares on [1, φ_1 … φ_g] fits what it fits on the
    powers [1, z, …, z^g] of the paper's design, with columns orthonormal instead of a condition number growing like
    E[z^(2g)]^½ (10⁶ at g = 11). A power whose new part is below ``rank_tol`` of its norm is in the span of the
    lower ones (the cell has at most k distinct values): it and every higher one get no column (``live`` false),
    where ``lstsq`` on the powers would drop the same directions as singular. Sums per cell are ``np.add.reduceat``
    over contiguous rows: the same floats whatever the BLAS library's threads."""
    cells = counts.size
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    cell_of = np.repeat(np.arange(cells), counts)
    nf = counts.astype(float)
    xc = x - (np.add.reduceat(x, starts) / nf)[cell_of]
    sd = np.sqrt(np.add.reduceat(xc * xc, starts) / nf)
    varies = np.maximum.reduceat(x, starts) > np.minimum.reduceat(x, starts)     # exactly: a rounded mean can give
    active = (degrees >= 1) & varies & (sd > constant_sd)                         # a constant cell an SD above 0
    width = int(degrees[active].max()) if active.any() else 0
    phi = np.zeros((x.size, width), order="F")       # each degree's column contiguous
    live = np.zeros((cells, width), dtype=bool)
    if width == 0:
        return PolynomialBasis(phi, live, active)
    on = active[cell_of]
    z = np.where(on, xc / np.where(active, sd, 1.0)[cell_of], 0.0)
    prev = np.where(on, 1.0 / np.sqrt(nf)[cell_of], 0.0)          # φ_0, the normalised constant
    alive = active.copy()
    v, tmp = np.empty(x.size), np.empty(x.size)

    def per_row(per_cell: np.ndarray) -> np.ndarray | float:       # a cell's value on each of its rows
        return float(per_cell[0]) if cells == 1 else np.take(per_cell, cell_of, out=tmp)

    def cell_sums(a: np.ndarray) -> np.ndarray:
        return np.add.reduceat(a, starts)

    for i in range(width):
        alive &= degrees > i
        np.multiply(z, prev, out=v)
        reference = cell_sums(np.multiply(v, v, out=tmp))
        for sweep in range(2):        # the three-term recurrence's projections, then against every lower degree
            v -= per_row(cell_sums(v) / nf)
            for h in range(max(0, i - 2), i) if sweep == 0 else range(i):
                column = phi[:, h]
                coef = per_row(cell_sums(np.multiply(v, column, out=tmp)))
                v -= np.multiply(coef, column, out=tmp)
        norm2 = cell_sums(np.multiply(v, v, out=tmp))
        alive &= norm2 > rank_tol * rank_tol * reference
        scale = np.zeros(cells)
        scale[alive] = 1.0 / np.sqrt(norm2[alive])
        np.multiply(v, per_row(scale), out=phi[:, i])
        live[:, i] = alive
        prev = phi[:, i]
    return PolynomialBasis(phi, live, active)


class _Gram:
    """One family's normal equations in the orthonormal bases, for its fitted ``cells`` of one degree g (those at
    positions ``pos`` of the partition's degree group ``group``): G (identity blocks Φ_aᵀΦ_a — a dead column keeps
    its 1 on the diagonal — and Φ_aᵀΦ_b) and the right-hand sides Φ_aᵀy of the child, g columns per parent."""

    def __init__(self, score: MixedVariablePolynomial, part: Partition, cont: list[int],
                 bases: list[PolynomialBasis], group: int, g: int, cells: np.ndarray, pos: np.ndarray,
                 child: int) -> None:
        self.part, self.bases, self.g, self.cells = part, bases, g, cells
        self.rhs = np.concatenate([score._moments(part, j, child)[group][pos] for j in cont], axis=1)
        self.eig: tuple[np.ndarray, np.ndarray] | None = None
        if len(cont) > 1:
            size = len(cont) * g
            gram = np.zeros((cells.size, size, size))
            gram[:, np.arange(size), np.arange(size)] = 1.0
            for a, b in itertools.combinations(range(len(cont)), 2):
                block = score._cross(part, cont[a], cont[b])[group][pos]
                gram[:, a * g:(a + 1) * g, b * g:(b + 1) * g] = block
                gram[:, b * g:(b + 1) * g, a * g:(a + 1) * g] = block.transpose(0, 2, 1)
            self.eig = np.linalg.eigh(gram)

    def ok(self) -> np.ndarray:
        """Cells whose G is far enough from singular for the normal equations (:data:`GRAM_TOL`)."""
        return np.ones(self.cells.size, dtype=bool) if self.eig is None else self.eig[0][:, 0] >= GRAM_TOL

    def quadratic(self) -> tuple[np.ndarray, np.ndarray]:
        """bᵀG⁻¹b per cell (the fitted sum of squares of a continuous child) and :meth:`ok`."""
        if self.eig is None:
            return (self.rhs * self.rhs).sum(axis=1), self.ok()
        w, vectors = self.eig
        t = np.einsum("fmk,fm->fk", vectors, self.rhs)
        return (t * t / np.where(w > 0, w, 1.0)).sum(axis=1), self.ok()     # a cell not ok is fitted anew

    def solve(self) -> tuple[np.ndarray, np.ndarray]:
        """G⁻¹B per cell for a discrete child's indicator columns (cells × columns × states) and :meth:`ok`."""
        if self.eig is None:
            return self.rhs, self.ok()
        w, vectors = self.eig
        t = np.einsum("fmk,fmc->fkc", vectors, self.rhs) / np.where(w > 0, w, 1.0)[:, :, None]
        return np.einsum("fmk,fkc->fmc", vectors, t), self.ok()

    def fitted(self, cells: np.ndarray, beta: np.ndarray) -> tuple[slice | np.ndarray, np.ndarray]:
        """Σ_a Φ_a β_a on the rows of ``cells`` (fitted cells of this family, increasing; ``beta`` theirs): (rows,
        fitted values). One cell: a matrix product whose entries are short dot products (the BLAS library's
        threads split the rows, not the sums); several: each row's β gathered (einsum)."""
        part, g = self.part, self.g
        lens = part.counts[cells]
        if cells.size == 1:
            rows = slice(int(part.starts[cells[0]]), int(part.starts[cells[0]] + lens[0]))     # a view, no copy
            out = sum(b.phi[rows, :min(g, b.phi.shape[1])] @ beta[0, a * g:a * g + min(g, b.phi.shape[1])]
                      for a, b in enumerate(self.bases))
            return rows, out
        local = np.repeat(np.arange(cells.size), lens)
        rows = part.starts[cells][local] + (np.arange(int(lens.sum())) - (np.cumsum(lens) - lens)[local])
        out = sum(np.einsum("ri,ric->rc", b.phi[rows, :min(g, b.phi.shape[1])],
                            beta[local, a * g:a * g + min(g, b.phi.shape[1])]) for a, b in enumerate(self.bases))
        return rows, out

    def design(self, p: int) -> np.ndarray:
        """Cell ``p``'s live orthonormal columns (for the row-by-row fit)."""
        rows = slice(int(self.part.starts[p]), int(self.part.starts[p] + self.part.counts[p]))
        return np.concatenate([b.phi[rows][:, b.live[p]] for b in self.bases], axis=1)


#: a discrete child's fitted values: cells of at least _ALONE_ROWS rows one at a time (a matrix product), smaller
#: ones together, at most _CHUNK_ROWS rows a batch (each row's β gathered: rows × g × states floats)
_ALONE_ROWS = 64
_CHUNK_ROWS = 1 << 16


def _discrete_loglik(part: Partition, y: Callable[[], np.ndarray], counts: np.ndarray, grams: list[_Gram],
                     fit: np.ndarray, *, for_test: bool) -> float:
    """Σ_j ln p̂_j(y_j) of a discrete child (eq. 21): the linear-probability fit p̄_p + Σ_a Φ_a β_a in the fitted
    cells (the cell's proportions p̄_p elsewhere), each row shrunk towards uniform as far as needed for its
    smallest entry to reach 1/n_p; for tests (``for_test``) a cell without columns gets its multinomial maximum
    likelihood instead (:meth:`MixedVariablePolynomial.lr_loglik_df`). In a cell without columns every row has
    the same fitted values, so its rows are summed by state: Σ_c n_pc·ln p̂_pc."""
    n, d = part.counts, counts.shape[1]
    proportions = counts / n[:, None]
    big = n >= 2
    ml = big & ~fit if for_test else np.zeros(n.size, dtype=bool)
    ll = float(xlogy(counts[ml], proportions[ml]).sum()) if ml.any() else 0.0
    plain = big & ~fit & ~ml
    if plain.any():
        fitted = proportions[plain]
        alpha = _shrink(fitted, n[plain], d)
        ll += float(xlogy(counts[plain], alpha[:, None] * fitted + ((1.0 - alpha) / d)[:, None]).sum())
    codes = y() if grams else None
    for gram in grams:
        beta, ok = gram.solve()
        good = np.flatnonzero(ok)
        alone = n[gram.cells[good]] >= _ALONE_ROWS
        batches = [good[i:i + 1] for i in np.flatnonzero(alone).tolist()]      # a matrix product each
        small = good[~alone]                                                    # gathered, _CHUNK_ROWS rows at most
        size = max(1, _CHUNK_ROWS // _ALONE_ROWS)
        batches += [small[i:i + size] for i in range(0, small.size, size)]
        for batch in batches:
            cells = gram.cells[batch]
            rows, fitted = gram.fitted(cells, beta[batch])
            if cells.size == 1:          # one cell: broadcast its proportions (gathering them per row cost ~8 %)
                fitted += proportions[cells[0]]
                ll += _observed_loglik(fitted, codes[rows], np.full(fitted.shape[0], n[cells[0]]), d)
            else:
                local = np.repeat(np.arange(cells.size), n[cells])
                fitted += proportions[cells][local]
                ll += _observed_loglik(fitted, codes[rows], n[cells][local], d)
        for f in np.flatnonzero(~ok).tolist():
            p = int(gram.cells[f])
            rows = np.arange(int(part.starts[p]), int(part.starts[p] + n[p]))
            design = gram.design(p)
            target = np.eye(d)[codes[rows]] - proportions[p]
            fitted = proportions[p] + design @ np.linalg.lstsq(design, target, rcond=None)[0]
            ll += _observed_loglik(fitted, codes[rows], np.full(rows.size, n[p]), d)
    return ll


def _observed_loglik(fitted: np.ndarray, y: np.ndarray, n_rows: np.ndarray, d: int) -> float:
    """Σ_rows ln(α·ŷ_row(y_row) + (1 − α)/d), α the row's shrink (:func:`_shrink`)."""
    alpha = _shrink(fitted, n_rows, d)
    observed = fitted[np.arange(y.size), y]
    return float(np.log(alpha * observed + (1.0 - alpha) / d).sum())


def _shrink(fitted: np.ndarray, n_rows: np.ndarray, d: int) -> np.ndarray:
    """Eq. 21's weight α of each row of fitted probabilities against uniform, p̂ = α·ŷ + (1 − α)/d:
    α = (1/n_p − 1/d)/(m − 1/d) where the row's least entry m is below 1/n_p, clipped to [0, 1] (at n_p ≤ d the
    row becomes uniform), else 1."""
    low = functools.reduce(np.minimum, (fitted[:, c] for c in range(d)))     # not .min(axis=1): d is small
    alpha = np.ones(low.size)
    shrink = low < 1.0 / n_rows
    if shrink.any():
        denom = low[shrink] - 1.0 / d
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(denom < 0, (1.0 / n_rows[shrink] - 1.0 / d) / denom, 0.0)
        alpha[shrink] = np.clip(a, 0.0, 1.0)
    return alpha


class MixedVariablePolynomial(LocalScore):
    """MVP score (Andrews, Ramsey & Cooper §4); see the module docstring."""

    name = "mvp"

    def __init__(self, data: Dataset, *, degree: str | int = DEFAULT_MVP_DEGREE, prior: StructurePrior | None = None,
                 penalty_discount: float = DEFAULT_PENALTY_DISCOUNT):
        if isinstance(degree, str) and degree.strip().lower() == "log":
            self.degree: str | int = "log"
        else:
            try:
                value = int(degree)
            except (TypeError, ValueError):
                raise InputError(f"degree (--mvp-degree) must be 'log' or an integer ≥ 1, got {degree!r}") from None
            if isinstance(degree, bool) or value < 1 or value != float(degree):
                raise InputError(f"degree (--mvp-degree) must be 'log' or an integer ≥ 1, got {degree!r}")
            self.degree = value
        super().__init__(data, prior=prior, penalty_discount=penalty_discount)
        self.N = data.N
        self.discrete = [data.is_discrete(j) for j in range(data.n)]
        self.codes = [np.ascontiguousarray(data.codes[:, j]) for j in range(data.n)]
        self.values = [np.ascontiguousarray(data.values[:, j]) for j in range(data.n)]
        self.arities = list(data.arities)
        self.centre = [0.0 if self.discrete[j] else central_value(data.values[:, j]) for j in range(data.n)]
        self.sd = [0.0 if self.discrete[j] else float(np.nanstd(data.values[:, j] - self.centre[j]))
                   for j in range(data.n)]
        self.partition = self._fresh_partitions()

    def _fresh_partitions(self) -> PartitionCache:
        return PartitionCache(self.codes, self.arities, self.N, max_bytes=BASIS_BYTES)

    def family_share_key(self, child: int, parents: tuple[int, ...]) -> int:
        """The discrete parents as a bit mask: the partition whose bases, cross sums and child sums the family
        reads (a family table scores the families of one partition together)."""
        return discrete_mask(self.discrete, parents)

    def release_shared(self) -> None:
        """Let go of every partition and its bases (a family table's build moved to the next partition)."""
        self.partition = self._fresh_partitions()

    def cell_degree(self, n_p: int) -> int:
        return int(math.floor(math.log(n_p))) if self.degree == "log" else int(self.degree)

    def __getstate__(self) -> dict[str, Any]:
        """For the worker processes: the partitions with their bases (N rows × degree each) stay here."""
        state = self.__dict__.copy()
        state["partition"] = self._fresh_partitions()
        return state

    def cell_degrees(self, part: Partition) -> np.ndarray:
        """:meth:`cell_degree` of every cell of ``part`` (capped at the largest cell: a degree that fills every
        cell is as good as any larger one, and 10⁹ stays an int)."""
        hit = part.extra.get(("degrees",))
        if hit is None:
            cap = int(part.counts.max(initial=1))
            hit = part.extra["degrees",] = np.array([min(self.cell_degree(c), cap) for c in part.counts.tolist()],
                                                    dtype=np.int64)
        return hit

    # -- per-partition sums, kept on the partition (every family with these discrete parents reads them) --

    def _basis(self, part: Partition, j: int) -> PolynomialBasis:
        """Column ``j``'s orthonormal powers on ``part`` (:func:`polynomial_basis`, on the raw values: each cell is
        centred on its own mean there — subtracting one central value for the whole column rounded a cell far from
        it to that value's spacing, a review's find), built once per partition."""
        key = ("basis", j)
        hit = part.extra.get(key)
        if hit is None:
            hit = self._keep(part, key, polynomial_basis(self.values[j][part.order], part.counts,
                                                         self._fitted_degrees(part),
                                                         constant_sd=CONSTANT_TOL * max(self.sd[j], 1e-300)),
                             rows=True)
        return hit

    def _fitted_degrees(self, part: Partition) -> np.ndarray:
        """The degree of each cell where one parent's powers leave it rows to spare (1 + g < n_p), else 0: the
        other cells are never fitted."""
        g, n = self.cell_degrees(part), part.counts
        return np.where(1 + g < n, g, 0)

    def _groups(self, part: Partition) -> list[tuple[int, np.ndarray]]:
        """The fitted cells grouped by degree, (g, cells) by increasing g: the sums below are kept per group with g
        columns a parent, so a partition of many small cells and a large one holds ~Σ_p g_p² floats a pair, not
        cells·max(g)²."""
        hit = part.extra.get(("groups",))
        if hit is None:
            g = self._fitted_degrees(part)
            hit = [(int(v), np.flatnonzero(g == v)) for v in np.unique(g[g >= 1]).tolist()]
            part.extra["groups",] = hit
        return hit

    def _keep(self, part: Partition, key: tuple, value: Any, *, rows: bool) -> Any:
        """:meth:`PartitionCache.keep <bnilp.scores.cg.PartitionCache.keep>`, arrays of a value per row (bases,
        codes) with a tenth of the budget to spare for the sums per cell."""
        nbytes = value.nbytes if isinstance(value, np.ndarray | PolynomialBasis) else sum(a.nbytes for a in value)
        return self.partition.keep(part, key, value, nbytes, spare=0.1 if rows else 0.0)

    def _cell_of(self, part: Partition) -> np.ndarray:
        """The cell of each row in the partition's sorted order."""
        hit = part.extra.get(("cell_of",))
        if hit is None:
            hit = self._keep(part, ("cell_of",), np.repeat(np.arange(part.counts.size), part.counts), rows=True)
        return hit

    def _cross(self, part: Partition, a: int, b: int) -> list[np.ndarray]:
        """Per degree group (:meth:`_groups`) Φ_aᵀΦ_b of its cells (cells × g × g) of two columns' bases."""
        if a > b:
            return [block.transpose(0, 2, 1) for block in self._cross(part, b, a)]
        key = ("cross", a, b)
        hit = part.extra.get(key)
        if hit is None:
            pa, pb = self._basis(part, a).phi, self._basis(part, b).phi
            groups = self._groups(part)
            hit = [np.zeros((cells.size, g, g)) for g, cells in groups]
            for i in range(pa.shape[1]):
                if pb.shape[1] == 0:
                    break
                sums = np.add.reduceat(pa[:, i:i + 1] * pb, part.starts, axis=0)      # cells × width of b
                for out, (g, cells) in zip(hit, groups, strict=True):
                    if i < g:
                        width = min(g, pb.shape[1])
                        out[:, i, :width] = sums[cells, :width]
            self._keep(part, key, hit, rows=False)
        return hit

    def _child(self, part: Partition, child: int) -> np.ndarray:
        """The child in the partition's row order: a continuous one standardised and centred in each cell
        (two passes: the cell means, then the deviations), a discrete one's codes (kept: its fitted cells need them
        for every family)."""
        if self.discrete[child]:
            hit = part.extra.get(("codes", child))
            if hit is None:
                codes = self.codes[child][part.order]
                hit = self._keep(part, ("codes", child), codes.astype(np.min_scalar_type(int(codes.max(initial=0)))),
                                 rows=True)
            return hit
        # in units of its SD: the score is the same in any units; centred too (a child of 10¹⁵ ± 1 lost its ± 1)
        y = (self.values[child][part.order] - self.centre[child]) / (self.sd[child] or 1.0)
        return y - (np.add.reduceat(y, part.starts) / part.counts)[self._cell_of(part)]

    def _child_sums(self, part: Partition, child: int) -> np.ndarray:
        """Per cell the rows of each state (cells × d) of a discrete child, Σ(y − ȳ_p)² of a continuous one."""
        key = ("child", child)
        hit = part.extra.get(key)
        if hit is None:
            y = self._child(part, child)
            if self.discrete[child]:
                d, cells = self.arities[child], part.counts.size
                hit = np.bincount(self._cell_of(part) * d + y, minlength=cells * d).reshape(cells, d).astype(float)
            else:
                hit = np.add.reduceat(y * y, part.starts)
            self._keep(part, key, hit, rows=False)
        return hit

    def _moments(self, part: Partition, j: int, child: int) -> list[np.ndarray]:
        """Per degree group (:meth:`_groups`) Φ_jᵀy of its cells (cells × g) for a continuous child,
        Φ_jᵀ(indicator of each state) (cells × g × d) for a discrete one; zero columns past the basis' width."""
        key = ("moments", j, child)
        hit = part.extra.get(key)
        if hit is None:
            phi, y = self._basis(part, j).phi, self._child(part, child)
            cells_all, width = part.counts.size, phi.shape[1]
            if self.discrete[child]:
                d = self.arities[child]
                joint = self._cell_of(part) * d + y
                sums = np.zeros((cells_all, width, d))
                for i in range(width):
                    sums[:, i, :] = np.bincount(joint, weights=phi[:, i], minlength=cells_all * d).reshape(-1, d)
                shape: tuple[int, ...] = (d,)
            else:
                sums = np.add.reduceat(phi * y[:, None], part.starts, axis=0) if width else np.zeros((cells_all, 0))
                shape = ()
            hit = []
            for g, cells in self._groups(part):
                out = np.zeros((cells.size, g, *shape))
                out[:, :min(g, width)] = sums[cells, :min(g, width)]
                hit.append(out)
            self._keep(part, key, hit, rows=False)
        return hit

    def loglik_df(self, child: int, parents: tuple[int, ...]) -> tuple[float, float]:
        """(ℓ, df) summed over the cells of the discrete parents."""
        return self._loglik_df(child, parents, for_test=False)

    def _loglik_df(self, child: int, parents: tuple[int, ...], *, for_test: bool,
                   shapes: list[tuple[int, int]] | None = None) -> tuple[float, float]:
        """(ℓ, df) over the cells; ``shapes`` (if given) receives every cell's (n_p, design columns m_p).

        Least squares on each cell's design in the orthonormal bases (:func:`polynomial_basis`: the same column
        space as the powers, so the same fit): from the per-cell sums Φ_aᵀΦ_b and Φ_aᵀy kept on the partition —
        RSS_p = yᵀy − bᵀG⁻¹b with G the blocks' Gram matrix (the identity for one parent) — and row by row
        (``lstsq`` on the cell's orthonormal columns) where G is near singular (least eigenvalue below
        :data:`GRAM_TOL`: parents nearly collinear in the cell) or the fit leaves under :data:`CANCEL_TOL` of
        yᵀy, where the difference would lose digits."""
        disc = tuple(sorted(j for j in parents if self.discrete[j]))
        cont = sorted(j for j in parents if not self.discrete[j])
        part = self.partition(disc)
        n = part.counts
        g = self.cell_degrees(part)
        bases = [self._basis(part, j) for j in cont]
        k = np.zeros(n.size, dtype=np.int64)
        for basis in bases:
            k += basis.active
        fit = (n >= 2) & (k >= 1) & (1 + k * g < n)
        m = np.where(fit, 1 + k * g, 1)
        if shapes is not None:
            shapes.extend(zip(n.tolist(), m.tolist(), strict=True))
        d = self.arities[child] if self.discrete[child] else 2
        df = float((d - 1) * int(m.sum()))
        grams = []
        for group, (degree, members) in enumerate(self._groups(part)):
            pos = np.flatnonzero(fit[members])
            if pos.size:
                grams.append(_Gram(self, part, cont, bases, group, degree, members[pos], pos, child))
        if self.discrete[child]:
            return _discrete_loglik(part, lambda: self._child(part, child), self._child_sums(part, child), grams, fit,
                                    for_test=for_test), df
        nf = n.astype(float)
        scatter = self._child_sums(part, child)
        rss = scatter.copy()
        redo = []
        for gram in grams:
            quad, ok = gram.quadratic()
            rss[gram.cells] = scatter[gram.cells] - quad
            redo.extend(gram.cells[~ok | (rss[gram.cells] < CANCEL_TOL * scatter[gram.cells])].tolist())
        if redo:
            y = self._child(part, child)
            for p in sorted(redo):
                rows = slice(int(part.starts[p]), int(part.starts[p] + n[p]))
                design = grams[0].design(p)
                resid = y[rows] - design @ np.linalg.lstsq(design, y[rows], rcond=None)[0]
                rss[p] = float((resid * resid).sum())
        big = n >= 2
        s2 = rss[big] / nf[big]
        s2f = np.maximum(s2, VARIANCE_FLOOR)
        ll = -0.5 * float((nf[big] * (_LN2PI + np.log(s2f) + s2 / s2f)).sum())
        return ll, df

    def lr_loglik_df(self, child: int, parents: tuple[int, ...]) -> tuple[float, float]:
        """(ℓ, df) for likelihood-ratio tests: as :meth:`loglik_df`, plus one parameter per non-empty
        partition for a continuous child — the variance σ̂²_p that every partition estimates.

        The score's penalty follows the seed (eq. 20) and Tetrad, df_p = m_p, which leaves σ̂²_p out.
        In a score that costs one constant per partition; in a test of a *discrete* X it does not: adding
        X with r states splits each partition into up to r, each with its own variance, so the nested
        models differ by (r − 1)·(m + 1) parameters, not (r − 1)·m, and the χ² with the smaller df rejects
        far too often (18–33 % at α = 0.05 before this count; ``benchmarks/citest_calibration.py``).

        A discrete child's cell with no continuous column gets its maximum-likelihood multinomial,
        ℓ_p = Σ_k n_k·ln(n_k/n_p), without the eq. 21 shrink: the shrink keeps linear-probability fits
        inside the simplex, which proportions always are, and it costs about one nat per category unseen
        in a cell — more such cells in the larger model, so the test became very conservative (0–1 %
        rejections at α = 0.05 with discrete X, Y and Z)."""
        ll, df = self._loglik_df(child, parents, for_test=True)
        if not self.discrete[child]:
            disc = tuple(sorted(j for j in parents if self.discrete[j]))
            df += float(self.partition(disc).counts.size)
        return ll, df

    def lr_difference(self, child: int, parent: int, given: tuple[int, ...]) -> tuple[float, float]:
        """Half the test's G and its df (:meth:`LocalScore.lr_difference`) on :meth:`_rows_with_residual`: a
        continuous child's cell of one row in the larger model (``parent`` discrete) is fitted exactly, its ℓ_p
        set to 0 by the score's rule while the smaller model pays for its row, and it adds 2 to df (mean,
        variance) but nothing to E[G] — 2.8 to G and 2 to df each, so 50 one-row levels of an independent
        discrete Y gave p = 1e-13 (a review; 22–100 % rejections at α = 0.05 with one-row levels). Such a row
        tells nothing of the dependence (any mean fits it), so it is left out of both models, as CG's test
        leaves out a cell with no residual (:func:`bnilp.scores.cg.nested_gaussian_lr`); where no row is left
        G and df are 0 (p = 1)."""
        sub = self._rows_with_residual(child, parent, given)
        if sub is None:
            return 0.0, 0.0
        if sub is not self:
            return sub.lr_difference(child, parent, given)
        return super().lr_difference(child, parent, given)

    def _rows_with_residual(self, child: int, parent: int, given: tuple[int, ...]) -> MixedVariablePolynomial | None:
        """This score where no cell of the larger model's discrete partition has one row (or the child is
        discrete); else the same score on the other rows (``None`` when fewer than two rows, or a constant
        child, are left: no information), kept for the direction's :meth:`lr_null_mean`."""
        if self.discrete[child]:
            return self
        disc = tuple(sorted(j for j in (parent, *given) if self.discrete[j]))
        part = self.partition(disc)
        lone = part.counts == 1
        if not lone.any():
            return self
        cache = self.__dict__.setdefault("_residual_rows", {})
        key = (child, disc)
        if key not in cache:
            keep = ~lone[part.inverse]
            data = self.data
            if keep.sum() < 2 or np.ptp(data.values[keep, child]) == 0:
                cache[key] = None
            else:
                cache[key] = self.with_data(dataclasses.replace(data, codes=data.codes[keep],
                                                                values=data.values[keep]))
        return cache[key]

    def lr_null_mean(self, child: int, parent: int, given: tuple[int, ...]) -> tuple[float, float] | None:
        """Null mean of the test's G for a continuous child (``None`` for a discrete one: eq. 21's linear-
        probability fit has no closed-form null mean). Each cell p fits m_p design columns by least
        squares and its own variance, so under child ⟂ parent | given with a polynomial truth E[G] =
        D(null cells) − D(full cells), D = :func:`~bnilp.scores.base.residual_deviance_mean` with m_p − 1
        slopes; the df are :meth:`lr_loglik_df`'s, Σ_full (m_p + 1) − Σ_null (m_p + 1)."""
        if self.discrete[child]:
            return None
        sub = self._rows_with_residual(child, parent, given)
        if sub is not self:
            return None if sub is None else sub.lr_null_mean(child, parent, given)
        terms = []
        for parents in (tuple(sorted(given)), tuple(sorted((*given, parent)))):
            shapes: list[tuple[int, int]] = []
            self._loglik_df(child, parents, for_test=True, shapes=shapes)
            n, m = np.array(shapes, dtype=float).reshape(-1, 2).T
            terms.append((residual_deviance_mean(n, m - 1.0), float((m + 1.0).sum())))
        mean, dof = terms[0][0] - terms[1][0], terms[1][1] - terms[0][1]
        return (mean, dof) if dof > 0 and mean > 0 else None

    def raw(self, child: int, parents: tuple[int, ...]) -> float:
        return self.penalised(*self.loglik_df(child, parents))

    def constructor_settings(self) -> dict[str, Any]:
        return {**super().constructor_settings(), "degree": self.degree}

    def settings(self) -> dict[str, Any]:
        out = super().settings()
        out.update({
            "degree": self.degree,
            "standardize": "each continuous parent inside each partition (population SD); "
                           "constant parents give no column; a continuous child over the whole column "
                           "((y - central value) / SD: the score is the same in any units)",
            "fit": "least squares in each cell's orthonormal polynomials of each continuous parent (the span of "
                   "its powers): continuous child RSS = y'y - b'G^-1 b from per-partition sums, discrete child "
                   "fitted values for every row; nearly collinear or nearly exact cells by lstsq on those columns",
            "small_partitions": "design with >= n_p columns falls back to intercept only; "
                                "n_p <= 1 contributes no likelihood",
            "variance_floor": f"{VARIANCE_FLOOR:g} (the standardised child's variance is 1)",
            "discrete_child": "linear probability fit, eq. 21 shrink to min 1/n_p (alpha clipped to [0,1])",
            "df": "per non-empty partition: design columns (continuous), columns * (d - 1) (discrete)",
            "pruning": "R1 only",
        })
        return out
