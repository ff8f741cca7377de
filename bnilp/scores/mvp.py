"""Mixed Variable Polynomial (MVP) score for mixed data.

Source: Andrews, Ramsey & Cooper, "Scoring Bayesian networks of mixed variables" (seed
``andrews-ramsey-cooper-mixed-scores.txt``), §4, eqs. 14–21, with the conventions of
``shared/docs/scores.md`` and ``shared/docs/tetrad-notes.md``.

Partition the rows by the configuration of the child's discrete parents. In a non-empty cell p with
n_p rows, the degree is g = ⌊ln n_p⌋ (``degree="log"``) or a fixed integer g ≥ 1. Every continuous
parent is standardised inside the cell (population SD); a parent constant inside the cell gives no
column. The design is [1, x_j, x_j², …, x_j^g for each remaining continuous parent j] (no cross
terms), solved by least squares (``np.linalg.lstsq``, SVD-based). If the design has at least as
many columns as the cell has rows, the cell falls back to the intercept-only fit.

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

import math
from typing import Any

import numpy as np
from scipy.special import xlogy

from bnilp.data import Dataset
from bnilp.errors import InputError
from bnilp.scores.base import DEFAULT_PENALTY_DISCOUNT, LocalScore, StructurePrior, residual_deviance_mean
from bnilp.scores.cg import PartitionCache

#: σ̂² floor as a fraction of the child's overall variance
#: MVP's polynomial degree (``degree``, ``--mvp-degree``): ⌊ln n_p⌋ per partition
DEFAULT_MVP_DEGREE = "log"
VARIANCE_FLOOR = 1e-8
#: a parent whose within-cell SD is below this fraction of its overall SD counts as constant there
CONSTANT_TOL = 1e-12
_LN2PI = math.log(2.0 * math.pi)



def _central_value(column: np.ndarray) -> float:
    """The column's value nearest its median: subtracting it is exact for every value within a factor 2 of it
    (Sterbenz), so a column of 10¹⁵ ± 1 keeps its ± 1 (a mean of such values is off by a few hundredths, and
    the SD computed around it by as much)."""
    median = float(np.nanmedian(column))
    return float(column[np.nanargmin(np.abs(column - median))])

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
        self.centre = [0.0 if self.discrete[j] else _central_value(data.values[:, j]) for j in range(data.n)]
        self.sd = [0.0 if self.discrete[j] else float(np.nanstd(data.values[:, j] - self.centre[j]))
                   for j in range(data.n)]
        self.partition = PartitionCache(self.codes, self.arities, self.N)


    def cell_degree(self, n_p: int) -> int:
        return int(math.floor(math.log(n_p))) if self.degree == "log" else int(self.degree)

    def design(self, x: np.ndarray, cont: list[int]) -> np.ndarray:
        """[1, powers 1..g of each within-cell standardised, non-constant parent] for the cell rows ``x``."""
        n_p = x.shape[0]
        g = self.cell_degree(n_p)
        zs = []
        if g >= 1:
            for i, j in enumerate(cont):
                col = x[:, i]
                sd = float(col.std())
                if sd > CONSTANT_TOL * max(self.sd[j], 1e-300):
                    zs.append((col - col.mean()) / sd)
        if 1 + len(zs) * g >= n_p:          # as many columns as rows: the intercept alone (decided before the
            return np.ones((n_p, 1))        # powers are built: a fixed degree of 10^8 asked for gigabytes)
        # row-major, as before (the fitted values design @ β are summed in the same order); z^i = z^(i−1)·z, the
        # products a cumulative product takes, written in place (cumprod over a broadcast view took 10× longer)
        out = np.empty((n_p, 1 + len(zs) * g))
        out[:, 0] = 1.0
        for c, z in enumerate(zs):
            first = 1 + c * g
            out[:, first] = z
            for i in range(first + 1, first + g):
                np.multiply(out[:, i - 1], z, out=out[:, i])
        return out

    def loglik_df(self, child: int, parents: tuple[int, ...]) -> tuple[float, float]:
        """(ℓ, df) summed over the cells of the discrete parents."""
        return self._loglik_df(child, parents, for_test=False)

    def _loglik_df(self, child: int, parents: tuple[int, ...], *, for_test: bool,
                   shapes: list[tuple[int, int]] | None = None) -> tuple[float, float]:
        """(ℓ, df) over the cells; ``shapes`` (if given) receives every cell's (n_p, design columns m_p)."""
        disc = tuple(sorted(j for j in parents if self.discrete[j]))
        cont = sorted(j for j in parents if not self.discrete[j])
        part = self.partition(disc)
        xs = np.column_stack([self.values[j] for j in cont])[part.order] if cont else None
        if self.discrete[child]:
            d = self.arities[child]
            ys = self.codes[child][part.order]
        else:                                # in units of its SD: the score is the same in any units
            # centred too: least squares on a child of 10¹⁵ ± 1 lost the ± 1 (50 nats off at 1e15)
            ys = (self.values[child][part.order] - self.centre[child]) / (self.sd[child] or 1.0)
            floor = VARIANCE_FLOOR
        ll = 0.0
        df = 0.0
        for start, n_p in zip(part.starts.tolist(), part.counts.tolist(), strict=True):
            y = ys[start:start + n_p]
            if n_p <= 1:
                df += (d - 1) if self.discrete[child] else 1
                if shapes is not None:
                    shapes.append((n_p, 1))
                continue
            x = xs[start:start + n_p] if xs is not None else np.empty((n_p, 0))
            design = self.design(x, cont)
            m = design.shape[1]
            if shapes is not None:
                shapes.append((n_p, m))
            if self.discrete[child]:
                ll += self._discrete_cell(design, y, d, shrink_proportions=not for_test)
                df += m * (d - 1)
            else:
                if m == 1:
                    resid = y - y.mean()
                else:
                    resid = y - design @ np.linalg.lstsq(design, y, rcond=None)[0]
                s2 = float(resid @ resid) / n_p
                s2f = max(s2, floor)
                ll -= 0.5 * n_p * (_LN2PI + math.log(s2f) + s2 / s2f)
                df += m
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

    def lr_null_mean(self, child: int, parent: int, given: tuple[int, ...]) -> tuple[float, float] | None:
        """Null mean of the test's G for a continuous child (``None`` for a discrete one: eq. 21's linear-
        probability fit has no closed-form null mean). Each cell p fits m_p design columns by least
        squares and its own variance, so under child ⟂ parent | given with a polynomial truth E[G] =
        D(null cells) − D(full cells), D = :func:`~bnilp.scores.base.residual_deviance_mean` with m_p − 1
        slopes; the df are :meth:`lr_loglik_df`'s, Σ_full (m_p + 1) − Σ_null (m_p + 1)."""
        if self.discrete[child]:
            return None
        terms = []
        for parents in (tuple(sorted(given)), tuple(sorted((*given, parent)))):
            shapes: list[tuple[int, int]] = []
            self._loglik_df(child, parents, for_test=True, shapes=shapes)
            n, m = np.array(shapes, dtype=float).reshape(-1, 2).T
            terms.append((residual_deviance_mean(n, m - 1.0), float((m + 1.0).sum())))
        mean, dof = terms[0][0] - terms[1][0], terms[1][1] - terms[0][1]
        return (mean, dof) if dof > 0 and mean > 0 else None

    @staticmethod
    def _discrete_cell(design: np.ndarray, y: np.ndarray, d: int, shrink_proportions: bool = True) -> float:
        """Σ_j ln p̂_j(y_j) with the eq. 21 shrink towards uniform (for an intercept-only design only when
        ``shrink_proportions``; else the multinomial maximum likelihood)."""
        n_p = y.size
        if design.shape[1] == 1 and not shrink_proportions:
            counts = np.bincount(y, minlength=d).astype(float)
            return float(xlogy(counts, counts / n_p).sum())
        onehot = np.zeros((n_p, d))
        onehot[np.arange(n_p), y] = 1.0
        if design.shape[1] == 1:
            fitted = np.broadcast_to(onehot.mean(axis=0), onehot.shape)
        else:
            fitted = design @ np.linalg.lstsq(design, onehot, rcond=None)[0]
        low = fitted.min(axis=1)
        target = 1.0 / n_p
        alpha = np.ones(n_p)
        shrink = low < target
        if shrink.any():
            denom = low[shrink] - 1.0 / d
            with np.errstate(divide="ignore", invalid="ignore"):
                a = np.where(denom < 0, (target - 1.0 / d) / denom, 0.0)
            alpha[shrink] = np.clip(a, 0.0, 1.0)
        p_obs = alpha * fitted[np.arange(n_p), y] + (1.0 - alpha) / d
        return float(np.log(p_obs).sum())

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
            "small_partitions": "design with >= n_p columns falls back to intercept only; "
                                "n_p <= 1 contributes no likelihood",
            "variance_floor": f"{VARIANCE_FLOOR:g} (the standardised child's variance is 1)",
            "discrete_child": "linear probability fit, eq. 21 shrink to min 1/n_p (alpha clipped to [0,1])",
            "df": "per non-empty partition: design columns (continuous), columns * (d - 1) (discrete)",
            "pruning": "R1 only",
        })
        return out
