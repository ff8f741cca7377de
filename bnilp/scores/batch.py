"""Batched contingency counts for discrete families: many families of one child in a few NumPy passes.

The lattice walk (:mod:`bnilp.parentsets`) extends each parent set Π of its frontier by every
candidate column j. All those families Π ∪ {j} share Π's *partition* of the rows, so Π's
configuration codes are built once per block (k multiply-adds over the distinct rows, re-coded
densely when the radix outgrows the rows) and each family's cell key is one refinement of that
partition by the new column and the child:

    key(row) = off_f + (code_Π(row)·r_j + x_j(row))·r_i + x_i(row)

One ``np.bincount`` over the stacked keys of a sub-chunk of families (or one sort when the dense
tables would be sparse) gives every n_ijk of every family; per-family sums (LL, N·H(Π), q⁺, the
number c⁺ of non-empty cells, BDeu's lnΓ terms) are segment sums over the non-empty cells only.
Work per family is O(rows) in NumPy, with no Python per family; memory is bounded by
:data:`BLOCK_ELEMENTS` 64-bit words per array, whatever N.

Counts are integers (exact in float64) and every per-family sum adds its own cells in a fixed
order, so a family's statistics do not depend on which other families share its block: results are
the same whatever the block size or the parallelism. The values can differ from the one-family code
of :mod:`bnilp.scores.discrete` in the last bits (another summation order); the walk uses them for
its decisions only and writes the one-family value of every kept set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

#: elements (rows × families) per array in one counting pass: 4 Mi int64 words = 32 MiB
BLOCK_ELEMENTS = 1 << 22
#: a family whose dense table (q⁺_Π·r_j·r_i cells) exceeds this many times the rows is counted by sorting
DENSE_FACTOR = 8


@dataclass
class CountContext:
    """The data of a discrete score in the layout the batched counts need (built once per process)."""

    columns: np.ndarray        # (n, rows) int64, column-major: columns[j] is column j on the distinct rows
    weights: np.ndarray | None  # multiplicity of each distinct row (None: every row once)
    arities: np.ndarray        # (n,) int64
    N: int

    @property
    def n_rows(self) -> int:
        return int(self.columns.shape[1])

    @classmethod
    def from_score(cls, score) -> CountContext:
        cols = np.ascontiguousarray(np.stack(score.columns).astype(np.int64)) if score.columns \
            else np.zeros((0, 0), dtype=np.int64)
        return cls(cols, score.weights, np.asarray(score.arities, dtype=np.int64), int(score.N))


def base_codes(ctx: CountContext, bases: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense configuration codes of parent sets ``bases`` (nb, k) on every distinct row.

    Returns (codes (nb, rows) int64, sizes (nb,) int64): codes are in 0..size−1 and preserve the
    lexicographic order of configurations (mixed radix, first parent most significant); whenever the
    radix product exceeds the number of rows they are re-coded densely by one sort (order kept).
    """
    nb, k = bases.shape
    codes = np.zeros((nb, ctx.n_rows), dtype=np.int64)
    sizes = np.ones(nb, dtype=np.int64)
    for t in range(k):
        col = bases[:, t]
        r = ctx.arities[col]
        codes *= r[:, None]
        codes += ctx.columns[col]
        sizes *= r
        if sizes.max() > max(ctx.n_rows, 1):
            codes, sizes = _recode(codes, sizes)
    return codes, sizes


