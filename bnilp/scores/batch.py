"""Batched contingency counts for discrete families: many families of one child in one compiled pass each.

The lattice walk (:mod:`bnilp.lattice`) extends each parent set Π = Π′ ∪ {l} (l its last parent) of
its frontier by every candidate column j. A block's bases come in lexicographic order, so the
partition of the rows by Π′ (its configurations numbered by first appearance, q⁺_Π′ of them) is
built one column at a time and shared by consecutive bases; each family Π ∪ {j} is then one pass
over the rows with the child's states counted in every cell of

    key(row) = (code_Π′(row)·r_l + x_l(row))·r_j + x_j(row),   n_ijk += weight(row), k = x_i(row)

Where these keys (q⁺_Π′·r_l·r_j) number at most :data:`DENSE_CELLS_PER_ROW` per row — the deep levels
of data with few states — the cell is the key itself ("dense": no slot look-up per row, Π's own
partition never built, and BIC's sums run over every key without a branch per cell). Otherwise Π's
partition is built (once per base, when a family first needs it) and the key is code_Π(row)·r_j +
x_j(row): dense again while q⁺_Π·r_j is small enough, else ``slot`` numbers the configurations of
Π ∪ {j} in the order their first row appears (O(rows) plus O(cells) per family), the slot table
indexed by the key itself while the keys number at most :data:`DIRECT_KEYS_PER_ROW` per row, else
hashed (many-valued columns), so scratch memory is O(rows) whatever q and the arities. A child of many
states (:data:`WIDE_CHILD_STATES`) is counted by its family's configuration per row and then by cell, each
numbered as it first appears (:func:`_wide_child_sums`), instead of in configurations × states.
Per-family sums are LL = Σ n_ijk ln n_ijk − Σ n_ij ln n_ij, N·H(Π ∪ {j}) = N ln N − Σ n_ij ln n_ij,
q⁺ (observed configurations), c⁺ (non-empty cells) and BDeu's Σ [lnΓ(α_jk + n_ijk) − lnΓ(α_jk)] −
Σ [lnΓ(α_j + n_ij) − lnΓ(α_j)] (Heckerman, Geiger & Chickering 1995, eq. 28 with α_j = α/q, α_jk = α_j/r_i).

The loops are compiled with numba (nopython, cached on disk): the NumPy version this replaces
needed ~10 passes over 64-bit arrays per family (key building, gathers, bincount, segment sums)
and was memory-bound; here a family is one pass over the rows with a small scratch table.

Counts are integers (exact in float64) and every sum runs over a family's own cells in an order
fixed by its own rows and keys (which table is decided by the family's own q⁺_Π′, r_l, q⁺_Π, r_j),
so a family's statistics do not depend on which other families share its block: results are the
same whatever the block size or the parallelism. They are therefore the *canonical* statistics of a
discrete family: :func:`canonical_family_counts` computes any family with the walk's own decomposition
(base = its parents but the largest, new = the largest), and :meth:`DiscreteScore.local` and every other
route to a discrete family's score use it, so a score is bit-identical whichever route computed it
(the walk needs no one-family re-count of its kept sets; only sets whose block statistics came from the
subset table or had required parents prepended are re-counted, in one batched call).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from bnilp.compiled import njit

#: rows × bases of one block of the lattice walk (its unit of work: ~5–30 ms of counting on 2 cores)
BLOCK_ELEMENTS = 1 << 22
#: slot tables index keys directly up to this many keys per row (else hash them: many-valued columns)
DIRECT_KEYS_PER_ROW = 16
DIRECT_KEYS_MIN = 1 << 16
#: a family's counts are indexed by its key itself (no slot table) while its keys (q⁺_Π′·r_l·r_j, else
#: q⁺_Π·r_j) number at most this many per distinct row (the sums then visit every key, observed or not)
DENSE_CELLS_PER_ROW = 1
#: n·ln n is looked up for counts up to this (8 MiB), computed above it
XLOGX_TABLE = 1 << 20
#: a child with more states than this, or whose rows × states pass :data:`WIDE_CHILD_CELLS`, is counted cell by
#: cell ("wide"): its cells numbered as they appear (a second refinement of the family's configurations by the
#: child), memory O(rows) — the configurations × states layout took rows × states floats (40 GB for a child of
#: 50,000 codes over 100,000 rows: a review) and visited every empty cell of every configuration
WIDE_CHILD_STATES = 64
WIDE_CHILD_CELLS = 1 << 25


@dataclass
class CountContext:
    """The data of a discrete score in the layout the batched counts need (built once per process)."""

    columns: np.ndarray        # (n, rows) int32: columns[j] is column j on the distinct rows
    weights: np.ndarray        # (rows,) float64 multiplicity of each distinct row (ones: every row once)
    arities: np.ndarray        # (n,) int64
    N: int
    xlogx: np.ndarray          # n·ln n for n = 0..min(N, XLOGX_TABLE) (counts are integers)
    #: counts per variable subset (:mod:`bnilp.scores.subsets`) while a walk uses them, else None
    table: Any = None

    @property
    def n_rows(self) -> int:
        return int(self.columns.shape[1])

    @classmethod
    def from_score(cls, score) -> CountContext:
        cols = np.ascontiguousarray(np.stack(score.columns).astype(np.int32)) if score.columns \
            else np.zeros((0, 0), dtype=np.int32)
        weights = score.weights if score.weights is not None else np.ones(cols.shape[1])
        table = np.arange(min(int(score.N), XLOGX_TABLE) + 1, dtype=np.float64)
        table[1:] *= np.log(table[1:])
        return cls(cols, np.ascontiguousarray(weights, dtype=np.float64), np.asarray(score.arities, dtype=np.int64),
                   int(score.N), table)


#: Fibonacci hashing's multiplier, 2^64/φ (Knuth, TAOCP 3, §6.4); also the lattice's frontier table
HASH_MULT = np.uint64(0x9E3779B97F4A7C15)


def mask_hash_index(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(keys, rows, bits) of an open-addressing table (linear probing, at most half full) of the one-word
    ``masks`` (m,) → row: :func:`words_hash_build` of one word (the same slots), its keys flat for
    :func:`mask_probe`."""
    keys, rows, bits = words_hash_index(np.ascontiguousarray(masks, dtype=np.uint64).reshape(-1, 1))
    return np.ascontiguousarray(keys[:, 0]), rows, bits


