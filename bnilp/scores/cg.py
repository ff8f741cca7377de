"""Conditional Gaussian (CG) and its discretised variant (CGd) for mixed data.

Source: Andrews, Ramsey & Cooper, "Scoring Bayesian networks of mixed variables" (seed
``andrews-ramsey-cooper-mixed-scores.txt``), §3 (CG) and §5.2 (discretisation heuristic), with the
conventions of ``shared/docs/scores.md`` and ``shared/docs/tetrad-notes.md``.

**CG of a variable set S** (§3, eqs. 8–11). Partition the N rows by every combination of the
discrete variables of S; in a non-empty cell p with n_p rows and the k continuous variables of S,

    ℓ_p = n_p·ln(n_p/N) − n_p/2·(ln|Σ̂_p| + k·(ln 2π + 1)),       Σ̂_p the MLE covariance (÷ n_p)

(the seed's eqs. 9–10 print "+ 1" where the maximised Gaussian log-likelihood has "+ k").
ℓ(S) = Σ_p ℓ_p and df(S) = q_S·(k + k(k+1)/2 + 1) − 1 with q_S = ∏ r_j over *all* configurations of
the discrete variables of S, observed or not (means, covariances and a mixing weight per cell; the
seed's eq. 11 omits the means — tetrad-notes). For a family,

    ℓ(Y | Pa) = ℓ({Y} ∪ Pa) − ℓ(Pa),   df(Y | Pa) = df({Y} ∪ Pa) − df(Pa)   (eqs. 3, 4, 12, 13)
    s(Y | Pa) = ℓ(Y | Pa) − ½·c·df(Y | Pa)·ln N                            (c = penalty discount)

for a discrete and a continuous child alike; the denominator mixture of a discrete child is the
paper's single Gaussian per discrete-parent cell. Because every family is a difference of one set
function, CG is score-equivalent. With only discrete variables CG is BIC; a continuous child with
k continuous parents is linear regression with intercept and MLE variance, df = k + 2.

**Small cells** (not in the paper; tetrad-notes leaves the rule to us). A cell of S is *small*
when n_p ≤ k (Σ̂_p necessarily singular), when a column is constant inside it (duplicate rows: a spread within
rounding of its values, :func:`flat_columns`) or when the smallest eigenvalue of its
*correlation* matrix is below ``EIG_TOL`` = 1e−9 (collinear variables inside the cell). The tests are on the
cell's own scale: a cell whose spread is tiny beside the column's overall spread (cells far apart, as with a
discrete parent that shifts a mean by 10¹¹ standard deviations, or a column whose one outlier lies 10¹¹ times
the others' spread away) is not singular and keeps its own Σ̂_p (until 2026-12-06 a spread below 10⁻¹⁰ of the
column's SD counted as constant, and such a cell's parent lost its gain to the pooled covariance: a review's
y = 10¹¹·c + noise scored s(y | c) 4,288 nats below y = 10⁹·c + noise, which has the same cells). Constant is a
range of the values within a few ulps (:func:`flat_columns`), not a small variance.
A small cell keeps its own means and mixing weight but uses the
*pooled within-cell covariance* Σ_W = Σ_p n_p·Σ̂_p / N of S (all rows of S, each centred on its
cell mean), through the proper Gaussian log-likelihood

    ℓ_p = n_p·ln(n_p/N) − n_p/2·(ln|Σ_W| + tr(Σ_W⁻¹·Σ̂_p) + k·ln 2π).

So numerator and denominator are always evaluated on the same rows, nothing is dropped, and a
degenerate cell earns no unbounded likelihood. Σ_W's eigenvalues are floored at 1/N on the standardised
scale (:func:`pooled_floor`): where Σ_W has no spread in some direction (globally collinear columns; every
cell a single row, as with a row-identifier column) ℓ stays finite and an identifier parent never pays for
its cells (it did with the earlier floor of ``EIG_TOL``: y | id scored 2,544 against y's −1,417 at N = 1,000).
The df count does not change with the rule. Known limits: a cell can switch between its own and
the pooled covariance when a parent is added, so for families with small cells the *score* of the larger
family can fall below the smaller's by more than its penalty (ℓ itself lower); and for a *discrete* child the
single-Gaussian denominator makes that possible even without small cells (paper's approximation). The CI test's
statistic with a continuous tested variable does not use the set function: it compares that variable's nested
regressions cell by cell (:func:`nested_gaussian_lr`), never negative, as ``shared/docs/tetrad-notes.md`` asks.

**CGd** (§5.2): every continuous column gets an equal-frequency discretised copy with b bins
(default 3): cut points sorted[⌊N/b⌋·(i+1)], i = 0..b−2, a value equal to a cut going to the upper
bin (Tetrad's rule); empty bins are dropped from the arity. A discrete child's continuous parents
are replaced by their copies and the family is scored by multinomial BIC,
s = Σ_jk n_jk ln(n_jk/n_j) − ½·c·q·(r − 1)·ln N. A continuous child is scored by CG.

Pruning: only R1 is claimed (a continuous log-density is unbounded, so the discrete-score superset
bounds R2–R5 do not transfer; see ``shared/docs/pruning.md``). CGd's *discrete* children are scored by
its BIC on the binned data (:meth:`ConditionalGaussianDiscretized.discrete_view`: the same values by
construction), so their walk counts in compiled code and BIC's R2–R4 hold for them
(:meth:`~bnilp.scores.base.LocalScore.walk_score`).

**The set table.** A family asks ℓ of two sets, and the families of different children share most sets, so
a walk first computes ℓ of every set it will ask for (known in advance: only R1 applies, which removes a set
but not its supersets; :func:`bnilp.lattice.plan_set_table`), once, split across the workers, sorted by
their discrete variables; each row partition keeps its cells' means and pair sums (:class:`Partition`),
which every set with those discrete variables reads.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import xlogy

from bnilp.data import Dataset
from bnilp.errors import InputError, check_count
from bnilp.scores.base import DEFAULT_PENALTY_DISCOUNT, LocalScore, StructurePrior, residual_deviance_mean
from bnilp.scores.discrete import BIC

#: CGd's equal-frequency bins per continuous variable (``bins``, ``--bins``)
DEFAULT_BINS = 3
#: eigenvalue threshold below which a cell's correlation matrix counts as singular (collinear columns in it)
EIG_TOL = 1e-9


def flat_columns(low: np.ndarray, high: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """Which columns of each cell are constant there: the range of their standardised values z = (x − μ)/σ in the
    cell, high − low, at most ``FLAT_ULPS`` units in the last place of the values' magnitude M = max(|low|, |high|)
    + |μ/σ| (their raw size in the column's SDs, μ the column's mean).

    Why the range and this scale: duplicate raw values give identical z (range 0), and values equal but for
    rounding (0.3 and 0.1 + 0.2) a range of an ulp or two of M; distinct measurements more — however small their
    spread beside the column's *overall* SD (cells far apart, or one extreme outlier, leave ordinary cells a
    standardised spread of 10⁻¹¹ and less). A variance would not do: the cell's mean, a sum of n_p values, carries a
    rounding of up to n_p ulps, which the centred products of identical values square into a spread (0.1 in a
    cell of 1,000 rows: 2·10⁻³⁰, of 10⁶ rows 2·10⁻²⁴ — more than 1e-14 of the value, where a rule on the variance
    set its line). ``low`` and ``high`` are (cells, k), ``offset`` μ/σ per column."""
    magnitude = np.maximum(np.abs(low), np.abs(high)) + np.abs(offset)
    return high - low <= FLAT_ULPS * np.finfo(float).eps * magnitude


def cell_means(x: np.ndarray, cells: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Each cell's mean of ``x`` (``cells`` the rows' cells, ``n`` their counts), within an ulp or so of the exact
    mean where the cell is narrow (its values within a factor of two of each other — the case that matters here:
    a cell far from the column's mean): the naive mean m₁ = Σ x / n, then its error m₁ − x̄ = Σ (x − m₁) / n,
    summed over the rows' differences from m₁, which are then small and exact (Björck 1996, §2.2: the corrected
    two-pass algorithm). Values that cancel (10¹⁶, 1, −10¹⁶, 1) keep the naive sum's error. A naive
    sum is off by up to n·u·Σ|x| (u the unit roundoff), which squares into each cell's variance: a cell of
    10⁻¹⁴ of the column's spread (a discrete parent that moves it by 10¹⁴ within-cell SDs) lost a third of its
    variance to a mean off by 10⁻¹⁴ on 1,000 rows."""
    rows = np.maximum(n, 1)                         # (an empty cell's mean is 0)
    first = np.bincount(cells, weights=x, minlength=n.size) / rows
    return first + np.bincount(cells, weights=x - first[cells], minlength=n.size) / rows