def _recode(codes: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Re-code each row of ``codes`` to 0..(distinct − 1), keeping the order of the codes."""
    nb = codes.shape[0]
    stride = int(sizes.max())
    flat = codes + (np.arange(nb, dtype=np.int64) * stride)[:, None]
    _, inverse = np.unique(flat.ravel(), return_inverse=True)
    inverse = inverse.reshape(codes.shape).astype(np.int64)
    first = inverse.min(axis=1)
    inverse -= first[:, None]
    return inverse, inverse.max(axis=1) + 1


@dataclass
class FamilyCounts:
    """Per-family statistics of a batch: LL, N·H(Π), q⁺ (observed configurations), c⁺ (non-empty cells),
    and BDeu's score where asked."""

    ll: np.ndarray
    nh: np.ndarray
    q_plus: np.ndarray
    c_plus: np.ndarray
    bdeu: np.ndarray | None


def family_counts(ctx: CountContext, child: int, bases: np.ndarray, base_of: np.ndarray, new: np.ndarray,
                  q_all: np.ndarray, ess: float | None = None) -> FamilyCounts:
    """Statistics of the families ``bases[base_of[f]] ∪ {new[f]}`` of ``child`` (base_of sorted).

    ``q_all`` = q_Π of each family over all configurations (BDeu's α/q); with ``ess`` the BDeu
    score (without prior) is returned too.
    """
    nc = new.size
    out = FamilyCounts(np.zeros(nc), np.zeros(nc), np.zeros(nc, dtype=np.int64), np.zeros(nc, dtype=np.int64),
                       np.zeros(nc) if ess is not None else None)
    if nc == 0:
        return out
    rows = max(ctx.n_rows, 1)
    codes, sizes = base_codes(ctx, bases)
    r_c = int(ctx.arities[child])
    xc = ctx.columns[child]
    per = max(1, BLOCK_ELEMENTS // rows)
    for lo in range(0, nc, per):
        hi = min(nc, lo + per)
        _count_chunk(ctx, child, r_c, xc, codes, sizes, base_of[lo:hi], new[lo:hi], q_all[lo:hi], ess, out, lo)
    return out


def _count_chunk(ctx: CountContext, child: int, r_c: int, xc: np.ndarray, codes: np.ndarray, sizes: np.ndarray,
                 base_of: np.ndarray, new: np.ndarray, q_all: np.ndarray, ess: float | None, out: FamilyCounts,
                 lo: int) -> None:
    r_j = ctx.arities[new]
    span = sizes[base_of] * r_j * r_c                      # dense table size of each family
    dense = span <= DENSE_FACTOR * ctx.n_rows + 64
    for mask in (dense, ~dense):
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            continue
        fam_span = span[idx]
        off = np.zeros(idx.size + 1, dtype=np.int64)
        np.cumsum(fam_span, out=off[1:])
        keys = codes[base_of[idx]] * r_j[idx, None]
        keys += ctx.columns[new[idx]]
        keys *= r_c
        keys += xc
        keys += off[:-1, None]
        keys = keys.ravel()
        if mask is dense:
            if ctx.weights is None:
                table = np.bincount(keys, minlength=int(off[-1])).astype(np.float64)
            else:
                table = np.bincount(keys, weights=np.tile(ctx.weights, idx.size), minlength=int(off[-1]))
            cells = np.flatnonzero(table)
            counts = table[cells]
        else:
            order = np.argsort(keys, kind="stable")
            sorted_keys = keys[order]
            starts = np.concatenate(([0], np.flatnonzero(np.diff(sorted_keys)) + 1))
            cells = sorted_keys[starts]
            if ctx.weights is None:
                counts = np.diff(np.append(starts, sorted_keys.size)).astype(np.float64)
            else:
                counts = np.add.reduceat(np.tile(ctx.weights, idx.size)[order], starts)
        _cell_stats(cells, counts, off, r_c, idx, q_all, ess, ctx.N, out, lo)


def _cell_stats(cells: np.ndarray, counts: np.ndarray, off: np.ndarray, r_c: int, idx: np.ndarray,
                q_all: np.ndarray, ess: float | None, N: int, out: FamilyCounts, lo: int) -> None:
    """Segment sums over the non-empty cells (sorted keys) of the families ``idx`` of a chunk."""
    m = idx.size
    fam = np.searchsorted(off, cells, side="right") - 1
    rowkey = cells // r_c
    row_start = np.concatenate(([0], np.flatnonzero(np.diff(rowkey)) + 1))
    nij = np.add.reduceat(counts, row_start)
    fam_row = fam[row_start]
    xl_cells = counts * np.log(counts)
    xl_rows = nij * np.log(nij)
    s_cells = np.bincount(fam, weights=xl_cells, minlength=m)
    s_rows = np.bincount(fam_row, weights=xl_rows, minlength=m)
    at = lo + idx
    out.ll[at] = s_cells - s_rows
    out.nh[at] = float(N * math.log(N)) - s_rows if N > 0 else 0.0
    q_plus = np.bincount(fam_row, minlength=m)
    c_plus = np.bincount(fam, minlength=m)
    out.q_plus[at] = q_plus
    out.c_plus[at] = c_plus
    if out.bdeu is not None:
        a_j = ess / q_all[idx]
        a_jk = a_j / r_c
        out.bdeu[at] = _gamma_ratio_sum(cells, counts, fam, a_jk, m) - _gamma_ratio_sum(row_start, nij, fam_row, a_j, m)


def _gamma_ratio_sum(items: np.ndarray, n: np.ndarray, fam: np.ndarray, a: np.ndarray, m: int) -> np.ndarray:
    """Σ over the items of each family of lnΓ(a_f + n) − lnΓ(a_f): ln a_f for the (many) items with n = 1
    (Γ(a + 1) = a·Γ(a)), lnΓ only for the others."""
    single = n == 1
    out = np.bincount(fam[single], minlength=m) * np.log(a)
    many = ~single
    fam_many = fam[many]
    out += np.bincount(fam_many, weights=gammaln(a[fam_many] + n[many]), minlength=m)
    out -= np.bincount(fam_many, minlength=m) * gammaln(a)
    return out
