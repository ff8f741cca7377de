"""Dynamic programming over variable subsets: OPT without branch-and-cut; for every candidate family,
the score of the best DAG that contains it (the exact filter of phase 2); and the credible set itself,
listed by peeling sinks under the programme's bound (:class:`Peeler`).

For child v and S ⊆ V∖{v}, bps_v(S) = max{s(v, W) : W ⊆ S candidate} (−∞ if none). Over
the orders of the variables (Silander & Myllymäki, UAI 2006, eqs. 2–4; Koivisto & Sood, JMLR 2004):

- forward:  F(∅) = 0,  F(S) = max_{v∈S} F(S∖{v}) + bps_v(S∖{v})  — the best DAG on S alone;
- backward: R(V) = 0,  R(T) = max_{u∉T} bps_u(T) + R(T ∪ {u})  — the best way to give every variable
  outside T parents, when the variables of T come first (their parents do not matter here);
- OPT = F(V) = R(∅).

**Best DAG containing a family.** Let G contain the family (v, W) and let S be the set of variables
before v in a topological order of G. Then W ⊆ S, the variables of S take parents in S only and the
others in S ∪ {v} ∪ (their predecessors), so s(G) ≤ F(S) + s(v, W) + R(S ∪ {v}); conversely the DAGs
that reach F(S) and R(S ∪ {v}) and the family (v, W) together form a DAG (v comes after S and before
the rest). Hence

    best(v, W) = s(v, W) + max_{W ⊆ S ⊆ V∖{v}} [F(S) + R(S ∪ {v})],

a superset-maximum transform of G_v(S) = F(S) + R(S ∪ {v}). A family with best(v, W) < OPT − ε is in
no credible DAG, and phase 2 need not see it: the filter is exact, it keeps every family of every
credible DAG (``tests/test_ilp_dp.py`` checks both against brute force). With background knowledge
that the family table cannot express (required adjacencies, ancestry) the DP over the table is an
upper bound: OPT comes from branch-and-cut, and the filter stays valid against the constrained OPT.

Cost. bps_v(S) depends on S only through S ∩ C_v, C_v the union of v's candidate parent sets, so
bps_v is stored over the 2^|C_v| subsets of C_v (at most n·2^(n−1) entries in all, far fewer where the
candidate parents are sparse: horse BF 3, 28 variables, 4.9 M; past ``DP_TABLE_MAX_ENTRIES``, over a
part D_v of C_v, the other sets scanned at each look-up: :func:`table_masks`, the budget raised where the
scans would cost more than larger tables: :func:`plan_tables`); the index of S ∩ C_v is
gathered byte by byte from small tables. F, R (float64) and the sinks take 17·2^n bytes — n = 25 0.5 GiB, 28 4.3 GiB, 29
8.5 GiB (:func:`dp_bytes`) — and the passes over them n·2^(n−1) steps each.
:data:`bnilp.ilp.settings.DP_MAX_VARIABLES` and the rules beside it bound where it runs.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bnilp.compiled import njit
from bnilp.ilp import settings
from bnilp.ilp.families import _Data
from bnilp.memory import free_memory, usable_cores
from bnilp.scores.base import tie_tolerance
from bnilp.threads import DaemonThreads


@njit(cache=True, nogil=True)
def _expand(c, v):
    low = c & ((np.int64(1) << v) - 1)
    return low | ((c >> v) << (v + 1))


@njit(cache=True, nogil=True)
def _gather_tables(n, masks):
    """gather[v, b, x]: the bits of byte b of a subset (value x) that lie in ``masks[v]`` (D_v, v not in
    it), packed as in the index of bps_v — so that the index of S ∩ D_v is the sum over the bytes of S
    (a software pext)."""
    nbytes = (n + 7) // 8
    out = np.zeros((n, nbytes, 256), dtype=np.int64)
    for v in range(n):
        base = 0
        for b in range(nbytes):
            bits = (masks[v] >> (8 * b)) & 255
            width = 0
            for j in range(8):
                if (bits >> j) & 1:
                    width += 1
            for x in range(256):
                c = np.int64(0)
                pos = 0
                for j in range(8):
                    if (bits >> j) & 1:
                        if (x >> j) & 1:
                            c |= np.int64(1) << pos
                        pos += 1
                out[v, b, x] = c << base
            base += width
        if masks[v] == ((np.int64(1) << n) - 1) ^ (np.int64(1) << v):   # V∖{v}: a shift (see _gather)
            out[v, 0, 0] = -1
    return out


@njit(cache=True, nogil=True, inline="always")
def _gather(gather, v, s):
    """The index of S ∩ D_v in bps_v (see :func:`_gather_tables`); ``gather[v, 0, 0]`` is −1 where D_v is
    every other variable, and the index is then S with bit v squeezed out."""
    if gather[v, 0, 0] < 0:
        low = s & ((np.int64(1) << v) - 1)
        return low | ((s >> (v + 1)) << v)
    c = np.int64(0)
    for b in range(gather.shape[1]):
        c += gather[v, b, (s >> (8 * b)) & 255]
    return c


@njit(cache=True, nogil=True)
def _best_parent_table(v, pmask, score, start, dbits, offset, gather, inside, bps):
    """bps_v over D_v, into ``bps``: entry gather(v, P) = max{score[k] : child v, pmask[k] ⊆ P ⊆ D_v} for the
    families inside D_v (a subset-maximum transform over the 2^|D_v| subsets; W ⊆ S iff W ⊆ S ∩ D_v)."""
    row = bps[offset[v]:offset[v + 1]]
    for k in range(start[v], start[v + 1]):
        if inside[k]:
            c = _gather(gather, v, pmask[k])
            if score[k] > row[c]:
                row[c] = score[k]
    size = row.size
    for b in range(dbits[v]):
        step = np.int64(1) << b
        for m in range(size):
            if m & step:
                other = row[m ^ step]
                if other > row[m]:
                    row[m] = other


@njit(cache=True, nogil=True)
def _scan(outside, pmask, score, i, end, best, s):
    """bps_v(S) from the table's value ``best`` for S ∩ D_v: the first of v's families outside D_v,
    ``outside[i:end]`` (best first), that beats it and fits in S. Callers look the table up and call this
    only when v has such families, inline: a helper doing both, inlined or not, slows the loops around it
    four- to fivefold (measured on 22 variables: 0.5 → 2.3 s for F)."""
    while i < end:
        k = outside[i]
        if score[k] <= best:
            break
        if pmask[k] & ~s == 0:
            return score[k]
        i += 1
    return best


@njit(cache=True, nogil=True)
def _expected_scans(v, pmask, score, lo, hi, dmask, samples):
    """The mean over ``samples`` (subsets S of V, v's bit dropped) of the families :func:`_scan` examines
    for bps_v(S): v's families with a parent outside D_v (``dmask``), best first, that score above the
    table's value for S ∩ D_v (v's best family inside D_v that fits in S), up to the first that fits."""
    total = 0
    vbit = np.int64(1) << v
    for i in range(samples.size):
        s = samples[i] & ~vbit
        best = -np.inf
        for k in range(lo, hi):
            if pmask[k] & ~dmask == 0 and pmask[k] & ~s == 0:
                best = score[k]
                break
        for k in range(lo, hi):
            if pmask[k] & ~dmask == 0:
                continue
            if score[k] <= best:
                break
            total += 1
            if pmask[k] & ~s == 0:
                break
    return total / samples.size


@njit(cache=True, nogil=True)
def _max_abs_finite(f):
    """max |x| over the finite entries of ``f`` (0 if none)."""
    m = 0.0
    for i in range(f.size):
        x = abs(f[i])
        if x > m and x < np.inf:
            m = x
    return m


#: F and R go over the subsets in blocks of 2^BLOCK_BITS that share their high bits: removing a high
#: variable reads a whole earlier block in order (streamed), removing a low one stays in the block (cache)
BLOCK_BITS = 14


@njit(cache=True, nogil=True)
def _forward(n, block_bits, bps, offset, gather, ostart, outside, pmask, score, f, sink, blocks):
    """F and the sink that attains it (the lowest of the best sinks) over the ``blocks`` of 2^block_bits
    subsets each (block b: the subsets b·2^block_bits + j), into ``f`` and ``sink`` (an empty ``sink``: F
    only); every block with one high bit fewer must be done. ``f`` may be float32: each value is then
    rounded up (F32(S) ≥ max_v F32(S∖{v}) + bps_v(S∖{v}) ≥ F(S), by induction), an upper bound on F."""
    low = min(n, block_bits)
    size = np.int64(1) << low
    cur = np.empty(size)
    arg = np.empty(size, dtype=np.int8)
    sinks = sink.size > 0
    for bi in range(blocks.size):
        base = blocks[bi] * size
        cur[:] = -np.inf
        arg[:] = -1
        for v in range(low, n):                 # high sinks: S∖{v} lies in an earlier block
            bit = np.int64(1) << v
            if base & bit:
                rb = base ^ bit
                for j in range(size):
                    rest = rb + j
                    b = bps[offset[v] + _gather(gather, v, rest)]
                    if ostart[v] < ostart[v + 1]:
                        b = _scan(outside, pmask, score, ostart[v], ostart[v + 1], b, rest)
                    val = f[rest] + b
                    if val > cur[j]:
                        cur[j] = val
                        arg[j] = v
        for j in range(size):                   # low sinks: S∖{v} is earlier in this block
            s = base + j
            if s == 0:
                f[0] = 0.0
                continue
            best = cur[j]
            a = np.int64(arg[j])
            for v in range(low):
                bit = np.int64(1) << v
                if j & bit:
                    rest = s ^ bit
                    b = bps[offset[v] + _gather(gather, v, rest)]
                    if ostart[v] < ostart[v + 1]:
                        b = _scan(outside, pmask, score, ostart[v], ostart[v + 1], b, rest)
                    val = f[rest] + b
                    if val > best or (val == best and a >= low):
                        best = val
                        a = v
            f[s] = best
            if f[s] < best:                     # float32 F: rounded up, never below the float64 value
                f[s] = np.nextafter(f[s], np.float32(np.inf))
            if sinks:
                sink[s] = a


@njit(cache=True, nogil=True)
def _backward(n, block_bits, bps, offset, gather, ostart, outside, pmask, score, r, blocks):
    """R over the ``blocks`` (see :func:`_forward`), into ``r``; every block with one high bit more must be
    done."""
    full = np.int64(1) << n
    low = min(n, block_bits)
    size = np.int64(1) << low
    cur = np.empty(size)
    for bi in range(blocks.size):
        base = blocks[bi] * size
        cur[:] = -np.inf
        for u in range(low, n):                 # high u: T ∪ {u} lies in a later block
            bit = np.int64(1) << u
            if not base & bit:
                up = base | bit
                for j in range(size):
                    t = base + j
                    b = bps[offset[u] + _gather(gather, u, t)]
                    if ostart[u] < ostart[u + 1]:
                        b = _scan(outside, pmask, score, ostart[u], ostart[u + 1], b, t)
                    val = b + r[up + j]
                    if val > cur[j]:
                        cur[j] = val
        for j in range(size - 1, -1, -1):       # low u: T ∪ {u} is later in this block
            t = base + j
            if t == full - 1:
                r[t] = 0.0
                continue
            best = cur[j]
            for u in range(low):
                bit = np.int64(1) << u
                if not j & bit:
                    b = bps[offset[u] + _gather(gather, u, t)]
                    if ostart[u] < ostart[u + 1]:
                        b = _scan(outside, pmask, score, ostart[u], ostart[u + 1], b, t)
                    val = b + r[t | bit]
                    if val > best:
                        best = val
            r[t] = best


@njit(cache=True, nogil=True)
def _best_containing(n, v, pmask, score, start, f, r, dbits, gather, out):
    """out[k] = score[k] + max_{pmask[k] ⊆ S ⊆ V∖{v}} F(S) + R(S ∪ {v}) for child v's families inside D_v:
    G_v(S) = F(S) + R(S ∪ {v}) maximised first over the variables outside D_v (H_v(P) = max{G_v(S) :
    S ∩ D_v = P}), then a superset-maximum transform over the subsets P of D_v. For a family outside D_v
    the same formula reads H_v at pmask[k] ∩ D_v, a maximum over more sets S: an upper bound, which keeps
    the filter sound (it may keep a family that no credible DAG uses, never drop one)."""
    size = np.int64(1) << (n - 1)
    vbit = np.int64(1) << v
    h = np.full(np.int64(1) << dbits[v], -np.inf)
    for c in range(size):
        s = _expand(c, v)
        val = f[s] + r[s | vbit]
        idx = _gather(gather, v, s)
        if val > h[idx]:
            h[idx] = val
    for b in range(dbits[v]):
        step = np.int64(1) << b
        for m in range(h.size):
            if not m & step:
                other = h[m | step]
                if other > h[m]:
                    h[m] = other
    for k in range(start[v], start[v + 1]):
        out[k] = score[k] + h[_gather(gather, v, pmask[k])]


@dataclass
class DPResult:
    """OPT by dynamic programming (``opt``: the DP's float sum; −inf when no DAG exists), an optimal
    choice of family indices, and, when asked for, the score of the best DAG containing each family
    (``best_containing``)."""

    opt: float
    choice: tuple[int, ...]
    best_containing: np.ndarray | None
    #: F over all 2^n subsets (the bound of :class:`Peeler`); None when no DAG exists. float32 in bound
    #: mode (:func:`bound_mode`): an upper bound on F, not F
    forward: np.ndarray | None = None


def candidate_masks(data: _Data) -> np.ndarray:
    """C_v for each child v: the union of its candidate parent sets, as a bit mask."""
    pmask = np.asarray(data.pmask, dtype=np.int64)
    return np.array([np.bitwise_or.reduce(pmask[data.start[v]:data.start[v + 1]], initial=0)
                     for v in range(data.n)], dtype=np.int64)


def table_masks(data: _Data, max_entries: int | None = None) -> np.ndarray:
    """D_v ⊆ C_v for each child v, the parents its best-parent table is indexed by: C_v itself when
    Σ_v 2^|C_v| ≤ ``max_entries`` (default :data:`~bnilp.ilp.settings.DP_TABLE_MAX_ENTRIES`), else for
    each v k of its parents, k the largest with Σ_v 2^min(|C_v|, k) within the budget: those of its sets
    best first while they fit, then those that occur in most of its sets. Families with a parent outside
    D_v are scanned instead (:func:`_scan`), best first, until one scores no more than the table's value:
    keeping the best sets inside makes that stop come early."""
    if max_entries is None:
        max_entries = settings.DP_TABLE_MAX_ENTRIES
    cmask = candidate_masks(data)
    bits = [int(c).bit_count() for c in cmask]
    if sum(1 << b for b in bits) <= max_entries:
        return cmask
    k = max((k for k in range(max(bits) + 1) if sum(1 << min(b, k) for b in bits) <= max_entries), default=0)
    pmask = np.asarray(data.pmask, dtype=np.int64)
    dmask = cmask.copy()
    for v in range(data.n):
        if bits[v] <= k:
            continue
        fam = pmask[data.start[v]:data.start[v + 1]]
        chosen = 0
        for w in fam:                           # best first: the parents of the best sets that still fit
            if (chosen | int(w)).bit_count() <= k:
                chosen |= int(w)
        counts = sorted((-int(np.count_nonzero(fam & (1 << p))), p) for p in range(data.n)
                        if cmask[v] >> p & 1 and not chosen >> p & 1)
        for _, p in counts[:k - chosen.bit_count()]:
            chosen |= 1 << p
        dmask[v] = chosen
    return dmask


#: Subsets drawn per child to estimate its scans (:func:`scan_steps`; about a second on sensors BF 20)
SCAN_SAMPLES = 1000


def scan_steps(data: _Data, dmask: np.ndarray, samples: int = SCAN_SAMPLES, seed: int = 0) -> float:
    """The expected number of families :func:`_scan` examines in one pass (F or R) with the tables over
    ``dmask``: a pass looks bps_v up once at every S ⊆ V∖{v}, so the count is Σ_v 2^(n−1)·E_S[scans_v(S)]
    for S uniform, each mean estimated from ``samples`` drawn subsets (a fixed ``seed``: one table, one
    plan). Exactly 0 where every family lies inside its child's D_v."""
    n = data.n
    pmask = np.asarray(data.pmask, dtype=np.int64)
    child = np.asarray(data.child, dtype=np.int64)
    scanned = np.unique(child[(pmask & ~np.asarray(dmask, dtype=np.int64)[child]) != 0])
    if scanned.size == 0:
        return 0.0
    draws = np.random.default_rng(seed).integers(0, 1 << n, samples, dtype=np.int64)
    score = np.ascontiguousarray(data.score, dtype=np.float64)
    start = np.asarray(data.start, dtype=np.int64)
    per_lookup = sum(_expected_scans(int(v), pmask, score, start[v], start[v + 1], np.int64(dmask[v]), draws)
                     for v in scanned)
    return per_lookup * 2.0 ** (n - 1)


@dataclass(frozen=True)
class TablePlan:
    """The programme's best-parent tables: D_v per child (``dmask``), their entries, the steps of their
    subset-maximum transforms, the largest table, the expected scan steps per pass (:func:`scan_steps`)
    and how many tables outgrow the cache; :meth:`seconds` and :meth:`bytes` estimate the programme."""

    dmask: np.ndarray
    entries: int
    transform_steps: int
    largest: int
    scan_steps: float
    #: children whose table has more than CACHED_TABLE_ENTRIES entries
    large_tables: int

    @classmethod
    def of(cls, data: _Data, dmask: np.ndarray) -> TablePlan:
        bits = [int(c).bit_count() for c in dmask]
        return cls(dmask, sum(1 << b for b in bits), sum(b << b for b in bits), 1 << max(bits, default=0),
                   scan_steps(data, dmask), sum(1 << b > CACHED_TABLE_ENTRIES for b in bits))

    def seconds(self, n: int) -> float:
        return dp_seconds(n, self.transform_steps, self.scan_steps, self.large_tables, bound=bound_mode(n),
                          threads=dp_threads())

    def bytes(self, n: int) -> int:
        return dp_bytes(n, self.entries, self.largest, bound=bound_mode(n), threads=dp_threads())


_PLANS: weakref.WeakKeyDictionary[_Data, TablePlan] = weakref.WeakKeyDictionary()


def plan_tables(data: _Data) -> TablePlan:
    """D_v for the programme: :func:`table_masks` within ``DP_TABLE_MAX_ENTRIES``; where families are then
    scanned, the budget doubled up to ``DP_TABLE_GROWN_MAX_ENTRIES`` as long as the programme still fits in
    half the free memory, and of those plans the one with the least :func:`dp_seconds` (tables against
    scans). The result is the same for any plan (the scans make the tables exact); only time and memory
    differ. Computed once per ``data`` (the free memory is read then)."""
    plan = _PLANS.get(data)
    if plan is None:
        plan = best = TablePlan.of(data, table_masks(data))
        free = free_memory()
        budget = settings.DP_TABLE_MAX_ENTRIES
        while plan.scan_steps > 0 and budget < settings.DP_TABLE_GROWN_MAX_ENTRIES:
            budget *= 2
            dmask = table_masks(data, budget)
            if np.array_equal(dmask, plan.dmask):
                continue
            plan = TablePlan.of(data, dmask)
            if free is not None and plan.bytes(data.n) > free / 2:
                break
            if plan.seconds(data.n) < best.seconds(data.n):
                best = plan
        _PLANS[data] = plan = best
    return plan


def dp_threads(threads: int | None = None) -> int:
    """The passes' threads: ``threads``, else :data:`~bnilp.ilp.settings.DP_THREADS`; 0 is one per core this
    process may run on (:func:`bnilp.memory.usable_cores`)."""
    threads = settings.DP_THREADS if threads is None else threads
    return max(1, threads or usable_cores())


def bound_mode(n: int) -> bool:
    """Whether the programme over ``n`` variables runs in bound mode: above
    :data:`~bnilp.ilp.settings.DP_EXACT_MAX_VARIABLES`, F is kept in float32, rounded up — an upper bound on
    F in 4 bytes a subset (31 variables: 8 GiB instead of the 34 GiB of F, R and the sinks) — without R and
    the filter; OPT and its DAG come from peeling under that bound (:func:`solve_dp`)."""
    return n > settings.DP_EXACT_MAX_VARIABLES


def dp_bytes(n: int, entries: int | None = None, largest: int | None = None, bound: bool = False,
             threads: int = 1) -> int:
    """Memory the DP holds at its peak: the best-parent tables (``entries``, by default the most n
    variables can need, n·2^(n−1)), F, R and the sinks over 2^n subsets, and one H_v per thread (``largest``
    entries, by default 2^(n−1)); in bound mode (:func:`bound_mode`) the tables (float64, as in exact mode) and
    F alone, in float32."""
    if entries is None:
        entries = n * 2 ** (n - 1)
    if largest is None:
        largest = 2 ** (n - 1)
    if bound:
        return 8 * entries + 4 * 2 ** n
    return 8 * entries + 17 * 2 ** n + 8 * largest * max(1, threads)


#: a best-parent table of more entries than this (1 MiB of float64) no longer stays in the cache: a look-up
#: into it costs ~3× more (:func:`dp_seconds`)
CACHED_TABLE_ENTRIES = 2 ** 17


def dp_seconds(n: int, transform_steps: int | None = None, scan_steps: float = 0.0,
               large_tables: int | None = None, bound: bool = False, threads: int = 1) -> float:
    """A generous estimate of the programme's time with the filter: its three passes (F, R and the filter)
    look each child's table up at each of the 2^(n−1) subsets of the other variables, 1.33e-8 s a look-up
    into a table of at most :data:`CACHED_TABLE_ENTRIES` entries and 4e-8 s into a larger one
    (``large_tables`` children have one; by default all n); 2e-9 s per step of the tables' transforms
    (``transform_steps``, by default the most n variables can need, n·(n−1)·2^(n−1)); 5e-9 s per family
    scanned, ``scan_steps`` in each of F and R (:func:`scan_steps`). The passes go ``threads`` times
    faster; in bound mode (:func:`bound_mode`) the forward pass is the whole programme, bar the tables.

    Measured 2026-11 on one core of the 2-core machine (``benchmarks/dp_cost.py``, OPT and filter /
    estimate): dense random n = 22 4.3 / 7.5 s, parkinsons BF 20 (23) 6.8 / 15.8 s, sensors BF 20 (25,
    every C_v: 2^24 entries a child) 36.5 / 70.5 s, horse BF 3 (28, small tables) 107 / 161 s, horse BF 20
    (28, 2^22 entries a child) 376 / 456 s — a look-up 13 ns into small tables, 20–33 ns into large ones,
    more as n grows; a transform step ~1.2 ns; a scanned family 2–5 ns (parkinsons BF 20 with tables of
    2^12–2^16 entries, 0.9–2.9e8 scans a pass: 4–5.5 ns; sensors BF 20 within 2^27 entries, 2.2e11 a
    pass: ~2.2 ns)."""
    if transform_steps is None:
        transform_steps = n * (n - 1) * 2 ** (n - 1)
    if large_tables is None:
        large_tables = n
    lookup = 2.0 ** (n - 1) * ((n - large_tables) * 1.33e-8 + large_tables * 4e-8)
    forward = (lookup + 5e-9 * scan_steps) / max(1, threads)
    if bound:                       # bound mode: F alone
        return 2e-9 * transform_steps + forward
    return 2e-9 * transform_steps + 2 * forward + lookup / max(1, threads)


#: the passes for F and R go in slices of 2^CHECK_BITS subsets, the tables and the filter child by child; after
#: a slice or a child ``stop`` is asked once CHECK_STEPS steps have run since it was last asked (a fraction of
#: a second: a programme smaller than that is never stopped)
CHECK_BITS = 22
CHECK_STEPS = 1 << 26


class DPStopped(Exception):
    """:func:`solve_dp` stopped before it was done (its ``stop`` said so, or SIGINT). ``result`` holds OPT
    and an optimal choice when it was known — in exact mode once the forward pass had finished
    (``best_containing`` None), in bound mode only once the peeling had finished — else None;
    ``incumbent`` (bound mode, stopped while peeling) is the best DAG peeled so far (None before the first)
    and F32(V), an upper bound on OPT, as (choice, bound); ``interrupted`` is True for SIGINT
    (KeyboardInterrupt); ``done`` says what share of the passes ran."""

    def __init__(self, result: DPResult | None, interrupted: bool, done: float,
                 incumbent: tuple[tuple[int, ...] | None, float] | None = None):
        super().__init__("the dynamic programme was stopped")
        self.result = result
        self.interrupted = interrupted
        self.done = done
        self.incumbent = incumbent


def solve_dp(data: _Data, containing: bool = False, block_bits: int = BLOCK_BITS,
             stop: Callable[[], bool] | None = None, bound: bool | None = None,
             floor: float | None = None, threads: int | None = None,
             progress: Callable[[float], None] | None = None) -> DPResult:
    """Dynamic programming over the families of ``data`` (module docstring): OPT, one optimal DAG
    (a family of the sink of each prefix, best first among those that fit), and with ``containing``
    the best DAG score through each family. ``data.n`` must be ≥ 1. When the table admits no DAG,
    ``opt`` is −inf and ``choice`` empty.

    ``bound`` (default :func:`bound_mode` of n): F in float32, each value rounded up, so that
    F32 ≥ F everywhere (an upper bound for :class:`Peeler`, half the memory, no sinks), and neither R nor
    the filter (``containing`` is ignored). F32 exceeds F by at most one float32 rounding per variable
    added, δ = n·2^−23·max|F32| (a float32 spacing is at most 2^−23 of the value), so OPT ≥ F32(V) − δ:
    peeling every DAG with a score at or above max(F32(V) − δ, ``floor``) − tie tolerance lists the
    optimum (``floor``, the score of a DAG already known, only tightens it), and OPT is the best exact
    (fsum) score among them.

    ``threads`` (default :data:`~bnilp.ilp.settings.DP_THREADS`) share the passes (F and R layer by layer,
    the filter child by child); every result is the same bit for bit on any number of threads.

    ``stop`` (no arguments) is asked between slices of the work (:data:`CHECK_BITS`); when it returns
    True, or at SIGINT, :class:`DPStopped` is raised with what is known. ``progress`` is given the share of
    the passes done (0–1) at the same points, before ``stop``, on the calling thread (the passes' threads
    never call it). In bound mode the share is the forward pass's: peeling after it is not counted."""
    run = _Passes(data, containing, block_bits, stop, bound_mode(data.n) if bound is None else bound,
                  floor, threads, progress)
    try:
        return run.solve()
    except KeyboardInterrupt:
        raise DPStopped(run.result, True, run.share(), run.incumbent) from None


class _Passes:
    """The state of one :func:`solve_dp`: its inputs, the passes done so far (``steps`` of ``total``, in
    units of 2^n subset steps), and the result once the forward pass is over."""

    def __init__(self, data: _Data, containing: bool, block_bits: int, stop: Callable[[], bool] | None,
                 bound: bool = False, floor: float | None = None, threads: int | None = None,
                 progress: Callable[[float], None] | None = None):
        self.data = data
        self.progress = progress
        self.bound = bound
        self.floor = floor
        self.threads = dp_threads(threads)
        self.containing = containing and not bound
        self.n = n = data.n
        self.low = min(n, block_bits)
        self.block_bits = block_bits
        self.stop = stop
        self.pmask = np.asarray(data.pmask, dtype=np.int64)
        self.score = np.ascontiguousarray(data.score, dtype=np.float64)
        self.start = np.asarray(data.start, dtype=np.int64)
        dmask = plan_tables(data).dmask
        self.dbits = np.array([int(c).bit_count() for c in dmask], dtype=np.int64)
        self.offset = np.concatenate(([0], np.cumsum(np.int64(1) << self.dbits))).astype(np.int64)
        self.gather = _gather_tables(n, dmask)
        child = np.repeat(np.arange(n), np.diff(self.start))
        self.inside = (self.pmask & ~dmask[child]) == 0
        outside = np.flatnonzero(~self.inside).astype(np.int64)   # best first within each child
        ostart = np.searchsorted(child[outside], np.arange(n + 1)).astype(np.int64)
        self.tables = (self.offset, self.gather, ostart, outside, self.pmask, self.score)
        self.result: DPResult | None = None
        #: bound mode, while peeling: the best DAG peeled so far and F32(V) (:class:`DPStopped`)
        self.incumbent: tuple[tuple[int, ...] | None, float] | None = None
        self.total = 3.0 if self.containing else 1.0  # the tables and F; R; the filter
        self.steps = 0.0
        self.pending = 0

    def share(self) -> float:
        return min(1.0, self.steps / self.total)

    def _check(self, steps: int) -> None:
        """Ask ``stop`` once CHECK_STEPS steps have run since it was last asked (``steps`` more now)."""
        self.pending += steps
        if self.pending >= CHECK_STEPS and (self.stop is not None or self.progress is not None):
            self.pending = 0
            if self.progress is not None:
                self.progress(self.share())
            if self.stop is not None and self.stop():
                raise DPStopped(self.result, False, self.share(), self.incumbent)

    def _slices(self, count: int):
        """Block ranges of about 2^CHECK_BITS subsets up to ``count``; the clock is asked after each."""
        per = max(1, 1 << max(0, CHECK_BITS - self.low))
        for first in range(0, count, per):
            yield first, min(count, first + per)

    def solve(self) -> DPResult:
        n = self.n
        bps = np.full(self.offset[n], -np.inf)
        for v in range(n):
            _best_parent_table(v, self.pmask, self.score, self.start, self.dbits, self.offset, self.gather,
                               self.inside, bps)
            self._check(int(self.dbits[v] + 1) << int(self.dbits[v]))
        f, sink = self._forward(bps)
        opt = float(f[(1 << n) - 1])
        if not math.isfinite(opt):          # every order leaves some variable without a family
            return DPResult(-math.inf, (), None)
        if self.bound:
            del bps
            return self._peel_optimum(f)
        self.result = DPResult(opt, self._optimal_choice(sink), None, f)
        del sink
        if not self.containing:
            return self.result
        self._check(0)
        r = self._backward(bps)
        del bps
        return DPResult(opt, self.result.choice, self._filter(f, r), f)

    def _layers(self) -> list[np.ndarray]:
        """The blocks by layer, the number of their high bits (layer 0 first), in order within each: a block
        of F needs only blocks of the layer below, a block of R only blocks of the layer above."""
        count = (1 << self.n) >> self.low
        index = np.arange(count, dtype=np.int64)
        layer = np.zeros(count, dtype=np.int64)     # of block b: the bits set in b
        for b in range(self.n - self.low):
            layer += (index >> b) & 1
        blocks = np.argsort(layer, kind="stable")
        edges = np.searchsorted(layer[blocks], np.arange(self.n - self.low + 2))
        return [blocks[lo:hi] for lo, hi in zip(edges[:-1], edges[1:], strict=True)]

    def _by_layers(self, pool: DaemonThreads, layers: list[np.ndarray], run: Callable[[np.ndarray], None],
                   before: float) -> None:
        """``run`` over the ``layers`` in turn, each in slices (:meth:`_slices`) split among the threads (the
        compiled passes hold no GIL); ``steps`` goes from ``before`` to ``before`` + 1."""
        count = sum(layer.size for layer in layers)
        done = 0
        for blocks in layers:
            for first, last in self._slices(blocks.size):
                parts = [p for p in np.array_split(blocks[first:last], self.threads) if p.size]
                if len(parts) == 1:
                    run(parts[0])
                else:
                    pool.map(run, parts)
                done += last - first
                self.steps = before + done / count
                work = (last - first) * self.n << self.low
                if done < count:                # the last look comes with the next phase's first (F: once OPT
                    self._check(work)           # is known)
                else:
                    self.pending += work

    def _forward(self, bps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """F over all blocks, layer by layer from the bottom, split among ``threads`` threads; float32 and no
        sinks in bound mode."""
        full = 1 << self.n
        f = np.full(full, -np.inf, dtype=np.float32 if self.bound else np.float64)
        sink = np.full(0 if self.bound else full, -1, dtype=np.int8)

        def run(part: np.ndarray) -> None:
            _forward(self.n, self.block_bits, bps, *self.tables, f, sink, part)

        with DaemonThreads(self.threads, "bnilp-dp") as pool:
            self._by_layers(pool, self._layers(), run, 0.0)
        return f, sink

    def _backward(self, bps: np.ndarray) -> np.ndarray:
        """R over all blocks, layer by layer from the top (each block's subsets downwards), split among
        ``threads`` threads."""
        r = np.full(1 << self.n, -np.inf)

        def run(part: np.ndarray) -> None:
            _backward(self.n, self.block_bits, bps, *self.tables, r, part[::-1].copy())

        with DaemonThreads(self.threads, "bnilp-dp") as pool:
            self._by_layers(pool, self._layers()[::-1], run, 1.0)
        return r

    def _filter(self, f: np.ndarray, r: np.ndarray) -> np.ndarray:
        """The best DAG score through each family (:func:`_best_containing`), the children shared among
        ``threads`` threads (each writes its own families only)."""
        n = self.n
        best = np.full(self.score.size, -np.inf)

        def run(v: int) -> None:
            _best_containing(n, v, self.pmask, self.score, self.start, f, r, self.dbits, self.gather, best)

        children = [v for v in range(n) if self.start[v + 1] > self.start[v]]
        with DaemonThreads(self.threads, "bnilp-dp") as pool:
            for first in range(0, len(children), self.threads):
                batch = children[first:first + self.threads]
                pool.map(run, batch)
                self.steps = 2.0 + (first + len(batch)) / len(children)
                if first + len(batch) < len(children):      # after the last batch the filter is done: keep it
                    self._check(len(batch) << (n - 1))
        return best

    def _peel_optimum(self, f: np.ndarray) -> DPResult:
        """Bound mode: OPT and an optimal DAG, the best of the DAGs peeled at or above the threshold of
        :func:`solve_dp` (F32(V) − δ, or ``floor`` if higher, less the tie tolerance)."""
        upper = float(f[-1])
        margin = float(tie_tolerance(upper))        # the peeling's float sums against the exact fsum
        threshold = upper - self.n * 2.0 ** -23 * _max_abs_finite(f) - margin
        if self.floor is not None:
            threshold = max(threshold, self.floor - margin)
        peeler = Peeler(self.data, f, threshold)
        best, row = -math.inf, None
        self.incumbent = (None, upper)      # a stop before the first DAG still knows the bound
        while not peeler.done:
            rows = peeler.next_chunk()
            if rows.size:
                scores = self.data.exact_rows(rows)
                i = int(np.argmax(scores))
                if scores[i] > best:
                    best, row = float(scores[i]), rows[i]
                    self.incumbent = (tuple(sorted(int(k) for k in row)), upper)
            if not peeler.done:     # the last chunk's optimum is OPT: a stop now would throw it away
                self._check(CHECK_STEPS)
        if row is None:
            raise RuntimeError("dynamic programming (bound mode) lost its optimal DAG")
        self.result = DPResult(best, tuple(sorted(int(k) for k in row)), None, f)
        return self.result

    def _optimal_choice(self, sink: np.ndarray) -> tuple[int, ...]:
        """An optimal DAG from the sinks: each prefix's sink takes its best family that fits."""
        start, pmask = self.start, self.pmask
        choice = []
        s = (1 << self.n) - 1
        while s:
            v = int(sink[s])
            rest = s & ~(1 << v)
            for k in range(int(start[v]), int(start[v + 1])):      # families best first: the first that fits
                if pmask[k] & ~rest == 0:
                    choice.append(k)
                    break
            s = rest
        if len(choice) != self.n:
            raise RuntimeError("dynamic programming lost its optimal DAG")
        return tuple(sorted(choice))


# ---------------------------------------------------------------------------------------------------
# Enumeration: every DAG with s(G) ≥ T, each once, by peeling canonical sinks under the bound F.
# ---------------------------------------------------------------------------------------------------

@njit(cache=True, nogil=True, inline="always")
def _orphaned(n, must, rest, child_of):
    """Whether a vertex of ``must`` (those that may not be sinks of the DAG on ``rest``) has no vertex in
    ``rest`` that any family makes its child (``child_of[u]``: the children u may have): it must keep a
    child among the vertices still to be peeled, so no DAG completes the branch."""
    m = must
    u = 0
    while m != 0 and u < n:
        if (m >> u) & 1:
            if child_of[u] & rest & ~(np.int64(1) << u) == 0:
                return True
            m &= ~(np.int64(1) << u)
        u += 1
    return False


@njit(cache=True, nogil=True)
def _peel(n, pmask, score, start, f, stack_s, stack_n, stack_need, stack_v, stack_k, state, choice, out,
          max_steps, child_of):
    """Resumable depth-first peeling (see :func:`enumerate_dags`). ``state`` = [depth, written]; frame d
    holds the vertices left (S), those that must not be sinks (N), the score the DAG on S must still
    reach, and where its loop over (sink v, family k) stands. Returns after about ``max_steps`` family
    trials or when ``out`` is full (``state[1]`` rows written), so that the caller can check its
    clock, signals and caps and call again; the search is over when ``state[0]`` is −1."""
    depth = state[0]
    written = state[1]
    max_out = out.shape[0]
    steps = 0
    while depth >= 0 and steps < max_steps and written < max_out:
        s = stack_s[depth]
        nmask = stack_n[depth]
        need = stack_need[depth]
        v = stack_v[depth]
        k = stack_k[depth]
        pushed = False
        while v < n:
            vbit = np.int64(1) << v
            if (s & vbit) and not (nmask & vbit):
                rest = s ^ vbit
                bound = f[rest]
                above = rest & ~((vbit << 1) - 1)
                if k < start[v]:
                    k = start[v]
                while k < start[v + 1]:
                    steps += 1
                    kk = k
                    k += 1
                    if score[kk] + bound < need:     # families best first: no later one reaches it
                        k = start[v + 1]
                        break
                    if pmask[kk] & ~rest:
                        continue
                    n2 = (nmask | above) & ~pmask[kk]
                    if rest != 0 and n2 == rest:     # no vertex left could be the next sink
                        continue
                    if _orphaned(n, n2, rest, child_of):
                        continue
                    choice[v] = kk
                    if rest == 0:
                        for j in range(n):
                            out[written, j] = choice[j]
                        written += 1
                        if written >= max_out:
                            break
                        continue
                    stack_v[depth] = v
                    stack_k[depth] = k
                    depth += 1
                    stack_s[depth] = rest
                    stack_n[depth] = n2
                    stack_need[depth] = need - score[kk]
                    stack_v[depth] = 0
                    stack_k[depth] = 0
                    pushed = True
                    break
                if pushed or written >= max_out:
                    break
            v += 1
            k = 0
        if pushed:
            continue
        if written >= max_out:
            stack_v[depth] = v
            stack_k[depth] = k
            break
        depth -= 1
    state[0] = depth
    state[1] = written
    return steps


class Peeler:
    """Every DAG of ``data`` with score ≥ ``threshold``, each exactly once, in chunks.

    A DAG G on S has a largest sink v; G[S∖{v}] is a DAG whose vertices above v that are not parents
    of v are not sinks (else they would be sinks of G above v). Peeling that sink again and again
    writes G as one sequence of (sink, family) choices, so depth-first search over the choices meets
    each DAG once. The bound: the rest of the DAG scores at most F(S∖{v}) (:func:`solve_dp`; the
    sub-DAG on the vertices not yet peeled takes its parents among them), so a family whose score plus
    that bound is below what S must still reach ends the loop over v's families (best first). Any
    upper bound works; F need not come from the same family list (phase 2 passes the filtered one).

    ``next_chunk`` returns the next DAGs as rows of family indices (one per variable, indexed by
    variable) and runs for about ``max_steps`` family trials; ``done`` is True once all are out."""

    def __init__(self, data: _Data, forward: np.ndarray, threshold: float, chunk: int = 4096):
        n = data.n
        self.n = n
        self.pmask = np.asarray(data.pmask, dtype=np.int64)
        self.score = np.ascontiguousarray(data.score, dtype=np.float64)
        self.start = np.asarray(data.start, dtype=np.int64)
        self.f = forward
        self.stack_s = np.zeros(n + 1, dtype=np.int64)
        self.stack_n = np.zeros(n + 1, dtype=np.int64)
        self.stack_need = np.zeros(n + 1)
        self.stack_v = np.zeros(n + 1, dtype=np.int64)
        self.stack_k = np.zeros(n + 1, dtype=np.int64)
        self.stack_s[0] = (1 << n) - 1
        self.stack_need[0] = threshold
        self.state = np.zeros(2, dtype=np.int64)
        self.choice = np.zeros(n, dtype=np.int64)
        self.out = np.zeros((chunk, n), dtype=np.int64)
        self.steps = 0
        #: child_of[u]: the vertices some family lets u be a parent of (a must-not-be-sink vertex needs one)
        self.child_of = np.zeros(n, dtype=np.int64)
        child_bit = np.left_shift(np.int64(1), np.asarray(data.child, dtype=np.int64))
        for u in range(n):
            self.child_of[u] = np.bitwise_or.reduce(child_bit[(self.pmask >> u) & 1 == 1], initial=0)

    @property
    def done(self) -> bool:
        return bool(self.state[0] < 0)

    def next_chunk(self, max_steps: int = 2_000_000) -> np.ndarray:
        self.state[1] = 0
        if self.done:
            return self.out[:0]
        self.steps += _peel(self.n, self.pmask, self.score, self.start, self.f, self.stack_s, self.stack_n,
                            self.stack_need, self.stack_v, self.stack_k, self.state, self.choice, self.out,
                            max_steps, self.child_of)
        return self.out[:int(self.state[1])].copy()
