"""Counts per *variable subset*, shared by every family that uses the subset (discrete BIC and BDeu).

A family (child i, parents Π) is two subsets, T₁ = Π and T₂ = Π ∪ {i}, and every statistic the lattice
walk needs is a difference of per-subset sums (n_c = rows in cell c of T's configurations):

    E(T) = Σ_c n_c ln n_c,                     LL(i | Π) = E(T₂) − E(T₁),   N·H(Π) = N ln N − E(T₁)
    K(T) = number of observed cells,           q⁺_Π = K(T₁),                c⁺ = K(T₂)
    G(T) = Σ_c [lnΓ(α/Q_T + n_c) − lnΓ(α/Q_T)],  BDeu(i | Π) = G(T₂) − G(T₁)

with Q_T = ∏_{v∈T} r_v (all configurations, observed or not). The BDeu identity is Heckerman, Geiger &
Chickering (1995, eq. 28) with α_j = α/q_Π = α/Q_{T₁} and α_jk = α_j/r_i = α/Q_{T₂}: its two sums are
G(T₂) and G(T₁), term by term. So one count of T serves up to |T| + (n − |T|) families — as a family of
each of its members and as the parent set of every other variable — where the walk counts each family
over the data on its own. This is the subset-score route of exact structure learning by dynamic
programming (Silander & Myllymäki 2006, §4), here a cache under the pruned walk.

:func:`subset_table` counts every subset T with |T| ≤ ``max_size`` and Q_T ≤ ``q_max`` by a depth-first
walk in lexicographic order: the partition of the distinct rows by T is its prefix's partition refined by
T's last column (one pass over the rows, cells numbered by first appearance), so a subset costs one pass
whatever its size. Supersets of a subset past ``q_max`` are never visited (Q grows along the walk).
The table is sorted by bit mask and looked up through an open-addressing hash of the masks (one probe per
subset), so its size is the number of subsets counted, not 2^n.
:func:`subset_plan` derives ``q_max`` from BIC's penalty rule R2 so that every family the walk can ask for
is in the table. Each subset's sums run over its own cells in the order of their first rows, so a value
does not depend on which task of a parallel build computed it: tables are the same for any split.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from bnilp.compiled import njit
from bnilp.scores.batch import LOG_RISING_TABLE, log_rising, mask_hash_index, mask_probe

#: subsets are keyed by their bit mask (int64): n at most this
SUBSET_TABLE_MAX_VARIABLES = 63
#: at most this many subsets are counted (32 bytes each; else the walk counts its families one by one)
SUBSET_TABLE_MAX_SUBSETS = 1 << 22
#: the depth-first walk holds one partition of the distinct rows (int32) per depth: at most this many bytes
SUBSET_TABLE_MAX_PARTITION_BYTES = 1 << 30
#: refinement slot table (distinct rows × largest arity entries, 8 bytes each) at most this many entries
SUBSET_TABLE_MAX_SLOTS = 1 << 26
#: the modes of ``counts`` (:func:`bnilp.parentsets.score_parent_sets`, ``--counts``): ``subsets`` where
#: the table applies (else an error), ``families`` the walk's own counts, ``auto`` the table where it applies
COUNT_MODES = ("auto", "subsets", "families")


@dataclass
class SubsetTable:
    """E, G (BDeu's sum, zeros without ``ess``) and K of the counted subsets, by bit mask (sorted)."""

    masks: np.ndarray
    e: np.ndarray
    g: np.ndarray
    k: np.ndarray
    n_log_n: float
    seconds: float = 0.0

    _index: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def counted(self) -> int:
        return int(self.masks.size)

    def __getstate__(self) -> dict:
        """Pickled without its hash index (rebuilt on a worker's first look-up: cheaper than sending it)."""
        return {**self.__dict__, "_index": None}

    def family_rows(self, bases: np.ndarray, base_of: np.ndarray, new: np.ndarray,
                    child: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Rows of T₁ = bases[base_of[f]] ∪ {new[f]} and T₂ = T₁ ∪ {child} for every family f (one hash
        probe each, :func:`bnilp.scores.batch.mask_probe`); None if one is not counted."""
        if self._index is None:
            self._index = mask_hash_index(self.masks)
        keys, slots, bits = self._index
        r1, r2, ok = _family_rows(keys, slots, bits, bases, base_of, new, child)
        return (r1, r2) if ok else None

    def family_stats(self, r1: np.ndarray, r2: np.ndarray) -> tuple[np.ndarray, ...]:
        """(LL, N·H(T₁), q⁺, c⁺, BDeu) of the families whose subsets are at rows ``r1``, ``r2``."""
        e1 = self.e[r1]
        return self.e[r2] - e1, self.n_log_n - e1, self.k[r1], self.k[r2], self.g[r2] - self.g[r1]


@njit(cache=True, nogil=True)
def _family_rows(keys, slots, bits, bases, base_of, new, child):
    """Table rows of each family's T₁ = bases[base_of[f]] ∪ {new[f]} and T₂ = T₁ ∪ {child} (by bit mask);
    stops with False at the first subset not in the table."""
    m, k = bases.shape[0], bases.shape[1]
    base_mask = np.zeros(m, dtype=np.uint64)
    for b in range(m):
        for t in range(k):
            base_mask[b] |= np.uint64(1) << np.uint64(bases[b, t])
    r1 = np.empty(new.size, dtype=np.int64)
    r2 = np.empty(new.size, dtype=np.int64)
    child_bit = np.uint64(1) << np.uint64(child)
    for f in range(new.size):
        t1 = base_mask[base_of[f]] | (np.uint64(1) << np.uint64(new[f]))
        r1[f] = mask_probe(keys, slots, bits, t1)
        r2[f] = mask_probe(keys, slots, bits, t1 | child_bit)
        if r1[f] < 0 or r2[f] < 0:
            return r1, r2, False
    return r1, r2, True


@njit(cache=True, nogil=True)
def _refine(code, col, r, weights, slot, seen, cnt, out, write):
    """Cells of (code, col) numbered by first row (into ``out`` when ``write``), their weighted counts in
    ``cnt[:m]``; returns m. ``slot`` is left empty (−1)."""
    m = 0
    for row in range(code.size):
        key = np.int64(code[row]) * r + col[row]
        s = slot[key]
        if s < 0:
            s = m
            slot[key] = m
            seen[m] = key
            cnt[m] = 0.0
            m += 1
        cnt[s] += weights[row]
        if write:
            out[row] = s
    for s in range(m):
        slot[seen[s]] = -1
    return m


@njit(cache=True, nogil=True)
def _sums(cnt, m, q, ess, with_bdeu, xlogx, rise, state):
    """E = Σ n ln n and G = Σ [ln Γ(α/Q + n) − ln Γ(α/Q)] over the ``m`` cells in ``cnt``; G's terms from the
    rising table ``rise`` (:func:`bnilp.scores.batch.log_rising`; ``state`` = [its a, how far it is
    filled], kept while subsets share Q)."""
    e = 0.0
    g = 0.0
    a = ess / q
    filled = np.int64(state[1])
    if with_bdeu and a != state[0]:
        state[0] = a
        filled = 0
    for s in range(m):
        c = cnt[s]
        i = int(c)
        e += xlogx[i] if i < xlogx.size else c * math.log(c)
        if with_bdeu:
            t, filled = log_rising(c, a, rise, filled)
            g += t
    state[1] = filled
    return e, g


@njit(cache=True, nogil=True)
def _subtree(columns, weights, arities, prefix, max_size, q_max, ess, with_bdeu, xlogx,
             out_mask, out_e, out_g, out_k, write, limit):
    """Count ``prefix`` and every subset extending it by larger indices (size ≤ max_size, Q ≤ q_max),
    depth first; results in the out arrays (sized by a first pass with ``write`` false, which only
    visits the subsets, on zero rows); returns how many (stops past ``limit``)."""
    n, rows = columns.shape[0], columns.shape[1]
    p = prefix.size
    max_r = 1
    for v in range(n):
        max_r = max(max_r, arities[v])
    slot = np.full(max(rows, 1) * max_r, -1, dtype=np.int64)
    seen = np.empty(max(rows, 1) * max_r, dtype=np.int64)
    cnt = np.zeros(max(rows, 1) * max_r)
    depth = max(max_size, p) + 1
    codes = np.zeros((depth, rows), dtype=np.int32)
    nxt = np.zeros(depth + 1, dtype=np.int64)
    q = np.ones(depth + 1)
    mask = np.zeros(depth + 1, dtype=np.int64)
    rise = np.zeros(LOG_RISING_TABLE + 1)
    state = np.array([-1.0, 0.0])
    # the prefix's partition, one column at a time
    m = 1
    if rows:
        cnt[0] = 0.0
        for row in range(rows):
            cnt[0] += weights[row]
    for t in range(p):
        v = prefix[t]
        m = _refine(codes[t], columns[v], arities[v], weights, slot, seen, cnt, codes[t + 1], True)
        q[t + 1] = q[t] * arities[v]
        mask[t + 1] = mask[t] | (np.int64(1) << v)
    if q[p] > q_max:
        return 0
    if write:
        e, g = _sums(cnt, m if rows else 0, q[p], ess, with_bdeu, xlogx, rise, state)
        out_mask[0], out_e[0], out_g[0], out_k[0] = mask[p], e, g, m if rows else 0
    done = 1
    if p >= max_size:
        return done
    d = p
    nxt[d] = prefix[p - 1] + 1 if p else 0
    while d >= p:
        j = nxt[d]
        if j >= n:
            d -= 1
            continue
        nxt[d] = j + 1
        qn = q[d] * arities[j]
        if qn > q_max:
            continue
        descend = d + 1 < max_size and j + 1 < n
        mk = mask[d] | (np.int64(1) << j)
        if write:
            mm = _refine(codes[d], columns[j], arities[j], weights, slot, seen, cnt, codes[d + 1], descend)
            e, g = _sums(cnt, mm, qn, ess, with_bdeu, xlogx, rise, state)
            out_mask[done], out_e[done], out_g[done], out_k[done] = mk, e, g, mm
        done += 1
        if done > limit:
            return done
        if descend:
            d += 1
            q[d] = qn
            mask[d] = mk
            nxt[d] = j + 1
    return done


def count_subsets(arities: np.ndarray, max_size: int, q_max: float, prefix: tuple[int, ...] = (),
                  limit: int = 1 << 62) -> int:
    """Number of subsets T ⊇ ``prefix`` (extended by larger indices) with |T| ≤ ``max_size``, Q_T ≤ ``q_max``
    (counting stops at the first past ``limit``)."""
    arities = np.asarray(arities, dtype=np.int64)
    none_f, none_i = np.empty(0), np.empty(0, dtype=np.int64)
    return int(_subtree(np.empty((arities.size, 0), dtype=np.int32), none_f, arities,
                        np.asarray(prefix, dtype=np.int64), int(max_size), float(q_max), 1.0, False,
                        none_f, none_i, none_f, none_f, none_i, False, int(limit)))


def count_subtree(ctx, prefix: tuple[int, ...], max_size: int, q_max: float,
                  ess: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(masks, E, G, K) of ``prefix`` and its extensions (:func:`_subtree`) on a :class:`CountContext`."""
    arities = np.asarray(ctx.arities, dtype=np.int64)
    pre = np.asarray(prefix, dtype=np.int64)
    size = count_subsets(arities, max_size, q_max, prefix)
    out = (np.empty(size, dtype=np.int64), np.empty(size), np.empty(size), np.empty(size, dtype=np.int64))
    done = _subtree(ctx.columns, ctx.weights, arities, pre, int(max_size), float(q_max),
                    float(ess if ess is not None else 1.0), ess is not None, ctx.xlogx, *out, True, 1 << 62)
    assert done == size
    return out


def split_prefixes(arities: np.ndarray, max_size: int, q_max: float, parts: int) -> list[tuple[int, ...]]:
    """Prefixes whose subtrees partition the subsets to count, none above 1/``parts`` of them (unless it is
    a single subset deep), largest first: the tasks of a parallel build. The prefixes' own ancestors
    (shorter prefixes that were split) are tasks of size one with ``max_size`` = their length."""
    total = count_subsets(arities, max_size, q_max)
    goal = max(1, total // max(1, parts))
    tasks: list[tuple[int, ...]] = []
    stack: list[tuple[int, ...]] = [()]
    n = len(arities)
    while stack:
        pre = stack.pop()
        size = count_subsets(arities, max_size, q_max, pre)
        if size == 0:
            continue
        if size <= goal or len(pre) >= max_size:
            tasks.append(pre)
            continue
        tasks.append(pre + (-1,))          # marker: this prefix alone
        start = pre[-1] + 1 if pre else 0
        stack.extend(pre + (j,) for j in range(start, n))
    return tasks


def subset_task(ctx, task: tuple[int, ...], max_size: int, q_max: float, ess: float | None):
    """One task of :func:`split_prefixes`: a prefix alone (ends in −1) or its whole subtree."""
    if task and task[-1] == -1:
        return count_subtree(ctx, task[:-1], len(task) - 1, q_max, ess)
    return count_subtree(ctx, task, max_size, q_max, ess)


def assemble(parts, n_log_n: float) -> SubsetTable:
    """The table from the tasks' (masks, E, G, K), sorted by mask."""
    masks, e, g, k = (np.concatenate([p[i] for p in parts]) for i in range(4))
    order = np.argsort(masks, kind="stable")
    return SubsetTable(masks[order], e[order], g[order], k[order], n_log_n)


def largest_size(arities: np.ndarray, q_max: float) -> int:
    """The largest |T| with Q_T ≤ ``q_max`` (the smallest arities first)."""
    q = np.cumprod(np.sort(np.asarray(arities, dtype=np.float64)))
    return int(np.searchsorted(q, q_max, side="right"))