def pooled_floor(n_rows: int) -> float:
    """The least eigenvalue the pooled within-cell covariance Σ_W of the small-cell rule may take, on the
    globally standardised scale: 1/N (and never below ``EIG_TOL``).

    Why 1/N: a direction in which Σ_W has no spread (every cell a single row, as with a row-identifier column;
    or a duplicated column) would otherwise be floored at ``EIG_TOL`` and earn a small cell −½·ln EIG_TOL ≈ 10.4
    nats a row; an identifier parent of a continuous child Y (no other parent, standardised variance 1) then
    gains N·(½·ln(1/f) + ½) (f the floor, the +½ from the trace term's 0 in place of 1) and costs the penalty of
    2N − 2 parameters more (df({id, Y}) − df({id}) = 2N against df({Y}) = 2), (N − 1)·ln N. With f = 1/N the
    gain is N·(ln N + 1)/2 < (N − 1)·ln N for every N ≥ 6 (with ``penalty_discount`` 1), so an identifier is
    not a parent; with 1e−9 it won up to N ≈ 3·10⁴. A genuine exact relation (X₂ = 2·X₁) still earns
    ½·ln N a row, far above the ½·ln N its one slope costs in all."""
    return max(EIG_TOL, 1.0 / n_rows)

#: floor of a standardised variance where a log of it must stay finite (the CI tests' nested regressions)
FLAT_TOL = 1e-20
#: a column is constant in a cell when the range of its values there is at most this many units in the last place
#: of their magnitude (:func:`flat_columns`): duplicates up to the rounding that standardising leaves
FLAT_ULPS = 4
#: cache sizes (entries): the set cache is cleared when full; the partition cache keeps the first partitions
#: asked for (:class:`PartitionCache`)
_SET_CACHE = 200_000
_PART_CACHE = 4096
#: ... and holds at most this many bytes of partitions and of the sums kept on them (at 10⁶ rows a partition's
#: cell of every row alone is 8 MB)
_PART_CACHE_BYTES = 1 << 30
#: a walk's set table (:func:`bnilp.lattice.plan_set_table`) holds at most this many sets (~70 MB)
SET_TABLE_MAX_SETS = 200_000
_LN2PI = math.log(2.0 * math.pi)