@njit(cache=True, nogil=True)
def mask_hash_lookup(keys: np.ndarray, rows: np.ndarray, bits: int, queries: np.ndarray) -> np.ndarray:
    """:func:`mask_probe` of each one-word query: the rows stored for ``queries``, −1 where absent."""
    out = np.empty(queries.size, dtype=np.int64)
    for i in range(queries.size):
        out[i] = mask_probe(keys, rows, bits, queries[i])
    return out


@njit(cache=True, nogil=True, inline="always")
def mask_probe(keys: np.ndarray, rows: np.ndarray, bits: int, query) -> int:
    """The row stored for ``query`` in the table of :func:`mask_hash_index`, −1 if absent (linear probing)."""
    h = np.int64((query * HASH_MULT) >> np.uint64(64 - bits))
    while rows[h] >= 0:
        if keys[h] == query:
            return rows[h]
        h = (h + 1) & ((np.int64(1) << bits) - 1)
    return -1



#: bits of a mask word: a parent set of the lattice's frontier is ⌈n / 64⌉ words, variable v bit v mod 64 of word
#: v // 64 (one word, the plain mask, up to 64 variables)
WORD_BITS = 64


def mask_words(n: int) -> int:
    """Words of a parent set's mask over ``n`` variables (at least one)."""
    return max(1, -(-n // WORD_BITS))


def words_of(parents: np.ndarray, words: int) -> np.ndarray:
    """The (m, ``words``) uint64 masks of the parent sets in the rows of ``parents`` (variable indices)."""
    p = np.asarray(parents, dtype=np.int64)
    out = np.zeros((p.shape[0], words), dtype=np.uint64)
    if p.size:
        bit = np.left_shift(np.uint64(1), (p % WORD_BITS).astype(np.uint64))
        for w in range(words):
            out[:, w] = np.bitwise_or.reduce(np.where(p // WORD_BITS == w, bit, np.uint64(0)), axis=1)
    return out


def words_hash_index(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(keys, rows, bits) of an open-addressing table of the (m, W) uint64 ``masks``, at most half full: the
    multi-word form of :func:`mask_hash_index` (for W = 1 the same hash)."""
    bits = max(4, int(2 * max(masks.shape[0], 1) - 1).bit_length())
    keys, rows = words_hash_build(np.ascontiguousarray(masks, dtype=np.uint64), bits)
    return keys, rows, bits


@njit(cache=True, nogil=True, inline="always")
def _words_slot(row, bits):
    """Home slot of a multi-word mask: Fibonacci hashing of the words folded by xor-multiply."""
    acc = np.uint64(0)
    for w in range(row.size):
        acc = (acc ^ row[w]) * HASH_MULT
    return np.int64(acc >> np.uint64(64 - bits))


@njit(cache=True, nogil=True)
def words_hash_build(masks: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Open-addressing table (linear probing, 2^bits slots ≥ 2·m) of the (m, W) ``masks`` → row."""
    size = 1 << bits
    keys = np.zeros((size, masks.shape[1]), dtype=np.uint64)
    rows = np.full(size, -1, dtype=np.int64)
    for i in range(masks.shape[0]):
        h = _words_slot(masks[i], bits)
        while rows[h] >= 0:
            h = (h + 1) & (size - 1)
        keys[h] = masks[i]
        rows[h] = i
    return keys, rows


@njit(cache=True, nogil=True)
def words_hash_lookup(keys: np.ndarray, rows: np.ndarray, bits: int, queries: np.ndarray) -> np.ndarray:
    """:func:`words_probe` of each W-word row of ``queries``: the rows stored for them, −1 where absent."""
    out = np.empty(queries.shape[0], dtype=np.int64)
    for i in range(queries.shape[0]):
        out[i] = words_probe(keys, rows, bits, queries[i])
    return out


@njit(cache=True, nogil=True, inline="always")
def words_probe(keys: np.ndarray, rows: np.ndarray, bits: int, query) -> int:
    """The row stored for the W-word ``query`` in the table of :func:`words_hash_build`, −1 if absent."""
    h = _words_slot(query, bits)
    size_mask = (np.int64(1) << bits) - 1
    while rows[h] >= 0:
        same = True
        for w in range(query.size):
            if keys[h, w] != query[w]:
                same = False
                break
        if same:
            return rows[h]
        h = (h + 1) & size_mask
    return -1


def _scratch(key_space: int, rows: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Slot table for keys 0..key_space−1: direct (index = key) when that is at most
    :data:`DIRECT_KEYS_PER_ROW` per row, else an open-addressing hash of ≥ 2·rows entries (at most
    ``rows`` distinct keys are live at once). Returns (slot, hash keys, hash bits; 0 = direct)."""
    if key_space <= max(DIRECT_KEYS_PER_ROW * rows, DIRECT_KEYS_MIN):
        return np.full(max(key_space, 1), -1, dtype=np.int64), np.empty(1, dtype=np.int64), 0
    bits = max(4, int(2 * rows).bit_length())
    return np.full(1 << bits, -1, dtype=np.int64), np.full(1 << bits, -1, dtype=np.int64), bits


@njit(cache=True, nogil=True, inline="always")
def _position(key, hkeys, bits):
    """Where ``key``'s slot lives: the key itself (direct table) or its hash position (claimed for it)."""
    if bits == 0:
        return key
    h = np.int64((np.uint64(key) * HASH_MULT) >> np.uint64(64 - bits))
    size_mask = (np.int64(1) << bits) - 1
    while hkeys[h] >= 0 and hkeys[h] != key:
        h = (h + 1) & size_mask
    hkeys[h] = key
    return h


@njit(cache=True, nogil=True)
def _refine(code, col, r, slot, hkeys, bits, seen, out) -> int:
    """out[row] = the rank of (code[row], col[row]) among the distinct pairs, by first row; returns their number.

    ``slot``/``hkeys`` (from :func:`_scratch`) must be empty (−1) and are left so; ``seen`` is scratch
    (size ≥ rows).
    """
    m = 0
    for row in range(code.size):
        pos = _position(np.int64(code[row]) * r + col[row], hkeys, bits)
        s = slot[pos]
        if s < 0:   # the first row of this pair: a new slot (written out here and in _block_stats:
            s = m   # a shared helper returning (s, m) made both loops ~10× slower under numba 0.68)
            slot[pos] = s
            seen[m] = pos
            m += 1
        out[row] = s
    for s in range(m):
        slot[seen[s]] = -1
        if bits:
            hkeys[seen[s]] = -1
    return m


@njit(cache=True, nogil=True, inline="always")
def _xlogx(n: float, table: np.ndarray) -> float:
    i = int(n)
    return table[i] if i < table.size else n * math.log(n)


#: BDeu's ln Γ(a + n) − ln Γ(a) for counts n up to this come from a per-family table of running log sums
LOG_RISING_TABLE = 64
#: from this a on, :func:`log_rising_gamma` sums Stirling's series of the difference instead of subtracting two
#: ln Γ: the subtraction loses |ln Γ(a)|·2⁻⁵³ ≈ a·ln a·1.1e-16 to cancellation (0.002 nats at ESS 10¹², 4.6 at
#: 10¹⁵ on ASIA: Markov equivalent DAGs scored apart); below it that loss is under 5e-14
LOG_RISING_STIRLING_FROM = 100.0


@njit(cache=True, nogil=True)
def log_rising_gamma(a: float, n: float) -> float:
    """ln Γ(a + n) − ln Γ(a) for real a > 0 and n ≥ 0, within about 1e-13·max(1, |result|) for every a.

    Below :data:`LOG_RISING_STIRLING_FROM` the difference of ``math.lgamma``. From it on, Stirling's series
    ln Γ(x) = (x − ½) ln x − x + ½ ln 2π + φ(x), φ(x) = 1/(12x) − 1/(360x³) + 1/(1260x⁵) − 1/(1680x⁷) + R,
    |R| < 1/(1188x⁹) (Abramowitz & Stegun 6.1.41), taken as a difference with the large terms cancelled
    by hand: (x − ½) ln x at x = a + n minus at x = a is (a − ½)·log1p(n/a) + n·ln(a + n), so

        ln Γ(a + n) − ln Γ(a) = (a − ½)·log1p(n/a) + n·ln(a + n) − n + φ(a + n) − φ(a)

    with no term larger than about n·ln(a + n) (the truncation error is below 1e-20 at a ≥ 100)."""
    if n == 0.0:
        return 0.0
    if a < LOG_RISING_STIRLING_FROM:
        return math.lgamma(a + n) - math.lgamma(a)
    b = a + n
    ia, ib = 1.0 / a, 1.0 / b
    ia2, ib2 = ia * ia, ib * ib
    phi_a = ia * (1.0 / 12.0 - ia2 * (1.0 / 360.0 - ia2 * (1.0 / 1260.0 - ia2 / 1680.0)))
    phi_b = ib * (1.0 / 12.0 - ib2 * (1.0 / 360.0 - ib2 * (1.0 / 1260.0 - ib2 / 1680.0)))
    return (a - 0.5) * math.log1p(n / a) + n * math.log(b) - n + (phi_b - phi_a)


@njit(cache=True, nogil=True)
def log_rising_sum(a: float, counts: np.ndarray) -> float:
    """Σ over ``counts`` of ln Γ(a + n) − ln Γ(a) (:func:`log_rising_gamma`); empty cells add 0."""
    total = 0.0
    for n in counts.ravel():
        total += log_rising_gamma(a, float(n))
    return total


@njit(cache=True, nogil=True, inline="always")
def log_rising(n: float, a: float, table: np.ndarray, filled: int) -> tuple[float, int]:
    """ln Γ(a + n) − ln Γ(a) = Σ_{i<n} ln(a + i) (the rising factorial a(a+1)…(a+n−1)) for a count n: from
    ``table`` (table[i] = the sum for n = i, valid up to ``filled``, extended here) while n is an integer
    in its range, else by :func:`log_rising_gamma`. Returns (value, new filled). With the counts of one
    family's cells mostly small, this is a few logarithms per family instead of two ln Γ per cell."""
    i = np.int64(n)
    if i < table.size and i == n:
        while filled < i:
            table[filled + 1] = table[filled] + math.log(a + filled)
            filled += 1
        return table[i], filled
    return log_rising_gamma(a, n), filled


@njit(cache=True, nogil=True)
def _bdeu_cell_sums(cnt, m, r_c, branchless, reset, xlogx, a_j, rise, filled, table, seen, hkeys, bits):
    """One family's sums over its ``m`` configurations × ``r_c`` cells in ``cnt`` (zeroed here): Σ n ln n over
    cells and over configurations, c⁺, q⁺, and BDeu's Σ [ln Γ(a_jk + n) − ln Γ(a_jk)] over cells and
    Σ [ln Γ(a_j + n_j) − ln Γ(a_j)] over configurations (a_jk = a_j / r_c; Heckerman et al. 1995, eq. 28)
    from the rising tables ``rise[0]`` (a_j) and ``rise[1]`` (a_jk), valid up to ``filled``. With
    ``branchless`` every count is an integer in the xlogx table and empty cells add 0 without a branch;
    with ``reset`` the slots ``seen[:m]`` of the slot table are freed. Apart from BIC's sums, whose loops
    stay in :func:`_block_stats` (a BDeu branch inside them slowed BIC by ~40 %)."""
    a_jk = a_j / r_c
    rise_j, rise_jk = rise[0], rise[1]
    filled_j, filled_jk = filled[0], filled[1]
    s_cells = s_rows = g_cells = g_rows = 0.0
    cells = configs = 0
    if branchless:
        for s in range(m):
            n_ij = 0.0
            for c in range(r_c):
                n = cnt[s * r_c + c]
                n_ij += n
                cells += n > 0.0
                s_cells += xlogx[np.int64(n)]
                g, filled_jk = log_rising(n, a_jk, rise_jk, filled_jk)
                g_cells += g
                cnt[s * r_c + c] = 0.0
            configs += n_ij > 0.0
            s_rows += xlogx[np.int64(n_ij)]
            g, filled_j = log_rising(n_ij, a_j, rise_j, filled_j)
            g_rows += g
        m = 0
    for s in range(m):
        n_ij = 0.0
        for c in range(r_c):
            n = cnt[s * r_c + c]
            if n > 0.0:
                n_ij += n
                cells += 1
                s_cells += _xlogx(n, xlogx)
                g, filled_jk = log_rising(n, a_jk, rise_jk, filled_jk)
                g_cells += g
                cnt[s * r_c + c] = 0.0
        if n_ij > 0.0:
            configs += 1
            s_rows += _xlogx(n_ij, xlogx)
            g, filled_j = log_rising(n_ij, a_j, rise_j, filled_j)
            g_rows += g
        if reset:
            table[seen[s]] = -1
            if bits:
                hkeys[seen[s]] = -1
    filled[0], filled[1] = filled_j, filled_jk
    return s_cells, s_rows, cells, configs, g_cells, g_rows


@njit(cache=True, nogil=True)
def _wide_child_sums(fam, m, xc, r_c, weights, xlogx, with_bdeu, a_j, rise, filled, cslot, chkeys, cbits, seen,
                     cell, conf_cnt, cell_cnt):
    """The sums of :func:`_bdeu_cell_sums` for a child of many states, from ``fam[row]`` (the row's configuration
    of the family, 0..m−1): the cells are the distinct (configuration, state) pairs, numbered as they first
    appear (:func:`_refine`), so only observed cells are stored and visited (O(rows) memory and time, whatever
    r_c). The same quantities: Σ n ln n over cells and configurations, c⁺, q⁺, and BDeu's two sums of
    ln Γ(a + n) − ln Γ(a) (a_jk = a_j / r_c) when ``with_bdeu``."""
    cells = _refine(fam, xc, r_c, cslot, chkeys, cbits, seen, cell)
    conf_cnt[:m] = 0.0
    cell_cnt[:cells] = 0.0
    for row in range(fam.size):
        conf_cnt[fam[row]] += weights[row]
        cell_cnt[cell[row]] += weights[row]
    n_cells, s_cells, g_cells, filled[1] = _count_sums(cell_cnt, cells, xlogx, with_bdeu, a_j / r_c, rise[1],
                                                       filled[1])
    configs, s_rows, g_rows, filled[0] = _count_sums(conf_cnt, m, xlogx, with_bdeu, a_j, rise[0], filled[0])
    return s_cells, s_rows, n_cells, configs, g_cells, g_rows


@njit(cache=True, nogil=True, inline="always")
def _count_sums(counts, k, xlogx, with_bdeu, a, rise, filled):
    """Over ``counts[:k]``: (non-zero counts, Σ n ln n, Σ [ln Γ(a + n) − ln Γ(a)] when ``with_bdeu``, the rising
    table's new ``filled``) — :func:`_wide_child_sums`'s sums over its cells and over its configurations."""
    nonzero, s, g = 0, 0.0, 0.0
    for i in range(k):
        n = counts[i]
        if n > 0.0:
            nonzero += 1
            s += _xlogx(n, xlogx)
            if with_bdeu:
                v, filled = log_rising(n, a, rise, filled)
                g += v
    return nonzero, s, g, filled


@njit(cache=True, nogil=True)
def _block_stats(columns, arities, bases, base_of, new, xc, r_c, weights, q_all, ess, with_bdeu,
                 ll, nh, q_plus, c_plus, bdeu, n_log_n, xlogx, rslot, rhkeys, rbits, slot, hslot, hkeys, hbits,
                 dense_keys, wide, cslot, chkeys, cbits):
    nb, k = bases.shape
    rows = xc.size
    tabled = xlogx.size > weights.sum()    # every count (≤ N) has its n·ln n in the table
    seen = np.empty(max(rows, 1), dtype=np.int64)
    # a wide child's counts are per configuration and per observed cell (O(rows)); else configurations × states
    cnt = np.zeros(1 if wide else max(max(rows, 1), dense_keys) * r_c)
    fam = np.empty(rows if wide else 0, dtype=np.int64)
    cell = np.empty(rows if wide else 0, dtype=np.int64)
    conf_cnt = np.empty(rows if wide else 0)
    cell_cnt = np.empty(rows if wide else 0)
    # prefix[t] = partition of the rows by the first t+1 parents of the current base (bases come in
    # lexicographic order, so consecutive bases share most of their prefix and refine only what differs)
    prefix = np.zeros((max(k, 1), rows), dtype=np.int32)
    prefix_size = np.ones(max(k, 1), dtype=np.int64)
    zero = np.zeros(rows, dtype=np.int32)
    rise = np.zeros((2, LOG_RISING_TABLE + 1))   # BDeu: Σ_{i<n} ln(a_j + i) and Σ_{i<n} ln(a_jk + i) by n
    filled = np.zeros(2, dtype=np.int64)
    rise_a = -1.0
    f = 0
    for b in range(nb):
        same = 0
        if b > 0:
            while same < k and bases[b, same] == bases[b - 1, same]:
                same += 1
        for t in range(same, k - 1):   # all parents but the last: the base's own partition only if needed
            p = bases[b, t]
            prefix_size[t] = _refine(prefix[t - 1] if t > 0 else zero, columns[p], arities[p], rslot, rhkeys,
                                     rbits, seen, prefix[t])
        pre = prefix[k - 2] if k >= 2 else zero
        pre_size = prefix_size[k - 2] if k >= 2 else 1
        last = bases[b, k - 1] if k >= 1 else 0
        r_last = arities[last] if k >= 1 else 1
        col_last = columns[last] if k >= 1 else zero
        refined = k == 0
        while f < new.size and base_of[f] == b:
            col = columns[new[f]]
            r_j = arities[new[f]]
            table, bits = slot, 0     # the slot table in use (set below where the family needs one)
            keys = pre_size * r_last * r_j
            dense = keys <= dense_keys and not wide
            if dense:
                # the key itself indexes the cell, built from the prefix partition and the last two columns:
                # the base's own partition is not needed (no slot look-up per row, no refinement)
                for row in range(rows):
                    cnt[((np.int64(pre[row]) * r_last + col_last[row]) * r_j + col[row]) * r_c + xc[row]] \
                        += weights[row]
                m = keys
            else:
                if not refined:
                    prefix_size[k - 1] = _refine(pre, col_last, r_last, rslot, rhkeys, rbits, seen, prefix[k - 1])
                    refined = True
                code = prefix[k - 1] if k >= 1 else zero   # k = 0: one configuration (r_j over dense_keys)
                keys = (prefix_size[k - 1] if k >= 1 else 1) * r_j
                dense = keys <= dense_keys and not wide
                if dense:   # the base's own partition (q⁺_Π ≤ rows) makes the key space small enough
                    for row in range(rows):
                        cnt[(np.int64(code[row]) * r_j + col[row]) * r_c + xc[row]] += weights[row]
                    m = keys
                else:
                    bits = 0 if keys <= slot.size else hbits   # index the slot table directly while keys fit
                    table = slot if bits == 0 else hslot
                    m = 0
                    for row in range(rows):
                        pos = _position(np.int64(code[row]) * r_j + col[row], hkeys, bits)
                        s = table[pos]
                        if s < 0:   # a new slot (written out here and in _refine: a shared helper returning
                            s = m   # (s, m) made both loops ~10× slower under numba 0.68)
                            table[pos] = s
                            seen[m] = pos
                            m += 1
                        if wide:
                            fam[row] = s
                        else:
                            cnt[s * r_c + xc[row]] += weights[row]
            a_j = ess / q_all[f]
            if with_bdeu and a_j != rise_a:   # the rising tables depend on a_j only: kept while families share q_Π
                rise_a = a_j
                filled[:] = 0
            if wide:
                for s in range(m):      # the configurations' slots freed first: the cells' refinement reuses seen
                    table[seen[s]] = -1
                    if bits:
                        hkeys[seen[s]] = -1
                s_cells, s_rows, cells, configs, g_cells, g_rows = _wide_child_sums(
                    fam, m, xc, r_c, weights, xlogx, with_bdeu, a_j, rise, filled, cslot, chkeys, cbits, seen, cell,
                    conf_cnt, cell_cnt)
                if with_bdeu:
                    bdeu[f] = g_cells - g_rows
            elif with_bdeu:
                s_cells, s_rows, cells, configs, g_cells, g_rows = _bdeu_cell_sums(
                    cnt, m, r_c, dense and tabled, not dense, xlogx, a_j, rise, filled, table, seen, hkeys, bits)
                bdeu[f] = g_cells - g_rows
            else:
                s_cells, s_rows, cells, configs = 0.0, 0.0, 0, 0
                if dense and tabled:
                    # every count is an integer ≤ N < len(xlogx) (0 ln 0 = 0): sums without a branch per cell
                    for s in range(m):
                        n_ij = 0.0
                        for c in range(r_c):
                            n = cnt[s * r_c + c]
                            n_ij += n
                            cells += n > 0.0
                            s_cells += xlogx[np.int64(n)]
                            cnt[s * r_c + c] = 0.0
                        configs += n_ij > 0.0
                        s_rows += xlogx[np.int64(n_ij)]
                    m = 0
                for s in range(m):
                    n_ij = 0.0
                    for c in range(r_c):
                        n = cnt[s * r_c + c]
                        if n > 0.0:
                            n_ij += n
                            cells += 1
                            s_cells += _xlogx(n, xlogx)
                            cnt[s * r_c + c] = 0.0
                    if n_ij > 0.0:
                        configs += 1
                        s_rows += _xlogx(n_ij, xlogx)
                    if not dense:
                        table[seen[s]] = -1
                        if bits:
                            hkeys[seen[s]] = -1
            ll[f] = s_cells - s_rows
            nh[f] = n_log_n - s_rows
            q_plus[f] = configs
            c_plus[f] = cells
            f += 1


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
    """Statistics of the families ``bases[base_of[f]] ∪ {new[f]}`` of ``child``.

    ``bases`` (nb, k) in lexicographic order, ``base_of`` non-decreasing (a block of the lattice walk);
    ``q_all`` = q_Π of each family over all configurations (BDeu's α/q); with ``ess`` the BDeu score
    (without prior) is returned too.
    """
    nc = new.size
    out = FamilyCounts(np.zeros(nc), np.zeros(nc), np.zeros(nc, dtype=np.int64), np.zeros(nc, dtype=np.int64),
                       np.zeros(nc) if ess is not None else None)
    if nc == 0:
        return out
    bases = np.ascontiguousarray(bases, dtype=np.int64)
    rows = max(ctx.n_rows, 1)
    max_r = int(ctx.arities[bases].max()) if bases.size else 1
    rslot, rhkeys, rbits = _scratch(rows * max_r, ctx.n_rows)   # refinement of a partition by one column
    # slot tables of the families that are not dense: keys q⁺_Π·r_j ≤ rows·r_j; indexed directly where a
    # family's keys fit :data:`DIRECT_KEYS_PER_ROW` per row, else hashed (decided per family)
    key_bound = rows * int(ctx.arities[new].max())
    slot, _, _ = _scratch(min(key_bound, max(DIRECT_KEYS_PER_ROW * rows, DIRECT_KEYS_MIN)), ctx.n_rows)
    hslot, hkeys, hbits = _scratch(key_bound, ctx.n_rows) if key_bound > slot.size else (slot, slot, 0)
    n_log_n = float(ctx.N * math.log(ctx.N)) if ctx.N > 0 else 0.0
    r_c = int(ctx.arities[child])
    wide = r_c > WIDE_CHILD_STATES or rows * r_c > WIDE_CHILD_CELLS     # decided by the child: the same every route
    cslot, chkeys, cbits = _scratch(rows * r_c, ctx.n_rows) if wide else (_ZERO, _ZERO, 0)
    _block_stats(ctx.columns, ctx.arities, bases, np.ascontiguousarray(base_of, dtype=np.int64),
                 np.ascontiguousarray(new, dtype=np.int64), ctx.columns[child], int(ctx.arities[child]), ctx.weights,
                 np.ascontiguousarray(q_all, dtype=np.float64), float(ess if ess is not None else 1.0), ess is not None,
                 out.ll, out.nh, out.q_plus, out.c_plus, out.bdeu if out.bdeu is not None else out.ll, n_log_n,
                 ctx.xlogx, rslot, rhkeys, rbits, slot, hslot, hkeys, hbits, int(DENSE_CELLS_PER_ROW * rows),
                 wide, cslot, chkeys, cbits)
    return out


_ZERO = np.zeros(1, dtype=np.int64)


def q_product(arities: np.ndarray, parents: np.ndarray) -> np.ndarray:
    """q_Π of each row of ``parents`` (m, s) as the walk forms it: ((1·r_p1)·r_p2)·… in float64, parents in
    ascending order (exact below 2^53, and rounded the same way above it wherever it is formed)."""
    q = np.ones(parents.shape[0])
    for t in range(parents.shape[1]):
        q = q * arities[parents[:, t]].astype(np.float64)
    return q


def canonical_family_counts(ctx: CountContext, child: int, families: np.ndarray,
                            ess: float | None = None) -> tuple[FamilyCounts, np.ndarray]:
    """Statistics of families of ``child`` of one size s ≥ 1 (rows of ``families``, each ascending), each
    computed as the lattice walk computes it: base = all parents but the largest, new = the largest.

    A family's statistics depend only on that decomposition (see the module docstring), so these are the
    values :func:`family_counts` gives the same family in any block of the walk: the *canonical* values,
    which every route to a discrete family's score (the walk, :meth:`DiscreteScore.local`, the one-family
    reference walk, the subset table's re-check) writes. Returns (statistics in the rows' order, q_Π).
    """
    fam = np.ascontiguousarray(families, dtype=np.int64)
    m, s = fam.shape
    if s == 0:
        raise ValueError("families must have at least one parent (the empty set has no decomposition)")
    if m == 1:   # one family (DiscreteScore.local): no sorting
        q1 = q_product(ctx.arities, fam)
        return family_counts(ctx, child, fam[:, :-1], _ZERO, fam[0, -1:], q1, ess), q1
    order = np.lexsort(fam.T[::-1])
    srt = fam[order]
    if s == 1:
        bases, base_of = np.zeros((1, 0), dtype=np.int64), np.zeros(m, dtype=np.int64)
    else:
        head = srt[:, :-1]
        first = np.ones(m, dtype=bool)
        first[1:] = (head[1:] != head[:-1]).any(axis=1)
        bases, base_of = head[first], np.cumsum(first) - 1
    q_all = q_product(ctx.arities, srt)
    fc = family_counts(ctx, child, bases, base_of, srt[:, -1], q_all, ess)
    inv = np.empty(m, dtype=np.int64)
    inv[order] = np.arange(m)
    out = FamilyCounts(fc.ll[inv], fc.nh[inv], fc.q_plus[inv], fc.c_plus[inv],
                       fc.bdeu[inv] if fc.bdeu is not None else None)
    return out, q_all[inv]
