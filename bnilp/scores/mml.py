"""Minimum Message Length (MML) score for mixed data, s = −(message length) in nits.

Source: Li & Dai, "The discovery of generalized causal models with mixed variables using MML
criterion" (seed ``li-dai-mml-mixed-causal-models.txt``), §3, eqs. 3.8–3.14, as specified in
``shared/docs/scores.md``. n is the number of variables, m the number of parents, T the rows of the
(sub)data set being encoded. Per family the message length is the structure part plus the parameter
and data part:

- structure (eq. 3.8, exact with lgamma instead of the Stirling form 3.9): ln n + ln C(n, m);
- discrete child, discrete parents (eqs. 3.10–3.11), r states, q = ∏ r_j parent configurations,
  θ_jk = (n_jk + ½)/(N_j + r/2):
  Σ_{j=1..q} ln q + Σ_{j: N_j>0} [(r−1)/2·(ln(N_j/12) + 1) − ln (r−1)! − Σ_k (n_jk + ½)·ln θ_jk];
- continuous child, no parents (eq. 3.12), σ² = SS/(T−1):
  ½ ln(T²/2) + ln κ₂ + 1 + T/2·ln 2π + (T−1)/2·ln σ² + Σ_t (v_t − μ)²/(2σ²);
- continuous child, K regressors (eq. 3.13) by least squares, A = XᵀX (T×K design; Fisher
  information of the coefficients times σ²), σ² = RSS/(T−K):
  ½ ln(T/2) + ½ ln|A| + (K+1)/2·ln κ_{K+1} + (K+1)/2 + T/2·ln 2π + (T−K)/2·ln σ² + RSS/(2σ²);
- continuous child with discrete parents (eq. 3.14): Σ_{j=1..q} ln q plus 3.12 or 3.13 on the rows
  of every observed configuration j.

These constants follow from the Wallace–Freeman formula with parameters (coefficients, σ²), prior
h ∝ 1/σ² and Fisher determinant |A|/σ^{2K}·T/(2σ⁴) (T²/(2σ⁶) without parents), which reproduces the
seed's ½ ln(T²/2), ½ ln(T/2) and the (T−1)/2, (T−K)/2 powers of σ².

Conventions (bnilp's, not the paper's):

- The −T·ln ε_i measurement-accuracy term is dropped: it is the same for every parent set of a
  child, so it does not change any comparison between parent sets of that child.
- Unobserved parent configurations (N_j = 0) contribute their ln q but no parameter/data part.
- **Intercept** (``intercept=True``, default): the design of 3.13 is [1, parents], K = parents + 1.
  The paper's eq. 2.2 has no intercept, which inside a discrete-parent cell forces the cell mean of
  the child to the line through the origin and makes adding a true continuous parent *lengthen* the
  message on real data (clgaussian: D | A,H loses to D | A). With the intercept column, 3.13 at
  zero parents is exactly 3.12 (A = T gives ½ ln(T²/2), σ² = SS/(T−1)), so the two equations
  become one family. ``intercept=False`` is the paper's literal form; continuous columns are then
  centred on their overall mean first. Data scale is left as it is.
- κ_d: Conway & Sloane's best known lattice-quantiser constants for d ≤ 8, beyond that Wallace's
  approximation d/2·(1 + ln κ_d) ≈ −d/2·ln 2π + ½·ln(dπ) − γ (γ Euler's constant).
- Degenerate cells: σ² is floored at 10⁻⁸·Var(child) (exact fits, duplicate rows) and 3.12 uses
  max(T−1, 1) in σ²'s denominator (T = 1); a 3.13 cell with T ≤ K rows or a rank-deficient A
  (collinear parents) is encoded with 3.12 instead.
- **A discrete child may not have a continuous parent** (the paper's Table 1: "not allowed"):
  ``allowed_parent`` returns False for such pairs and ``raw`` raises ``InputError`` if asked.
- ``penalty_discount`` must be 1 (MML has no BIC penalty to discount); the score has no
  likelihood/df split, so ``loglik_df`` raises ``NotImplementedError``.

Pruning: only R1 is claimed.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from bnilp.data import Dataset
from bnilp.errors import InputError
from bnilp.scores.base import DEFAULT_PENALTY_DISCOUNT, LocalScore, StructurePrior, centred_columns
from bnilp.scores.cg import Partition, PartitionCache, cell_means, discrete_mask

#: best known lattice quantiser constants κ_d, d = 1..8 (Conway & Sloane, table 2.3)
KAPPA = {1: 1 / 12, 2: 5 / (36 * math.sqrt(3)), 3: 0.0785433, 4: 0.0766032, 5: 0.0756254,
         6: 0.0742437, 7: 0.0731281, 8: 0.0716821}
#: σ² floor as a fraction of the child's overall variance
VARIANCE_FLOOR = 1e-8
_EULER_GAMMA = 0.5772156649015329
_LN2PI = math.log(2.0 * math.pi)


def log_kappa(d: int) -> float:
    """ln κ_d (table for d ≤ 8, Wallace's approximation beyond)."""
    if d in KAPPA:
        return math.log(KAPPA[d])
    return (2.0 / d) * (-d / 2 * _LN2PI + 0.5 * math.log(d * math.pi) - _EULER_GAMMA) - 1.0


def structure_length(n: int, m: int) -> float:
    """Eq. 3.8 for one node: ln n + ln C(n, m)."""
    return math.log(n) + math.lgamma(n + 1) - math.lgamma(m + 1) - math.lgamma(n - m + 1)


def multinomial_length(counts: np.ndarray, q: float) -> float:
    """Eq. 3.11 from the (configurations × r) count table of the observed configurations."""
    r = counts.shape[1]
    nj = counts.sum(axis=1)
    theta = (counts + 0.5) / (nj[:, None] + r / 2)
    per_config = ((r - 1) / 2 * (np.log(nj / 12.0) + 1) - math.lgamma(r)
                  - ((counts + 0.5) * np.log(theta)).sum(axis=1))
    return q * math.log(q) + float(per_config.sum())


def gaussian_length(v: np.ndarray, floor: float) -> float:
    """Eq. 3.12 (no parents) on T values, −T ln ε dropped."""
    t = v.size
    ss = float(((v - v.mean()) ** 2).sum())
    s2 = max(ss / max(t - 1, 1), floor)
    return (0.5 * math.log(t * t / 2.0) + log_kappa(2) + 1.0 + t / 2 * _LN2PI
            + (t - 1) / 2 * math.log(s2) + ss / (2 * s2))


def _gaussian_lengths(t: np.ndarray, ss: np.ndarray, floor: float) -> np.ndarray:
    """:func:`gaussian_length` of cells of ``t`` values with sums of squares about their means ``ss``."""
    s2 = np.maximum(ss / np.maximum(t - 1.0, 1.0), floor)
    return (0.5 * np.log(t * t / 2.0) + log_kappa(2) + 1.0 + t / 2 * _LN2PI + (t - 1.0) / 2 * np.log(s2)
            + ss / (2 * s2))


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a <= b else (b, a)


def regression_length(v: np.ndarray, x: np.ndarray, floor: float) -> float:
    """Eq. 3.13 with the T×K design ``x`` as given, −T ln ε dropped; 3.12 if degenerate. Degeneracy is decided,
    and ln|XᵀX| computed, on the design with unit-length columns (ln|XᵀX| = ln|DAD| + 2 Σ ln dᵢ for
    A = XᵀX and D = diag(A)^−½), and so is the least-squares fit (the same residuals): a parent measured on a
    scale of 1e−7 or 1e17 is no more degenerate than on a scale of 1, only its ½ ln|A| term moves."""
    t, k = x.shape
    if t <= k:
        return gaussian_length(v, floor)
    a = x.T @ x
    d = np.sqrt(np.diag(a))
    if not np.all(d > 0):
        return gaussian_length(v, floor)
    eig = np.linalg.eigvalsh(a / np.outer(d, d))
    if eig[0] <= 1e-12 * float(eig[-1]):
        return gaussian_length(v, floor)
    unit = x / d                                # least squares on the unit-length design too: the raw one's
    alpha = np.linalg.lstsq(unit, v, rcond=None)[0]     # column scales 1e13 apart made lstsq drop the small column
    rss = float(((v - unit @ alpha) ** 2).sum())
    s2 = max(rss / (t - k), floor)
    log_det = float(np.log(eig).sum()) + 2.0 * float(np.log(d).sum())
    return (0.5 * math.log(t / 2.0) + 0.5 * log_det + (k + 1) / 2 * log_kappa(k + 1)
            + (k + 1) / 2 + t / 2 * _LN2PI + (t - k) / 2 * math.log(s2) + rss / (2 * s2))


class MinimumMessageLength(LocalScore):
    """MML score of Li & Dai (eqs. 3.8–3.14); continuous parents of discrete children are disallowed."""

    name = "mml"
    takes_penalty_discount = False

    def __init__(self, data: Dataset, *, prior: StructurePrior | None = None,
                 penalty_discount: float = DEFAULT_PENALTY_DISCOUNT, intercept: bool = True):
        if penalty_discount != DEFAULT_PENALTY_DISCOUNT:
            raise InputError(f"score 'mml' takes no penalty_discount (--penalty-discount) (got {penalty_discount}); "
                             "MML has no BIC penalty to scale")
        super().__init__(data, prior=prior, penalty_discount=penalty_discount)
        self.intercept = bool(intercept)
        self.N = data.N
        self.n = data.n
        self.discrete = [data.is_discrete(j) for j in range(data.n)]
        self.codes = [np.ascontiguousarray(data.codes[:, j]) for j in range(data.n)]
        self.arities = list(data.arities)
        self.centred: list[np.ndarray | None] = []
        self.floor: list[float] = []
        for j in range(data.n):
            if self.discrete[j]:
                self.centred.append(None)
                self.floor.append(0.0)
            else:
                centred = centred_columns(data.values[:, [j]].astype(float))[:, 0]    # not the raw mean: 1e15 ± 1
                self.centred.append(centred)
                self.floor.append(VARIANCE_FLOOR * max(float((centred * centred).mean()), 1e-300))
        self.partition = PartitionCache(self.codes, self.arities, self.N)

    def family_share_key(self, child: int, parents: tuple[int, ...]) -> int:
        """The discrete parents as a bit mask: the partition whose cell sums the family reads (a family table,
        :func:`bnilp.lattice.plan_family_table`, scores the families of one partition together)."""
        return discrete_mask(self.discrete, parents)

    def release_shared(self) -> None:
        """Let go of every partition and its sums (a family table's build moved to the next partition)."""
        self.partition = PartitionCache(self.codes, self.arities, self.N)

    def allowed_parent(self, child: int, parent: int) -> bool:
        """No continuous parent for a discrete child (Li & Dai, Table 1)."""
        return parent != child and not (self.discrete[child] and not self.discrete[parent])


    def message_length(self, child: int, parents: tuple[int, ...]) -> float:
        """Structure + parameters + data of the family, in nits (without −T ln ε)."""
        for p in parents:
            if not self.allowed_parent(child, p):
                raise InputError(f"score 'mml': {self.data.names[p]!r} cannot be a parent of "
                                 f"{self.data.names[child]!r} (no continuous parent of a discrete child)")
        disc = tuple(sorted(j for j in parents if self.discrete[j]))
        cont = sorted(j for j in parents if not self.discrete[j])
        q = float(math.prod(self.arities[j] for j in disc))
        part = self.partition(disc)
        length = structure_length(self.n, len(parents))
        if self.discrete[child]:
            r = self.arities[child]
            inverse = part.inverse
            table = np.bincount(inverse * r + self.codes[child], minlength=part.counts.size * r)
            return length + multinomial_length(table.reshape(-1, r).astype(float), q)
        return length + q * math.log(q) + float(self._cell_lengths(part, child, cont).sum())

    def _cell_lengths(self, part: Partition, child: int, cont: list[int]) -> np.ndarray:
        """Eq. 3.12 or 3.13 of each observed configuration (cell) of ``part``, from per-cell sums: the cells'
        means and centred products of the columns (:meth:`_products`), kept on the partition and shared by every
        family with these discrete parents. With an intercept the design [1, X] of T rows has
        |A| = T·|C| (C the cell's centred scatter of X) and RSS = c_yy − c_xyᵀC⁻¹c_xy; without one A = C + T·m·mᵀ
        and the sums are uncentred likewise (|A| and the fit from the correlation matrix of C or A and its scale:
        exact where the parents sit far from 0 in a cell, where the unit-length [1, X] is nearly singular and the
        row fit's ln|A| is ~1e−6 relative off). A cell whose normal equations would lose digits — the correlation
        matrix of what is solved has an eigenvalue below :data:`~bnilp.scores.mvp.GRAM_TOL`, or the fit leaves
        less than :data:`~bnilp.scores.mvp.CANCEL_TOL` of the child's sum of squares — is fitted on its rows by
        :func:`regression_length` (least squares on the unit-length design), as every cell was before. The
        degeneracy rule (eq. 3.12 for T ≤ K or an eigenvalue of the unit-length A at most 1e−12 of the largest)
        is decided, as there, on A, built from the sums."""
        from bnilp.scores.mvp import CANCEL_TOL, GRAM_TOL

        floor = self.floor[child]
        n = part.counts.astype(float)
        products = self._products(part, [child, *cont])
        syy = products[child, child]
        out = _gaussian_lengths(n, syy, floor)
        k = len(cont) + int(self.intercept)
        cells = np.flatnonzero(n > k) if cont else np.zeros(0, dtype=np.int64)
        if cells.size == 0:
            return out
        t = n[cells]
        width = len(cont)
        mean = np.stack([part.means[j][cells] for j in cont], axis=1)
        scatter = np.empty((cells.size, width, width))
        for a in range(width):
            for b in range(a, width):
                scatter[:, a, b] = scatter[:, b, a] = products[_pair(cont[a], cont[b])][cells]
        cxy = np.stack([products[_pair(j, child)][cells] for j in cont], axis=1)
        uncentred = scatter + t[:, None, None] * mean[:, :, None] * mean[:, None, :]
        if self.intercept:
            design = np.empty((cells.size, k, k))
            design[:, 0, 0] = t
            design[:, 0, 1:] = design[:, 1:, 0] = t[:, None] * mean
            design[:, 1:, 1:] = uncentred
            solved, rhs, total = scatter, cxy, syy[cells]
        else:
            my = part.means[child][cells]
            design = solved = uncentred
            rhs, total = cxy + t[:, None] * mean * my[:, None], syy[cells] + t * my * my
        d = np.sqrt(np.maximum(np.diagonal(design, axis1=1, axis2=2), 0.0))
        live = (d > 0).all(axis=1)
        eig = np.ones((cells.size, k))
        eig[live] = np.linalg.eigvalsh(design[live] / (d[live, :, None] * d[live, None, :]))
        fit = live & (eig[:, 0] > 1e-12 * eig[:, -1])
        ds = np.sqrt(np.maximum(np.diagonal(solved, axis1=1, axis2=2), 0.0))
        fit &= (ds > 0).all(axis=1)
        rss, log_det = np.zeros(cells.size), np.zeros(cells.size)
        near = ~fit.copy()
        if fit.any():
            corr = solved[fit] / (ds[fit, :, None] * ds[fit, None, :])
            z = rhs[fit] / ds[fit]
            spectrum = np.linalg.eigvalsh(corr)
            beta = np.linalg.solve(corr, z[:, :, None])[:, :, 0]
            rss[fit] = total[fit] - (z * beta).sum(axis=1)
            near[fit] = (spectrum[:, 0] < GRAM_TOL) | (rss[fit] < CANCEL_TOL * total[fit])
            # ln|A| of what is solved: with the intercept ln T + ln|C| — from the centred scatter, exact where the
            # parents sit far from 0 in the cell (the unit-length [1, X] is then nearly singular and its smallest
            # eigenvalue carries ~1e-4 relative error: ~1e-6 nat off, a review's find, in the row fit too)
            log_det[fit] = np.log(spectrum).sum(axis=1) + 2.0 * np.log(ds[fit]).sum(axis=1)
            if self.intercept:
                log_det[fit] += np.log(t[fit])
        good = fit & ~near
        tg, kk = t[good], float(k)
        s2 = np.maximum(rss[good] / (tg - kk), floor)
        log_det = log_det[good]
        out[cells[good]] = (0.5 * np.log(tg / 2.0) + 0.5 * log_det + (kk + 1) / 2 * log_kappa(k + 1) + (kk + 1) / 2
                            + tg / 2 * _LN2PI + (tg - kk) / 2 * np.log(s2) + rss[good] / (2 * s2))
        redo = cells[fit & near]
        if redo.size:
            y = self.centred[child][part.order]
            x = np.column_stack([self.centred[j] for j in cont])[part.order]
            for p in redo.tolist():
                rows = slice(int(part.starts[p]), int(part.starts[p] + part.counts[p]))
                design_p = np.column_stack([np.ones(int(part.counts[p])), x[rows]]) if self.intercept else x[rows]
                out[p] = regression_length(y[rows], design_p, floor)
        return out

    def _products(self, part: Partition, cols: list[int]) -> dict[tuple[int, int], np.ndarray]:
        """The cells' means of the centred columns ``cols`` (``part.means``) and the sums of products of the columns
        less their cell means (``part.products``, keyed by the pair (a ≤ b)), two passes as CG's (so cells far
        from the column's mean lose no digits), summed once per partition."""
        inv, n = part.inverse, part.counts
        cells = n.size
        added = 0
        for j in cols:
            if j not in part.means:
                part.means[j] = cell_means(self.centred[j], inv, n)
                added += part.means[j].nbytes
        for a, b in itertools.combinations_with_replacement(sorted(cols), 2):
            if (a, b) not in part.products:
                xa = self.centred[a] - part.means[a][inv]
                xb = xa if a == b else self.centred[b] - part.means[b][inv]
                part.products[a, b] = np.bincount(inv, weights=xa * xb, minlength=cells)
                added += part.products[a, b].nbytes
        if added:
            self.partition.grew(part, added)
        return part.products

    def raw(self, child: int, parents: tuple[int, ...]) -> float:
        return -self.message_length(child, parents)

    def constructor_settings(self) -> dict[str, Any]:
        return {**super().constructor_settings(), "intercept": self.intercept}

    def settings(self) -> dict[str, Any]:
        out = super().settings()
        out.update({
            "units": "nits; score = -message length",
            "structure_code": "ln n + ln C(n, m) (eq. 3.8, exact)",
            "dropped_terms": "-T ln(epsilon) (constant per child)",
            "continuous_parent_of_discrete_child": "disallowed (allowed_parent is False)",
            "regression": ("intercept column in eq. 3.13 (reduces to 3.12 at no parents)" if self.intercept
                           else "no intercept (eq. 2.2), continuous columns centred on their overall mean"),
            "unobserved_configurations": "contribute ln q only",
            "small_partitions": "3.13 cells with T <= K or rank-deficient X'X use eq. 3.12; "
                                f"sigma^2 floored at {VARIANCE_FLOOR:g} * Var(child); T = 1 uses T-1 -> 1",
            "kappa": "Conway-Sloane table for d <= 8, Wallace's approximation beyond",
            "pruning": "R1 only",
        })
        return out