class Partition:
    """Rows grouped by the configuration of some discrete columns.

    ``order`` sorts the rows by cell (sorted when first asked for: CG's sums need only ``inverse``),
    ``starts`` are the first sorted positions of the cells, ``counts`` the non-empty cell sizes,
    ``inverse`` the cell of every (unsorted) row. CG keeps its per-cell sums here (``means`` of a column,
    ``products`` of two centred columns), as every variable set with these discrete variables shares them;
    MVP keeps its orthonormal powers and their sums in ``extra``.
    """

    __slots__ = ("_order", "starts", "counts", "inverse", "means", "products", "ranges", "extra", "key", "held")

    def __init__(self, codes: np.ndarray) -> None:
        uniq, inverse = np.unique(codes, return_inverse=True)
        self.inverse = inverse.ravel()
        self._order: np.ndarray | None = None
        self.counts = np.bincount(self.inverse, minlength=uniq.size)
        self.starts = np.concatenate(([0], np.cumsum(self.counts)[:-1]))
        self.means: dict[int, np.ndarray] = {}
        self.products: dict[tuple[int, int], np.ndarray] = {}
        self.ranges: dict[int, tuple[np.ndarray, np.ndarray]] = {}     # CG's least and greatest value in each cell
        self.extra: dict[tuple, Any] = {}          # another score's per-partition sums (MVP's bases)
        self.key: tuple[int, ...] | None = None    # its discrete columns, where a PartitionCache made it
        self.held = 0                              # bytes a PartitionCache counts for it (itself and its sums)

    @property
    def nbytes(self) -> int:
        return 2 * self.inverse.nbytes + 2 * self.counts.nbytes

    @property
    def order(self) -> np.ndarray:
        if self._order is None:
            self._order = np.argsort(self.inverse, kind="stable")
        return self._order


def discrete_mask(discrete: Sequence[bool], variables: Iterable[int]) -> int:
    """The discrete ones among ``variables`` as a bit mask (bit j for variable j): the key of the row partition
    they cut (its cells are their joint states), which CG's, MVP's and MML's families with those discrete
    parents share."""
    return sum(1 << j for j in variables if discrete[j])


class PartitionCache:
    """Row partitions by sets of discrete columns, kept for reuse: the first ``size`` asked for while they fit in
    ``max_bytes``, and past that the latest one alone.

    A walk asks for the same discrete parent sets child after child, in about the same order: keeping the first
    ones serves them every time, where clearing everything when full (as this cache did) or evicting the oldest
    serves none once the walk's sets outnumber the cache (MVP on 15 discrete and 15 continuous columns at palim 3:
    576 sets, 14,867 partitions built with bases on them, against 576 when each is kept). The one slot past the
    cache serves a run of calls for one set (the set table's sorted runs) with one partition.
    """

    def __init__(self, codes: list[np.ndarray], arities: list[int], n_rows: int, size: int = _PART_CACHE,
                 max_bytes: int = _PART_CACHE_BYTES):
        self.codes, self.arities, self.n_rows, self.size, self.max_bytes = codes, arities, n_rows, size, max_bytes
        self._parts: dict[tuple[int, ...], Partition] = {}
        self._latest: Partition | None = None      # the one partition held past the cache
        self.bytes = 0          # ``held`` of the partitions kept and of the latest one

    def __call__(self, disc: tuple[int, ...]) -> Partition:
        """Row partition by the discrete columns ``disc`` (sorted tuple)."""
        hit = self._parts.get(disc)
        if hit is None:
            if self._latest is not None and self._latest.key == disc:
                return self._latest
            codes = mixed_radix_codes([self.codes[j] for j in disc], [self.arities[j] for j in disc], self.n_rows)
            hit = Partition(codes)
            hit.key, hit.held = disc, hit.nbytes
            if len(self._parts) < self.size and self.bytes + hit.nbytes <= self.max_bytes:
                self._parts[disc] = hit
            else:
                self._let_latest_go()
                self._latest = hit
            self.bytes += hit.held
        return hit

    def _let_latest_go(self) -> None:
        if self._latest is not None:
            self.bytes -= self._latest.held
            self._latest = None

    def keep(self, part: Partition, key: tuple, value: Any, nbytes: int, *, spare: float = 0.0) -> Any:
        """Keep ``value`` in ``part.extra`` for later calls while it fits in the budget with the fraction ``spare``
        left over; past it ``value`` serves the caller and goes. For sums a walk asks for again child after child
        (MVP's bases), keeping the first ones beats :meth:`grew`'s clearing everything. A partition the cache no
        longer holds keeps nothing (its bytes would be counted and never let go)."""
        held = part is self._latest or (part.key is not None and self._parts.get(part.key) is part)
        if held and self.bytes + nbytes <= (1.0 - spare) * self.max_bytes:
            part.extra[key] = value
            part.held += nbytes
            self.bytes += nbytes
        return value

    def grew(self, part: Partition, nbytes: int) -> None:
        """``part`` took ``nbytes`` more (cell sums kept on it); past the budget every other partition is let go
        and ``part`` stays as the latest (CG's set table asks for its sets sorted by their discrete variables, so
        the one growing is the one the next calls want)."""
        part.held += nbytes
        self.bytes += nbytes
        if self.bytes > self.max_bytes:
            self._parts.clear()
            self._latest, self.bytes = (part, part.held) if part.key is not None else (None, 0)


def mixed_radix_codes(columns: list[np.ndarray], arities: list[int], n_rows: int) -> np.ndarray:
    """Configuration code of every row (re-coded with ``np.unique`` before the radix overflows)."""
    codes = np.zeros(n_rows, dtype=np.int64)
    size = 1
    for col, r in zip(columns, arities, strict=True):
        codes = codes * r + col
        size *= r
        if size > (1 << 40):
            uniq, codes = np.unique(codes, return_inverse=True)
            codes = codes.ravel().astype(np.int64)
            size = int(uniq.size)
    return codes


def equal_frequency_bins(x: np.ndarray, bins: int) -> np.ndarray:
    """Codes 0..b'−1 of the equal-frequency bins of ``x`` (Tetrad's cut rule, empty bins dropped)."""
    xs = np.sort(x)
    step = x.size // bins
    cuts = xs[[step * (i + 1) for i in range(bins - 1)]] if step > 0 else xs[:0]
    raw = np.searchsorted(cuts, x, side="right")
    _, codes = np.unique(raw, return_inverse=True)
    return codes.ravel().astype(np.int64)


def group_rss(y: np.ndarray, columns: Sequence[np.ndarray], groups: np.ndarray,
              n_groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, RSS, rank) of each group of rows: the least residual sum of squares of ``y`` regressed on an intercept and
    ``columns`` inside the group (``groups`` numbers the rows' groups 0..n_groups − 1),

        RSS_g = min_{a, β} Σ_{i ∈ g} (y_i − a − βᵀx_i)² = s_yy − s_yxᵀ·S_xx⁺·s_xy,

    the Schur complement of the group's centred scatter (Σ_i (x_i − x̄_g)(x_i − x̄_g)ᵀ and its y entries), summed
    per group by ``np.bincount`` after the group means (:func:`cell_means`, as
    :meth:`ConditionalGaussian._scatter`). A
    direction of the regressors without spread in the group — a column constant there (variance ≤ ``FLAT_TOL``
    on the standardised scale) or collinear columns (eigenvalue of their correlation matrix ≤ ``EIG_TOL``) — is
    left out, which is least squares on the others (the pseudo-inverse S_xx⁺); rounding can leave RSS a little
    below 0, which is taken as 0. The rank is the number of directions kept: the slopes the group's fit has
    (n·σ̂²/σ² is χ² with n − 1 − rank df under a Gaussian model)."""
    n = np.bincount(groups, minlength=n_groups).astype(float)
    centred = []
    for col in (*columns, y):
        centred.append(col - cell_means(col, groups, n)[groups])
    m = len(centred)
    scatter = np.empty((n_groups, m, m))
    for a in range(m):
        for b in range(a, m):
            scatter[:, a, b] = scatter[:, b, a] = np.bincount(groups, weights=centred[a] * centred[b],
                                                              minlength=n_groups)
    rss = scatter[:, -1, -1].copy()
    rank = np.zeros(n_groups, dtype=np.int64)
    if m > 1:
        sxx, sxy = scatter[:, :-1, :-1], scatter[:, :-1, -1]
        spread = np.einsum("gii->gi", sxx)
        live = spread > FLAT_TOL * n[:, None]
        inv_sd = np.where(live, 1.0 / np.sqrt(np.where(live, spread, 1.0)), 0.0)
        corr = sxx * inv_sd[:, :, None] * inv_sd[:, None, :]
        lam, vec = np.linalg.eigh(corr)
        proj = np.einsum("gij,gi->gj", vec, sxy * inv_sd)
        keep = lam > EIG_TOL
        rss -= np.where(keep, proj**2 / np.where(keep, lam, 1.0), 0.0).sum(axis=1)
        rank = keep.sum(axis=1)
    return n, np.maximum(rss, 0.0), rank


@dataclass(frozen=True)
class NestedGaussianLR:
    """The likelihood ratio of two nested Gaussian regressions of one continuous child (:func:`nested_gaussian_lr`):
    ``half_g`` = ℓ₁ − ℓ₀ ≥ 0, ``df`` the parameters the larger model adds, and the rows of the cells that carry
    information — ``null_counts`` in the smaller model (``null_slopes`` regressors each: the rank of the cell's fit),
    ``full_counts`` in the larger (``full_slopes``) — from which :meth:`null_mean` gives E[G] under the smaller
    model."""

    half_g: float
    df: float
    null_counts: np.ndarray
    full_counts: np.ndarray
    null_slopes: np.ndarray
    full_slopes: np.ndarray

    def null_mean(self) -> float:
        """E[G] = D(null cells, k₀) − D(full cells, k₁), D = :func:`~bnilp.scores.base.residual_deviance_mean`."""
        return (residual_deviance_mean(self.null_counts, self.null_slopes)
                - residual_deviance_mean(self.full_counts, self.full_slopes))


def nested_gaussian_lr(y: np.ndarray, given: Sequence[np.ndarray], cells: np.ndarray, *,
                       x_values: np.ndarray | None = None, x_codes: np.ndarray | None = None) -> NestedGaussianLR:
    """Likelihood-ratio statistic for y ⟂ x | Z with y continuous, Z = the discrete variables that cut the rows into
    ``cells`` (numbered 0..P − 1) and the k continuous columns ``given``; x continuous (``x_values``) or discrete
    (``x_codes``). Both models are Gaussian regressions of y with intercept, MLE variance, per cell; G/2 =
    Σ_p [n_p·ln(σ̂²_0p + f) − Σ_{g ⊆ p} n_g·ln(σ̂²_g + f)] / 2 with f = ``FLAT_TOL`` (y standardised).

    Here k = k_p is the rank of cell p's regression on Z's continuous columns: their number, less one for each
    column constant in the cell or collinear with the others there (which give the fits no slope, so G is the same
    with or without them, and so are df and E[G]).

    * x continuous: each cell p with n_p ≥ k + 3 rows (a residual left in the larger model) compares the
      regression on Z's columns with the one on Z's columns and x: one parameter more.
    * x discrete: the larger model splits p by x's states; a sub-cell with n_s ≥ k + 2 rows (a residual left) gets
      a regression of its own, the rows of the smaller sub-cells share one — their own group if they are k + 2 or
      more, else they join p's largest sub-cell of its own; (k + 2)·(groups − 1) parameters more.

    A cell with one group (or too few rows) carries no information: it adds nothing to G or to df. The larger
    model contains the smaller (every group with the same intercept, slopes and variance), so G ≥ 0 for every
    data set: each group's least RSS sums to at most the common fit's, and ln(σ² + f) is concave and increasing,
    Σ_g n_g·ln(σ̂²_g + f) ≤ n_p·ln(Σ_g RSS_g/n_p + f) ≤ n_p·ln(σ̂²_0p + f) (a cell's value below 0 is rounding and
    taken as 0). This is the test ``shared/docs/tetrad-notes.md`` asks for: no small cell switches to another
    rule between the two models (the score's set function, whose small-cell rule is decided per variable set,
    can give a negative statistic: :class:`ConditionalGaussian`). Where no cell is small (every sub-cell, or
    cell, with a residual) it is the score's own ℓ(y | x ∪ Z) − ℓ(y | Z) (eqs. 3, 4, 12, 13), up to rounding."""
    if (x_values is None) == (x_codes is None):
        raise ValueError("nested_gaussian_lr takes exactly one of x_values and x_codes")
    n_cells = int(cells.max()) + 1 if cells.size else 0
    # E[G] (:meth:`NestedGaussianLR.null_mean`) takes each fit's own rank: a continuous Z constant in a cell, or
    # collinear with another, gives the fit no slope (G unchanged) and its residual one df more; the nominal k made
    # E[G]/df 3.07 where it is 1.93 (a review: Z constant within the discrete Z's cells; size 0.000 at α = 0.05)
    n0, rss0, rank0 = group_rss(y, given, cells, n_cells)
    if x_values is not None:
        n1, rss1, _ = group_rss(y, (*given, x_values), cells, n_cells)
        rss1 = np.minimum(rss1, rss0)                   # the larger model's least RSS is never above; rounding
        live = n0 >= rank0 + 3
        half = 0.5 * n0 * (_log_variance(n0, rss0) - _log_variance(n1, rss1))
        return NestedGaussianLR(float(np.maximum(half[live], 0.0).sum()), float(live.sum()), n0[live], n0[live],
                                rank0[live], rank0[live] + 1)
    groups, cell_of_group, n_groups = _split_by_states(cells, n_cells, x_codes, rank0 + 2)
    ng, rss, rank = group_rss(y, given, groups, n_groups)
    per_cell = np.bincount(cell_of_group, minlength=n_cells)
    live = per_cell >= 2
    full = np.bincount(cell_of_group, weights=ng * _log_variance(ng, rss), minlength=n_cells)
    half = 0.5 * (n0 * _log_variance(n0, rss0) - full)
    in_live = live[cell_of_group]
    return NestedGaussianLR(float(np.maximum(half[live], 0.0).sum()),
                            float(((rank0[live] + 2) * (per_cell[live] - 1)).sum()),
                            n0[live], ng[in_live], rank0[live], rank[in_live])


def _log_variance(rows: np.ndarray, rss: np.ndarray) -> np.ndarray:
    """ln(σ̂² + f) of each group, σ̂² = RSS/n the MLE variance and f = ``FLAT_TOL`` (concave in σ̂², finite at 0)."""
    return np.log(rss / np.maximum(rows, 1.0) + FLAT_TOL)


def _split_by_states(cells: np.ndarray, n_cells: int, codes: np.ndarray,
                     least: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The larger model's groups for a discrete x (:func:`nested_gaussian_lr`): (group of every row, cell of every
    group, number of groups). Each cell's sub-cells by x's state with at least ``least[cell]`` rows are groups; its
    other rows form one group if they are that many or more, else join its largest sub-cell (the first of equals);
    a cell without such a sub-cell is one group."""
    radix = int(codes.max()) + 1
    sub_key = cells.astype(np.int64) * radix + codes
    keys, sub = np.unique(sub_key, return_inverse=True)
    sub = sub.ravel()
    n_sub = np.bincount(sub, minlength=keys.size)
    sub_cell = (keys // radix).astype(np.int64)
    fits = n_sub >= least[sub_cell]
    rest = np.bincount(sub_cell[~fits], weights=n_sub[~fits], minlength=n_cells)
    n_fits = np.bincount(sub_cell[fits], minlength=n_cells)
    largest = np.full(n_cells, -1, dtype=np.int64)
    own = np.flatnonzero(fits)
    order = own[np.lexsort((own, -n_sub[own], sub_cell[own]))]      # by cell, most rows first, then the first
    first = np.ones(order.size, dtype=bool)
    first[1:] = sub_cell[order[1:]] != sub_cell[order[:-1]]
    largest[sub_cell[order[first]]] = order[first]
    cell_rest = sub_cell[~fits]
    target = np.arange(keys.size, dtype=np.int64)
    pooled = (rest[cell_rest] >= least[cell_rest]) | (n_fits[cell_rest] == 0)
    target[~fits] = np.where(pooled, keys.size + cell_rest, largest[cell_rest])
    labels, groups = np.unique(target[sub], return_inverse=True)
    cell_of_group = np.where(labels < keys.size, sub_cell[np.minimum(labels, keys.size - 1)], labels - keys.size)
    return groups.ravel(), cell_of_group.astype(np.int64), labels.size


def set_values(score: ConditionalGaussian, masks: Sequence[int]) -> list[tuple[float, float]]:
    """A task of the set table (:func:`bnilp.lattice.build_set_table`): (ℓ(S), df(S)) of each set S given as
    a bit mask (bit j: variable j), computed as :meth:`ConditionalGaussian.set_loglik_df` computes it — the
    same floats on any process — and not cached (the table keeps them)."""
    return [score._set_value(frozenset(j for j in range(score.data.n) if m >> j & 1)) for m in masks]


class ConditionalGaussian(LocalScore):
    """CG score (Andrews, Ramsey & Cooper §3); see the module docstring for formulas and rules."""

    name = "cg"

    def __init__(self, data: Dataset, *, prior: StructurePrior | None = None,
                 penalty_discount: float = DEFAULT_PENALTY_DISCOUNT):
        super().__init__(data, prior=prior, penalty_discount=penalty_discount)
        self.N = data.N
        if self.N < 2:
            raise InputError(f"{data.source}: score {self.name!r} needs at least 2 rows")
        self.discrete = [data.is_discrete(j) for j in range(data.n)]
        self.codes = [np.ascontiguousarray(data.codes[:, j]) for j in range(data.n)]
        self.arities = list(data.arities)
        # continuous columns standardised (population SD); ℓ is corrected back to the raw scale
        self.zt = np.zeros((data.n, self.N))       # one contiguous row per column (a cell's sums read columns)
        self.log_sd = np.zeros(data.n)
        self.z_offset = np.zeros(data.n)           # the column's mean in its own SDs: z + offset = raw / SD
        for j in range(data.n):
            if not self.discrete[j]:
                col = data.values[:, j].astype(float)
                sd = float(col.std())
                sd = sd if sd > 0 else 1.0
                self.zt[j] = (col - col.mean()) / sd
                self.log_sd[j] = math.log(sd)
                self.z_offset[j] = col.mean() / sd
        self._sets: dict[frozenset[int], tuple[float, float]] = {}
        self._table: dict[frozenset[int], tuple[float, float]] = {}
        self.partition = PartitionCache(self.codes, self.arities, self.N)

    def __getstate__(self) -> dict[str, Any]:
        """For the worker processes: the set table travels, the caches (partitions of N rows each) do not."""
        state = self.__dict__.copy()
        state["_sets"] = {}
        state["partition"] = PartitionCache(self.codes, self.arities, self.N)
        return state

    def uses_set_function(self, child: int) -> bool:
        """Whether ``child``'s families are differences of :meth:`set_loglik_df` (every child of CG)."""
        return True

    def holds_set(self, variables: frozenset[int]) -> bool:
        """Whether ℓ of the set is at hand (the set table or the cache) — nothing to compute."""
        return variables in self._table or variables in self._sets

    def add_set_table(self, table: Mapping[frozenset[int], tuple[float, float]]) -> None:
        """Sets computed ahead (:func:`set_values`, on any process: the same floats), looked up before the
        cache and never evicted; :func:`bnilp.lattice.build_set_table` fills it for a walk."""
        self._table.update(table)

    def set_loglik_df(self, variables: frozenset[int]) -> tuple[float, float]:
        """(ℓ(S), df(S)) of a variable set: from the set table, else computed and cached by the set."""
        hit = self._table.get(variables)
        if hit is None:
            hit = self._sets.get(variables)
        if hit is not None:
            return hit
        result = self._set_value(variables)
        if len(self._sets) >= _SET_CACHE:
            self._sets.clear()
        self._sets[variables] = result
        return result

    def _set_value(self, variables: frozenset[int]) -> tuple[float, float]:
        """(ℓ(S), df(S)) computed (module docstring, eqs. 8–11)."""
        disc = tuple(sorted(j for j in variables if self.discrete[j]))
        cont = sorted(j for j in variables if not self.discrete[j])
        k = len(cont)
        q = float(math.prod(self.arities[j] for j in disc))
        df = q * (k + k * (k + 1) / 2 + 1) - 1
        part = self.partition(disc)
        counts = part.counts.astype(float)
        ll = float(xlogy(counts, counts / self.N).sum())
        if k:
            ll += self._gaussian_part(part, cont)
        return ll, df

    def _scatter(self, part: Partition, cont: list[int]) -> np.ndarray:
        """Each cell's scatter matrix Σ_{rows of p} (x − x̄_p)(x − x̄_p)ᵀ of the standardised columns ``cont``
        (cells × k × k): the cell means first (:func:`cell_means`), then the centred products (two passes, so
        cells far from the column's mean lose no digits). Per-cell sums of the k(k+1)/2 products by ``np.bincount``
        over the rows' cells (no sorting of the rows, no N × k² array), a single cell too: a matrix product there
        summed in an order that follows the BLAS library's threads, and a score file of continuous columns differed
        between a worker process (one thread) and the coordinator (a review's find).

        An entry (a, b) depends on the partition and on columns a and b only, not on the other columns of the
        set, so the cell means and products are kept on the partition (:class:`Partition`) and every set with
        the same discrete variables reads them: each pair of continuous columns is summed once per partition,
        not once per set — the same sums in the same order, so the same floats as summing per set."""
        k, n, inv = len(cont), part.counts, part.inverse
        cells = n.size
        missing = [(a, b) for a in range(k) for b in range(a, k) if (cont[a], cont[b]) not in part.products]
        if missing:
            added = 0
            xc: dict[int, np.ndarray] = {}
            for a in {a for pair in missing for a in pair}:
                j = cont[a]
                mean = part.means.get(j)
                if mean is None:
                    mean = part.means[j] = cell_means(self.zt[j], inv, n)
                    added += mean.nbytes
                xc[a] = self.zt[j] - mean[inv]
            for a, b in missing:
                part.products[cont[a], cont[b]] = np.bincount(inv, weights=xc[a] * xc[b], minlength=cells)
            self.partition.grew(part, added + len(missing) * cells * 8)
        scatter = np.empty((cells, k, k))
        for a in range(k):
            for b in range(a, k):
                scatter[:, a, b] = scatter[:, b, a] = part.products[cont[a], cont[b]]
        return scatter

    def _ranges(self, part: Partition, cont: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The least and greatest standardised value of each column of ``cont`` in each cell (cells × k each), kept
        on the partition as its sums are (:meth:`_scatter`)."""
        cells = part.counts.size
        for j in cont:
            if j not in part.ranges:
                low, high = np.full(cells, np.inf), np.full(cells, -np.inf)
                np.minimum.at(low, part.inverse, self.zt[j])
                np.maximum.at(high, part.inverse, self.zt[j])
                part.ranges[j] = (low, high)
                self.partition.grew(part, low.nbytes + high.nbytes)
        return (np.stack([part.ranges[j][0] for j in cont], axis=1),
                np.stack([part.ranges[j][1] for j in cont], axis=1))

    def _gaussian_part(self, part: Partition, cont: list[int]) -> float:
        """Σ_p −n_p/2·(ln|Σ̃_p| + …) on the raw scale, with the small-cell rule."""
        k = len(cont)
        n = part.counts
        scatter = self._scatter(part, cont)
        cov = scatter / n[:, None, None]
        var = np.einsum("pii->pi", cov)
        low, high = self._ranges(part, cont)
        flat = flat_columns(low, high, self.z_offset[cont]).any(axis=1)     # a column constant inside the cell
        scale = 1.0 / np.sqrt(np.where(flat[:, None], 1.0, var))
        eig = np.linalg.eigvalsh(cov * scale[:, :, None] * scale[:, None, :])   # of the cell's correlations
        small = (n <= k) | flat | (eig[:, 0] <= EIG_TOL)
        nf = n.astype(float)
        total = -0.5 * k * (_LN2PI + 1.0) * float(nf[~small].sum())
        if (~small).any():                              # ln|Σ̂_p| = ln|R_p| + Σ ln σ̂²_pj
            log_det = np.log(eig[~small]).sum(axis=1) + np.log(var[~small]).sum(axis=1)
            total -= 0.5 * float((nf[~small] * log_det).sum())
        if small.any():
            w_eig, w_vec = np.linalg.eigh(scatter.sum(axis=0) / self.N)
            w_eig = np.maximum(w_eig, pooled_floor(self.N))
            w_inv = (w_vec / w_eig) @ w_vec.T
            traces = np.einsum("ij,pji->p", w_inv, cov[small])
            total -= 0.5 * float((nf[small] * (np.log(w_eig).sum() + traces + k * _LN2PI)).sum())
        return total - self.N * float(self.log_sd[cont].sum())

    # -- LocalScore -----------------------------------------------------------------------------

    def loglik_df(self, child: int, parents: tuple[int, ...]) -> tuple[float, float]:
        """ℓ(Y | Pa) = ℓ({Y} ∪ Pa) − ℓ(Pa) and df(Y | Pa) = df({Y} ∪ Pa) − df(Pa)."""
        pa = frozenset(parents)
        ll1, df1 = self.set_loglik_df(pa | {child})
        ll0, df0 = self.set_loglik_df(pa)
        return ll1 - ll0, df1 - df0

    def raw(self, child: int, parents: tuple[int, ...]) -> float:
        return self.penalised(*self.loglik_df(child, parents))

    def lr_difference(self, child: int, parent: int, given: tuple[int, ...]) -> tuple[float, float]:
        """Half the LR statistic and its df for ``child`` ⟂ ``parent`` | ``given``: where a tested variable is
        continuous, that one's nested Gaussian regressions (:func:`nested_gaussian_lr`; G is symmetric in the
        two tested variables, eqs. 3–4, 12–13, so the continuous one stands for the pair), which are never
        negative whatever the small cells; both discrete: the set function's ℓ/df (with continuous ``given``
        the paper's single-Gaussian mixture, which can be negative — module docstring)."""
        nested = self._nested_lr(child, parent, given)
        if nested is None:
            return super().lr_difference(child, parent, given)
        return nested.half_g, nested.df

    def _nested_lr(self, child: int, parent: int, given: tuple[int, ...]) -> NestedGaussianLR | None:
        """:func:`nested_gaussian_lr` with the continuous tested variable as y (``child`` where both are); None
        where both are discrete."""
        if self.discrete[child] and self.discrete[parent]:
            return None
        y, x = (parent, child) if self.discrete[child] else (child, parent)
        cells = self.partition(tuple(sorted(j for j in given if self.discrete[j]))).inverse
        cont = [self.zt[j] for j in sorted(given) if not self.discrete[j]]
        if self.discrete[x]:
            return nested_gaussian_lr(self.zt[y], cont, cells, x_codes=self.codes[x])
        return nested_gaussian_lr(self.zt[y], cont, cells, x_values=self.zt[x])

    def lr_null_mean(self, child: int, parent: int, given: tuple[int, ...]) -> tuple[float, float] | None:
        """Null mean of the statistic of :meth:`lr_difference` when a tested variable is continuous (``None`` when
        both are discrete: then G is the multinomial G², or, with continuous Z, a Gaussian-mixture term that is
        exact only under CG's own model).

        Under y ⟂ x | Z in CG's model the groups of the larger model (:func:`nested_gaussian_lr`) share the
        variance of their cell, so each group's n·σ̂²/σ² is χ² with its residual df and
        E[G] = D(cells, k) − D(groups, k') with D = :func:`~bnilp.scores.base.residual_deviance_mean` over the
        cells that carry information (k' = k for a discrete x, k + 1 for a continuous one); k its df. (0, 0) when
        no cell carries information (no residual left in the larger model: G = 0 says nothing, p = 1)."""
        nested = self._nested_lr(child, parent, given)
        if nested is None:
            return None
        if nested.df == 0:
            return 0.0, 0.0
        mean = nested.null_mean()
        return (mean, nested.df) if mean > 0 else None

    def settings(self) -> dict[str, Any]:
        out = super().settings()
        out.update({
            "covariance": "MLE (divide by n_p)",
            "df_per_cell": "k + k(k+1)/2 + 1 (means counted), minus 1 per set",
            "cells_counted_in_df": "all combinations of the discrete variables, observed or not",
            "discrete_child": "single Gaussian per discrete-parent cell in the denominator (paper)",
            "small_partitions": f"cells with n_p <= k, a column constant in the cell (a range of at most {FLAT_ULPS} "
                                f"ulps of its values) or min eigenvalue of the cell's correlations <= {EIG_TOL:g} "
                                "use "
                                "the pooled within-cell covariance in the Gaussian likelihood, its eigenvalues "
                                "floored at 1/N (standardised)",
            "pruning": "R1 only",
        })
        return out


class ConditionalGaussianDiscretized(ConditionalGaussian):
    """CGd (§5.2): a discrete child's continuous parents are replaced by equal-frequency bins."""

    name = "cgd"

    def __init__(self, data: Dataset, *, bins: int = DEFAULT_BINS, prior: StructurePrior | None = None,
                 penalty_discount: float = DEFAULT_PENALTY_DISCOUNT):
        bins = check_count(bins, "bins (--bins)", 2)
        if bins > data.N and not all(data.is_discrete(j) for j in range(data.n)):
            # ⌊N/b⌋ = 0: every cut the column's least value, one bin, so a discrete child's continuous parents change
            # nothing — scored as silently as a real one (a review)
            raise InputError(f"bins (--bins) must be at most the rows, N = {data.N}, got {bins}: with more bins than "
                             "rows every cut of the equal-frequency rule is the column's least value (one bin)")
        super().__init__(data, prior=prior, penalty_discount=penalty_discount)
        self.bins = bins
        self.binned: dict[int, np.ndarray] = {}
        self.bin_arity: dict[int, int] = {}
        self._view: BIC | None = None
        for j in range(data.n):
            if not self.discrete[j]:
                self.binned[j] = equal_frequency_bins(data.values[:, j], self.bins)
                self.bin_arity[j] = int(self.binned[j].max()) + 1

    def constructor_settings(self) -> dict[str, Any]:
        return {**super().constructor_settings(), "bins": self.bins}

    def __getstate__(self) -> dict[str, Any]:
        return {**super().__getstate__(), "_view": None}    # a process that needs it makes its own

    def uses_set_function(self, child: int) -> bool:
        """Only a continuous child's families are CG's set differences (a discrete one's are multinomial)."""
        return not self.discrete[child]

    def discrete_view(self) -> BIC:
        """:meth:`discrete_child_score`, made once: every discrete child's family is scored by it."""
        if self._view is None:
            self._view = self.discrete_child_score()
        return self._view

    def walk_score(self, child: int) -> LocalScore:
        """A discrete child walks on :meth:`discrete_view` (counts compiled, BIC's rules R2–R4 sound: the same
        values, since this score takes them from it), a continuous one on CGd itself."""
        return self.discrete_view() if self.discrete[child] else self

    def raw(self, child: int, parents: tuple[int, ...]) -> float:
        if self.discrete[child]:
            return self.discrete_view().raw(child, parents)
        return super().raw(child, parents)

    def lr_difference(self, child: int, parent: int, given: tuple[int, ...]) -> tuple[float, float]:
        """CG's nested regressions for a continuous child; for a discrete child the multinomial on its binned
        parents (CGd is not score-equivalent, so the continuous variable cannot stand in for it)."""
        if self.discrete[child]:
            return LocalScore.lr_difference(self, child, parent, given)
        return super().lr_difference(child, parent, given)

    def lr_null_mean(self, child: int, parent: int, given: tuple[int, ...]) -> tuple[float, float] | None:
        """CG's null mean for a continuous child; ``None`` for a discrete child (multinomial on bins, and
        CGd is not score-equivalent, so the continuous variable cannot stand in for it)."""
        if self.discrete[child]:
            return None
        return super().lr_null_mean(child, parent, given)

    def loglik_df(self, child: int, parents: tuple[int, ...]) -> tuple[float, float]:
        """CG for a continuous child; for a discrete one the multinomial (LL, q·(r − 1)) on its binned parents,
        LL = Σ_jk n_jk·ln(n_jk/n_j), as BIC on the binned data (:meth:`discrete_view`) counts it."""
        if not self.discrete[child]:
            return super().loglik_df(child, parents)
        return self.discrete_view().loglik_df(child, parents)

    def binned_dataset(self) -> Dataset:
        """The data with every continuous column replaced by its discretised copy (all discrete)."""
        data = self.data
        codes = data.codes.copy()
        arities = list(data.arities)
        levels = [list(lv) for lv in data.levels]
        for j, col in self.binned.items():
            codes[:, j] = col
            arities[j] = self.bin_arity[j]
            levels[j] = [f"bin{b}" for b in range(self.bin_arity[j])]
        return Dataset(names=list(data.names), kinds=["discrete"] * data.n, codes=codes,
                       values=np.full(codes.shape, np.nan), arities=arities, levels=levels,
                       source=f"{data.source} (binned, b={self.bins})")

    def discrete_child_score(self) -> BIC:
        """A BIC on :meth:`binned_dataset` with the same prior and penalty discount.

        For every *discrete* child and every parent set it gives exactly this score's ``raw`` and
        ``local``, so a parent-set walk may use it (and BIC's superset rules R2–R4) for discrete
        children; continuous children must still be scored by CGd itself.
        """
        return BIC(self.binned_dataset(), prior=self.prior, penalty_discount=self.penalty_discount)

    def settings(self) -> dict[str, Any]:
        out = super().settings()
        out.update({
            "bins": self.bins,
            "discretization": "equal frequency over the whole column, cuts sorted[floor(N/b)*(i+1)], "
                              "ties to the upper bin, empty bins dropped",
            "discrete_child": "multinomial BIC with continuous parents replaced by their binned copies",
            "pruning": "R1 for continuous children; discrete children walk on BIC of the binned data: its rules "
                       "(R1-R4, R3 where every other column has two states or more; R1 alone with a structure "
                       "prior), see rules_applied",
        })
        return out
