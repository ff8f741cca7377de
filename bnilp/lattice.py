"""The parent-set lattice walk, level by level and in blocks: serial, on threads, over processes (loky) or on Dask.

Each child's walk is the one of :func:`bnilp.parentsets.walk_child` (same rules, same kept sets,
same scores): parent sets of size k+1 are generated from the surviving sets of size k, but a whole
level at a time and in arrays. A parent set is a bit mask of ⌈n / 64⌉ words (any n); a
candidate Π ∪ {j} (j above Π's last parent) is generated only if every one of its k+1 subsets of
size k survived (one look-up per dropped parent in the frontier's hash table, in the compiled
:func:`_candidates`), and carries the best score of those subsets, so R1 needs no more lookups.

**Split of the work.** The coordinating process generates candidates, applies the rules that need
no counts (R2, and R5/R6 from the subsets' q⁺/c⁺, which lower-bound the candidate's) and cuts the
rest into *blocks* of whole base sets (:data:`bnilp.scores.batch.BLOCK_ELEMENTS` rows × bases at
most). A block is counted and decided in one call of :func:`evaluate_block`: counts for every
family of the block (:mod:`bnilp.scores.batch`), R5/R6/R4, the score, R1, and R3 for expansion.
Blocks of all children are independent tasks, so one variable's lattice is split as well as the
variables. With ``n_jobs > 1`` a score counted in compiled code (BIC, BDeu: the kernels release the GIL)
runs them on n_jobs − 1 threads of this process (:class:`ThreadExecutor`: no process to start, nothing
copied); any other score on a loky process pool (:func:`start_pool`, kept between runs) whose workers
read the score (and its data) once per run, from a temporary file, on their first block; with a Dask
``scheduler`` the score is sent to the cluster once, as a task of its own, and tasks name it.
The coordinator advances a child as soon as all blocks of its level are back, and
evaluates queued blocks itself while it waits (work stealing). At most
:data:`ACTIVE_CHILDREN_PER_SLOT` children per process are walked at once (one at a time serially):
each holds its frontier, which on binary data with 37 variables reaches 10⁶ sets.

**Determinism.** A family's counts and statistics are computed from its own cells in a fixed
order, whatever block it is in: they are the canonical values that :meth:`LocalScore.local` gives too
(:func:`bnilp.scores.batch.canonical_family_counts`). Where a block's statistics came another way — the
subset table's differences, or bases with required parents prepended — every set within 1e-6 (relative)
of R1's threshold is re-counted canonically in one batched call, and R1 decides and the file records that
value. So the kept sets and scores, hence the score file, do not depend on the block size, ``n_jobs``,
the scheduler or ``counts``.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import gc
import itertools
import logging
import math
import os
import pickle
import queue
import secrets
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bnilp.compiled import njit
from bnilp.errors import InputError, MissingExtraError
from bnilp.memory import keep_grown_loky_workers, usable_cores
from bnilp.parentsets import (
    Deadline,
    _tol,
    lost_workers_as_limits,
    memory_watch,
    r1_dominated,
    r2_penalty_bound,
    r3_no_superset_pays,
    r4_entropy_bound,
    r5_bdeu_bound,
    r6_bdeu_cell_bound,
)
from bnilp.scores.base import LocalScore
from bnilp.scores.batch import (
    BLOCK_ELEMENTS,
    CountContext,
    FamilyCounts,
    canonical_family_counts,
    family_counts,
    mask_hash_index,
    mask_hash_lookup,
    mask_probe,
    mask_words,
    words_hash_index,
    words_hash_lookup,
    words_of,
    words_probe,
)
from bnilp.scores.discrete import DEFAULT_ESS, BDeu, DiscreteScore
from bnilp.scores.subsets import (
    SUBSET_TABLE_MAX_PARTITION_BYTES,
    SUBSET_TABLE_MAX_SLOTS,
    SUBSET_TABLE_MAX_SUBSETS,
    SUBSET_TABLE_MAX_VARIABLES,
    SubsetTable,
    assemble,
    count_subsets,
    largest_size,
    split_prefixes,
    subset_task,
)
from bnilp.threads import (
    DaemonThreads,
    children_start_deaf_to_ctrl_c,
    deaf_to_ctrl_c,
    interrupts_where_safe,
    may_start_processes,
)

#: families per block for scores without batched counts (CG, MVP, MML: one call per family)
GENERIC_BLOCK = 512
#: at most this many candidates are generated at once per block (coordinator memory)
MAX_BLOCK_CANDIDATES = 1 << 18
#: R1 decisions this close (relative) to the threshold are taken on the one-family score
R1_RECHECK = 1e-6
#: parent indices in frontiers and blocks: a byte up to this many variables, else two
PARENT_BYTE_VARIABLES = 127
#: children walked at once per worker process (each holds its frontier; more keep workers busy)
ACTIVE_CHILDREN_PER_SLOT = 4
#: blocks waiting or running at once per worker process (generated on demand: coordinator memory)
BLOCKS_IN_FLIGHT_PER_SLOT = 8
#: tasks sent to a Dask cluster per worker thread at a time (one running, one queued); the rest wait
#: in the coordinator, which evaluates some itself under ``--scheduler local``
DASK_QUEUED_PER_THREAD = 2
#: seconds of work a Dask task carries (blocks packed by the measured pace; a task costs a few ms to schedule)
DASK_TASK_SECONDS = 0.05
#: a level's frontier statistics up to this size travel inside each task that needs them; larger ones are
#: sent to the cluster once as a task of their own (a round trip through the scheduler: ~3 ms in-process)
DASK_INLINE_FRONTIER_BYTES = 1 << 18
#: seconds a cluster given by address may take to have a worker before the run is refused ("takes no work")
DASK_WORKER_WAIT_SECONDS = 30


@dataclass(frozen=True)
class WalkSpec:
    """What a block evaluation needs to know about its child's walk (small: sent with every task)."""

    child: int
    epsilon: float
    active: frozenset[str]
    kind: str                 # "bic", "bdeu" (batched counts) or "generic"
    r_child: int = 0
    w: float = 0.0
    ess: float = DEFAULT_ESS
    #: parents in every set of this child (required arrows): the walk is the lattice of S ⊆ candidates,
    #: scoring the families S ∪ fixed; every rule then compares only sets that contain ``fixed``
    fixed: tuple[int, ...] = ()


@dataclass
class Block:
    """Candidates Π ∪ {j} of one child and level, grouped by base Π (arrays, row f = one family)."""

    size: int                  # k + 1, the size of the candidates
    bases: np.ndarray          # (nb, k) parents of the bases, sorted
    base_of: np.ndarray        # (nc,) row of each candidate's base in ``bases`` (non-decreasing)
    new: np.ndarray            # (nc,) the added parent j
    q_all: np.ndarray          # (nc,) q over all configurations
    best_subset: np.ndarray    # (nc,) best score of any proper subset
    sub_ll: np.ndarray | None = None   # (nc, k+1) LL and N·H of the subset without parent t (t = k: j)
    sub_nh: np.ndarray | None = None
    #: until :func:`materialise`: the subsets' rows (nc, k+1) in ``frontier``, the level's (ll, nh) arrays
    #: (a Dask task carries the rows only; its worker holds the frontier's arrays once per level)
    sub_rows: np.ndarray | None = None
    frontier: Any = None


def materialise(block: Block, frontier: Any = None) -> Block:
    """The block with the subsets' statistics gathered from its frontier (``frontier`` = (ll, nh) where
    the block travelled without it); a block that has them is returned as it is."""
    if block.sub_rows is not None:
        ll, nh = frontier if frontier is not None else block.frontier
        block.sub_ll, block.sub_nh = ll[block.sub_rows], nh[block.sub_rows]
        block.sub_rows = block.frontier = None
    return block


@dataclass
class BlockResult:
    """What came of a block: counts per rule, kept sets with scores, and the sets to expand."""

    scored: int
    pruned: dict[str, int]
    kept_rows: np.ndarray      # candidate rows kept, with their scores
    kept_scores: np.ndarray
    next_rows: np.ndarray      # candidate rows on the next frontier, with their statistics
    next_score: np.ndarray
    next_ll: np.ndarray
    next_nh: np.ndarray
    next_qplus: np.ndarray
    next_cplus: np.ndarray


def evaluate_block(score: LocalScore, spec: WalkSpec, block: Block) -> BlockResult:
    """Count, score and decide every candidate of ``block`` (the per-family part of the walk)."""
    nc = block.new.size
    child, eps, active = spec.child, spec.epsilon, spec.active
    pruned = {"R1": 0, "R3": 0, "R4": 0, "R5": 0, "R6": 0}
    bases = block.bases
    if spec.fixed:
        fixed = np.asarray(spec.fixed, dtype=bases.dtype)
        bases = np.concatenate((np.broadcast_to(fixed, (bases.shape[0], fixed.size)), bases), axis=1)

    def parents_of(f: int) -> tuple[int, ...]:
        return tuple(int(p) for p in bases[block.base_of[f]]) + (int(block.new[f]),)

    if spec.kind == "generic":
        scores = np.empty(nc)
        for f in range(nc):
            parents = parents_of(f)
            value = score.local(child, parents)
            if not math.isfinite(value):
                names = score.data.names
                raise InputError(f"score {score.name!r} gave {value} for {names[child]!r} "
                                 f"with parents {[names[p] for p in parents]}")
            scores[f] = value
        kept = np.ones(nc, dtype=bool)
        if "R1" in active:
            kept = ~r1_dominated(scores, block.best_subset, eps)
            pruned["R1"] = int(nc - kept.sum())
        rows = np.arange(nc)
        zeros = np.zeros(nc)
        return BlockResult(nc, pruned, np.flatnonzero(kept), scores[kept], rows, scores, zeros, zeros,
                           np.zeros(nc, dtype=np.int64), np.zeros(nc, dtype=np.int64))
    ctx = score.count_context()
    fc = _table_counts(ctx.table, spec, bases, block) if ctx.table is not None else None
    # the batched counts are the canonical values (DiscreteScore.canonical_stats) when they come from the
    # rows and the walk's own decomposition (no fixed parents prepended); else kept sets are re-counted
    canonical = fc is None and not spec.fixed
    if fc is None:
        fc = family_counts(ctx, child, bases, block.base_of, block.new, block.q_all,
                           spec.ess if spec.kind == "bdeu" else None)
    alive = np.ones(nc, dtype=bool)
    r_c = spec.r_child
    if "R5" in active:
        fire = alive & r5_bdeu_bound(fc.q_plus, r_c, block.best_subset, eps)
        pruned["R5"] += int(fire.sum())
        alive &= ~fire
    if "R6" in active:
        fire = alive & r6_bdeu_cell_bound(fc.c_plus, r_c, block.best_subset, eps)
        pruned["R6"] += int(fire.sum())
        alive &= ~fire
    if "R4" in active and block.size > 0:
        fire = np.zeros(nc, dtype=bool)
        sub_r = ctx.arities[np.concatenate((block.bases[block.base_of], block.new[:, None]), axis=1)]
        for t in range(block.size):   # the subset without parent t has q = q_all / r_t (exact: integers)
            fire |= r4_entropy_bound(-block.sub_ll[:, t], fc.nh - block.sub_nh[:, t], spec.w, r_c,
                                     block.q_all / sub_r[:, t], sub_r[:, t], eps)
        fire &= alive
        pruned["R4"] += int(fire.sum())
        alive &= ~fire
    prior = score.prior.log_prior(block.size + len(spec.fixed))
    fast = _family_scores(spec, fc, block.q_all, prior)
    exact = np.full(nc, np.nan)
    if "R1" in active:
        threshold = block.best_subset - eps - _tol(block.best_subset)
        margin = R1_RECHECK * np.maximum(1.0, np.abs(threshold))
        check = alive & (fast >= threshold - margin)
    else:
        check = alive
    if canonical:
        exact[check] = fast[check]
    elif check.any():
        exact[check] = _recount(ctx, spec, np.concatenate((bases[block.base_of[check]], block.new[check, None]),
                                                          axis=1), prior)
    kept = check.copy()
    if "R1" in active:
        kept &= ~r1_dominated(exact, block.best_subset, eps)
        pruned["R1"] = int(alive.sum() - kept.sum())
    value = np.where(np.isnan(exact), fast, exact)
    expand = alive.copy()
    if "R3" in active:
        fire = alive & r3_no_superset_pays(fc.ll, spec.w, r_c, block.q_all, eps)
        pruned["R3"] += int(fire.sum())
        expand &= ~fire
    nxt = np.flatnonzero(expand)
    kept_rows = np.flatnonzero(kept)
    if not np.isfinite(exact[kept_rows]).all():       # a score past float range (a huge --penalty-discount)
        f = int(kept_rows[~np.isfinite(exact[kept_rows])][0])
        names = score.data.names
        raise InputError(f"score {score.name!r} gave {exact[f]} for {names[child]!r} with parents "
                         f"{[names[p] for p in parents_of(f)]}")
    return BlockResult(int(alive.sum()), pruned, kept_rows, exact[kept_rows], nxt, value[nxt], fc.ll[nxt],
                       fc.nh[nxt], fc.q_plus[nxt], fc.c_plus[nxt])


def _recount(ctx: CountContext, spec: WalkSpec, families: np.ndarray, prior: float) -> np.ndarray:
    """Canonical scores (:meth:`DiscreteScore.canonical_stats`) of ``families`` (rows of parents, any order)
    of ``spec.child``, in one batched count: the values written for sets whose block statistics came from
    the subset table or had fixed parents prepended."""
    fc, q_all = canonical_family_counts(ctx, spec.child, np.sort(families, axis=1),
                                        spec.ess if spec.kind == "bdeu" else None)
    return _family_scores(spec, fc, q_all, prior)


def _family_scores(spec: WalkSpec, fc: FamilyCounts, q_all: np.ndarray, prior: float) -> np.ndarray:
    """Scores from a block's statistics: BDeu's sum, or BIC's LL − w·q_Π·(r_i − 1), plus the structure prior
    — in the floating-point order of :meth:`DiscreteScore.canonical_stats`, so canonical statistics give
    bit-identical scores."""
    if spec.kind == "bdeu":
        return fc.bdeu + prior
    return fc.ll - spec.w * q_all * (spec.r_child - 1) + prior


def _table_counts(table: SubsetTable, spec: WalkSpec, bases: np.ndarray, block: Block) -> FamilyCounts | None:
    """The block's family statistics from the subset table (None if a family's subsets are not in it)."""
    found = table.family_rows(bases, block.base_of, block.new, spec.child)
    if found is None:
        return None
    ll, nh, q_plus, c_plus, bdeu = table.family_stats(*found)
    return FamilyCounts(ll, nh, q_plus, c_plus, bdeu if spec.kind == "bdeu" else None)


# --------------------------------------------------------------------------------------------------
# the coordinator: one state per child


@njit(cache=True, nogil=True, inline="always")
def _candidate_arrays(parents, lo, hi, cand, closed, group_end):
    """Room for every candidate of the frontier rows lo..hi−1 not ``closed`` (the arrays :func:`_candidates`
    returns): one per later row of its prefix group (one per candidate parent on level 0)."""
    k = parents.shape[1]
    total = 0
    for b in range(lo, hi):
        if not closed[b]:
            total += cand.size if k == 0 else group_end[b] - b - 1
    return (np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64), np.empty((total, k + 1), dtype=np.int64),
            np.empty(total), np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64))


@njit(cache=True, nogil=True, inline="always")
def _take(out, m, b, lo, j, best, qplus, cplus):
    """Record candidate m (base row b, new parent j; its subsets' rows already in ``out[2][m]``)."""
    base_local, new, sub_rows, best_subset, qplus_max, cplus_max = out
    k = sub_rows.shape[1] - 1
    sub_rows[m, k] = b
    bs, qp, cp = best[b], qplus[b], cplus[b]
    for t in range(k):
        r = sub_rows[m, t]
        bs, qp, cp = max(bs, best[r]), max(qp, qplus[r]), max(cp, cplus[r])
    base_local[m], new[m], best_subset[m], qplus_max[m], cplus_max[m] = b - lo, j, bs, qp, cp


@njit(cache=True, nogil=True, inline="always")
def _take_each(out, m, b, lo, cand, best, qplus, cplus):
    """Record Π ∪ {j} for every j of ``cand`` (Π the empty set: level 0 has no subsets to look up); the next m."""
    for j in cand:
        _take(out, m, b, lo, j, best, qplus, cplus)
        m += 1
    return m


@njit(cache=True, nogil=True)
def _candidates(parents, masks, keys, rows, bits, best, qplus, cplus, lo, hi, cand, closed, group_end):
    """Candidates Π ∪ {j} (j in ``cand`` above Π's last parent) of the frontier rows lo..hi−1 not ``closed``
    whose every k-subset is in the frontier: (base row − lo, j, rows of the k+1 subsets (t = k: Π itself),
    best score, largest q⁺ and c⁺ over the subsets). One-word masks (n ≤ 64): ``masks`` (m,) uint64, ``keys,
    rows, bits`` their table (:func:`bnilp.scores.batch.mask_hash_index`); :func:`_candidates_words` past 64.

    The j come from Π's prefix group (Agrawal & Srikant 1994, Apriori's join): the subset without Π's last
    parent is (p₁ … p_{k−1}, j), a later row of the frontier that shares Π's first k − 1 parents (rows are in
    lexicographic order, ``group_end`` (:func:`_prefix_group_ends`) ends each group), so only those j are tried
    and only the k − 1 other subsets are looked up."""
    k = parents.shape[1]
    out = _candidate_arrays(parents, lo, hi, cand, closed, group_end)
    sub_rows = out[2]
    m = 0
    for b in range(lo, hi):
        if closed[b]:
            continue
        if k == 0:
            m = _take_each(out, m, b, lo, cand, best, qplus, cplus)
            continue
        for sibling in range(b + 1, group_end[b]):
            j = parents[sibling, k - 1]
            mask = masks[b] | (np.uint64(1) << np.uint64(j))
            ok = True
            for t in range(k - 1):
                found = mask_probe(keys, rows, bits, mask ^ (np.uint64(1) << np.uint64(parents[b, t])))
                if found < 0:
                    ok = False
                    break
                sub_rows[m, t] = found
            if ok:
                sub_rows[m, k - 1] = sibling
                _take(out, m, b, lo, j, best, qplus, cplus)
                m += 1
    return out[0][:m], out[1][:m], out[2][:m], out[3][:m], out[4][:m], out[5][:m]


@njit(cache=True, nogil=True)
def _candidates_words(parents, masks, keys, rows, bits, best, qplus, cplus, lo, hi, cand, closed, group_end):
    """:func:`_candidates` for masks of W > 1 words (n > 64): ``masks`` (m, W) uint64, variable v bit v mod 64 of
    word v // 64, ``keys, rows, bits`` their table (:func:`bnilp.scores.batch.words_hash_build`)."""
    k = parents.shape[1]
    out = _candidate_arrays(parents, lo, hi, cand, closed, group_end)
    sub_rows = out[2]
    query = np.empty(masks.shape[1], dtype=np.uint64)
    m = 0
    for b in range(lo, hi):
        if closed[b]:
            continue
        if k == 0:
            m = _take_each(out, m, b, lo, cand, best, qplus, cplus)
            continue
        for sibling in range(b + 1, group_end[b]):
            j = np.int64(parents[sibling, k - 1])
            query[:] = masks[b]
            query[j >> 6] |= np.uint64(1) << np.uint64(j & 63)
            ok = True
            for t in range(k - 1):
                p = np.int64(parents[b, t])
                flip = np.uint64(1) << np.uint64(p & 63)
                query[p >> 6] ^= flip
                found = words_probe(keys, rows, bits, query)
                query[p >> 6] ^= flip
                if found < 0:
                    ok = False
                    break
                sub_rows[m, t] = found
            if ok:
                sub_rows[m, k - 1] = sibling
                _take(out, m, b, lo, j, best, qplus, cplus)
                m += 1
    return out[0][:m], out[1][:m], out[2][:m], out[3][:m], out[4][:m], out[5][:m]


def _prefix_group_ends(parents: np.ndarray) -> np.ndarray:
    """For each row of a frontier (m, k) in lexicographic order, the end (exclusive) of its run of rows that share
    its first k − 1 parents (all rows when k ≤ 1)."""
    m, k = parents.shape
    if k <= 1:
        return np.full(m, m, dtype=np.int64)
    change = np.any(parents[1:, : k - 1] != parents[:-1, : k - 1], axis=1)
    ends = np.append(np.flatnonzero(change) + 1, m)
    return ends[np.concatenate(([0], np.cumsum(change)))].astype(np.int64)


def _count_free_pruned(spec: WalkSpec, q_all: np.ndarray, best_subset: np.ndarray, qplus: np.ndarray,
                       cplus: np.ndarray, pruned: dict[str, int] | None = None,
                       weights: np.ndarray | None = None) -> np.ndarray:
    """Which candidates the rules that need no counts prune before they are counted: R2 from q, R5 from q⁺,
    R6 from c⁺ (the candidate's own q, and the largest q⁺ and c⁺ of its subsets, which lower-bound its own),
    each against ``best_subset``; ``pruned`` (a walk's counts) adds each rule's firings (R2's first), each
    weighing ``weights`` (default 1)."""
    fired = np.zeros(np.shape(q_all), dtype=bool)
    if spec.kind == "generic":
        return fired

    def apply(rule: str, fire: np.ndarray) -> None:
        fire &= ~fired
        if pruned is not None:
            pruned[rule] += int(fire.sum() if weights is None else weights[fire].sum())
        fired[fire] = True

    r_c, eps = spec.r_child, spec.epsilon
    if "R2" in spec.active:
        apply("R2", r2_penalty_bound(spec.w * q_all * (r_c - 1), best_subset, eps))
    if "R5" in spec.active:
        apply("R5", r5_bdeu_bound(qplus, r_c, best_subset, eps))
    if "R6" in spec.active:
        apply("R6", r6_bdeu_cell_bound(cplus, r_c, best_subset, eps))
    return fired


def _runs(sorted_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values, index of each element's value) of a non-decreasing array."""
    if sorted_values.size == 0:
        return sorted_values, np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.diff(sorted_values)) + 1
    rank = np.zeros(sorted_values.size, dtype=np.int64)
    rank[starts] = 1
    return sorted_values[np.concatenate(([0], starts))], np.cumsum(rank)




@dataclass
class _Level:
    """A frontier: the surviving parent sets of one size, in lexicographic order, with their statistics."""

    parents: np.ndarray        # (m, k) int8 (int16 past PARENT_BYTE_VARIABLES variables)
    masks: np.ndarray          # (m, W) uint64: :func:`bnilp.scores.batch.words_of` of ``parents``
    best: np.ndarray           # best score over the set and its subsets
    ll: np.ndarray
    q: np.ndarray
    nh: np.ndarray
    qplus: np.ndarray
    cplus: np.ndarray
    stats: tuple = field(init=False)
    _bits: int = field(init=False)
    _keys: np.ndarray = field(init=False)
    _rows: np.ndarray = field(init=False)
    probe_masks: np.ndarray = field(init=False)     # what :func:`_candidates` (or ``_candidates_words``) takes
    group_end: np.ndarray = field(init=False)       # :func:`_prefix_group_ends`

    def __post_init__(self) -> None:
        self.stats = (self.ll, self.nh)      # what a block's subsets need; one object per level
        self.group_end = _prefix_group_ends(self.parents)
        if self.masks.shape[1] == 1:         # one word (n ≤ 64): the plain masks' table, :func:`_candidates`
            self.probe_masks = np.ascontiguousarray(self.masks[:, 0])
            self._keys, self._rows, self._bits = mask_hash_index(self.probe_masks)
        else:
            self.probe_masks = self.masks
            self._keys, self._rows, self._bits = words_hash_index(self.masks)

    @property
    def size(self) -> int:
        return int(self.masks.shape[0])

    def lookup(self, masks: np.ndarray) -> np.ndarray:
        """Rows of the (q, W) ``masks`` in the frontier (−1 where absent)."""
        masks = np.ascontiguousarray(masks, dtype=np.uint64)
        if masks.shape[1] == 1:
            return mask_hash_lookup(self._keys, self._rows, self._bits, np.ascontiguousarray(masks[:, 0]))
        return words_hash_lookup(self._keys, self._rows, self._bits, masks)


class _ChildWalk:
    """One child's walk: generates blocks of a level, takes back their results, builds the next level."""

    def __init__(self, score: LocalScore, spec: WalkSpec, candidates: list[int], palim: int | None, stats: Any,
                 max_unpruned: int) -> None:
        self.score, self.spec, self.palim, self.stats = score, spec, palim, stats
        self.candidates = np.asarray(candidates, dtype=np.int64)
        self.arities = np.asarray(score.data.arities, dtype=np.int64)
        self.words = mask_words(score.data.n)
        self.parent_dtype = np.int8 if score.data.n <= PARENT_BYTE_VARIABLES else np.int16
        self.kept: dict[tuple[int, ...], float] = {}
        self.max_unpruned = max_unpruned
        self.t0 = 0.0
        self.size = 0
        self.level: _Level | None = None
        self._closed = np.zeros(0, dtype=bool)     # the level's rows whose candidates are all pruned unseen
        self.done = False

    # ---- level 0
    def start(self) -> None:
        self.t0 = time.perf_counter()
        score, child, fixed = self.score, self.spec.child, self.spec.fixed
        q_fixed = float(np.prod(self.arities[list(fixed)])) if fixed else 1.0
        if self.spec.kind == "generic":
            value = score.local(child, fixed)
            if not math.isfinite(value):
                raise InputError(f"score {score.name!r} gave {value} for {score.data.names[child]!r} "
                                 f"with parents {[score.data.names[p] for p in fixed]}")
            ll = nh = 0.0
            cplus = qplus = 0
        else:
            fam = score.canonical_stats(child, fixed)
            value, ll, nh, cplus, qplus = fam.score, fam.ll, fam.nh, fam.c_plus, fam.q_plus
            if not math.isfinite(value):
                raise InputError(f"score {score.name!r} gave {value} for {score.data.names[child]!r} "
                                 f"with parents {[score.data.names[p] for p in fixed]}")
        self.stats.scored += 1
        self.kept[fixed] = value
        if "R3" in self.spec.active and r3_no_superset_pays(ll, self.spec.w, self.spec.r_child, q_fixed,
                                                              self.spec.epsilon):
            self.stats.pruned["R3"] += 1
            self.level = None
            return
        self.level = _Level(np.zeros((1, 0), dtype=self.parent_dtype), np.zeros((1, self.words), dtype=np.uint64),
                            np.array([value]),
                            np.array([ll]), np.array([q_fixed]), np.array([nh]), np.array([max(qplus, 1)]),
                            np.array([cplus]))

    # ---- generation
    def begin_level(self) -> bool:
        """Prepare the next level's generation; False (and the walk finished) when there is none."""
        level = self.level
        if level is None or level.size == 0:
            self._finish()
            return False
        k = level.parents.shape[1]
        self.size = k + 1
        if self.palim is not None and k + len(self.spec.fixed) >= self.palim:
            tally = dict.fromkeys(self.stats.pruned, 0)
            self._closed = self._bases_pruned_whole(tally)
            self.stats.palim_reached = self._any_candidate(tally)
            if not self.stats.palim_reached:    # the walk without the palim ends here too, after these prunings:
                for rule, count in tally.items():   # the same tallies (a palim that cuts nothing changes nothing)
                    self.stats.pruned[rule] += count
            self._finish()
            return False
        self._closed = self._bases_pruned_whole(self.stats.pruned)
        n_rows = getattr(self.score, "n_rows", 1)
        if self.spec.kind == "generic":
            self._bases_per_block = max(1, GENERIC_BLOCK // max(1, self.candidates.size))
        elif self.score.count_context().table is not None:   # look-ups, not passes over the rows:
            # blocks by candidates
            self._bases_per_block = max(1, MAX_BLOCK_CANDIDATES // max(1, self.candidates.size))
        else:
            self._bases_per_block = max(1, BLOCK_ELEMENTS // max(1, n_rows))
        self._next_base = 0
        return True

    def _any_candidate(self, pruned: dict[str, int]) -> bool:
        """Whether the next level would score any set: a candidate whose subsets all survived and that
        the count-free rules (R2, R5, R6) let through — the sets a palim here leaves unscored. Generated
        a slice of bases at a time, stopping at the first survivor; the rules' firings are added to ``pruned``
        (complete when the answer is False: every candidate was generated and pruned). The slices start at one
        base and double up to a block's worth: a survivor is usually among the first bases, and a whole block
        first (262 bases of 1,000 candidates) was 65 % of a palim-1 walk over 1,000 variables."""
        most = max(1, MAX_BLOCK_CANDIDATES // max(1, self.candidates.size))
        lo, step = 0, 1
        while lo < self.level.size:
            hi = min(self.level.size, lo + step)
            if not self._closed[lo:hi].all() and self._generate(lo, hi, pruned):
                return True
            lo, step = hi, min(2 * step, most)
        return False

    def _bases_pruned_whole(self, pruned: dict[str, int] | None = None) -> np.ndarray:
        """Frontier rows all of whose candidates the count-free rules prune, read from the row alone: a
        candidate Π ∪ {j} has q = q_Π·r_j ≥ q_Π·min r, a best subset score ≥ Π's own best, and q⁺, c⁺ ≥ Π's
        (its largest over its subsets), and each rule fires the more readily the larger these are (R2, R5,
        R6: :mod:`bnilp.parentsets`). Their candidates are not generated: on wide data a level is often closed
        whole — 200 binary variables, 50 rows, size 4: up to 64 M candidates a child, each with its subsets
        looked up, all pruned by R2. ``pruned`` (a walk's tallies) adds to the rule that closes a row all its
        extensions Π ∪ {j}, j above Π's last parent — the sets the rule rules out, some of which a pruned
        subset would have kept from being generated anyway."""
        level = self.level
        if self.candidates.size == 0:
            return np.ones(level.size, dtype=bool)
        q_least = level.q * self.arities[self.candidates].min()
        last = level.parents[:, -1] if level.parents.shape[1] else np.full(level.size, -1)
        extensions = self.candidates.size - np.searchsorted(self.candidates, last, side="right")
        return _count_free_pruned(self.spec, q_least, level.best, level.qplus, level.cplus, pruned, extensions)

    def more_blocks(self) -> list[Block] | None:
        """The blocks of the level's next bases (possibly none: all pruned), None once all were generated.
        Generated on demand, so only the blocks in flight are held (not a whole level of them)."""
        level = self.level
        lo = self._next_base
        if lo >= level.size:
            return None
        hi = min(level.size, lo + self._bases_per_block)
        self._next_base = hi
        return self._generate(lo, hi, self.stats.pruned)

    def _generate(self, lo: int, hi: int, pruned: dict[str, int]) -> list[Block]:
        """The blocks of the candidates of frontier rows lo..hi−1 (but the closed ones) that R2, R5, R6 let
        through (their prunings added to ``pruned``)."""
        level, spec = self.level, self.spec
        k = level.parents.shape[1]
        base_parents = level.parents[lo:hi]
        base_local, new, sub_rows, best_subset, qplus_max, cplus_max = (
            _candidates if self.words == 1 else _candidates_words)(
            level.parents, level.probe_masks, level._keys, level._rows, level._bits, level.best, level.qplus,
            level.cplus, lo, hi, self.candidates, self._closed, level.group_end)
        if new.size == 0:
            return []
        q_all = level.q[sub_rows[:, k]] * self.arities[new]
        keep = ~_count_free_pruned(spec, q_all, best_subset, qplus_max, cplus_max, pruned)
        sub_rows, base_local, new, best_subset, q_all = (sub_rows[keep], base_local[keep], new[keep],
                                                         best_subset[keep], q_all[keep])
        if new.size == 0:
            return []
        out = []
        for a in range(0, new.size, MAX_BLOCK_CANDIDATES):
            b = min(new.size, a + MAX_BLOCK_CANDIDATES)
            used, bo = _runs(base_local[a:b])    # base_local is non-decreasing
            block = Block(self.size, base_parents[used], bo, new[a:b], q_all[a:b], best_subset[a:b])
            if spec.kind != "generic":
                block.sub_rows, block.frontier = sub_rows[a:b].astype(np.int32), level.stats
            out.append(block)
        return out

    # ---- results
    def absorb(self, blocks: Sequence[Block], results: Sequence[BlockResult]) -> None:
        """All results of the current level are back: record kept sets and build the next frontier."""
        parents, masks, best, ll, q, nh, qplus, cplus = [], [], [], [], [], [], [], []
        for block, res in zip(blocks, results, strict=True):
            self.stats.scored += res.scored
            for rule, count in res.pruned.items():
                self.stats.pruned[rule] += count
            full = np.concatenate((block.bases[block.base_of], block.new[:, None]), axis=1)
            fixed = self.spec.fixed
            for row, value in zip(res.kept_rows.tolist(), res.kept_scores.tolist(), strict=True):
                key = tuple(full[row].tolist())
                self.kept[tuple(sorted(fixed + key)) if fixed else key] = value
            if res.kept_rows.size:
                self.stats.max_size = self.size + len(self.spec.fixed)
            rows = res.next_rows
            nxt = full[rows].astype(self.parent_dtype)
            parents.append(nxt)
            masks.append(words_of(nxt, self.words))
            best.append(np.maximum(res.next_score, block.best_subset[rows]))
            ll.append(res.next_ll)
            q.append(block.q_all[rows])
            nh.append(res.next_nh)
            qplus.append(res.next_qplus)
            cplus.append(res.next_cplus)
        if not parents:
            self.level = None
        else:
            self.level = _Level(np.concatenate(parents), np.concatenate(masks), np.concatenate(best),
                                np.concatenate(ll), np.concatenate(q), np.concatenate(nh), np.concatenate(qplus),
                                np.concatenate(cplus))
        if not self.spec.active and self.palim is None and len(self.kept) > self.max_unpruned:
            raise InputError(f"prune=False (--no-prune) without palim (--palim): more than {self.max_unpruned} "
                             f"parent sets for {self.score.data.names[self.spec.child]!r}; give --palim")

    def _finish(self) -> None:
        self.done = True
        self.level = None
        self.stats.kept = len(self.kept)
        self.stats.seconds = time.perf_counter() - self.t0
        self.stats.finished = True

    def note_level(self) -> None:
        """The running walk's progress after a level came back: its size, the next frontier, the time so far."""
        self.stats.level = self.size + len(self.spec.fixed)
        self.stats.frontier = 0 if self.level is None else int(self.level.size)
        self.stats.kept = len(self.kept)
        self.stats.seconds = time.perf_counter() - self.t0


# --------------------------------------------------------------------------------------------------
# executors


class _Done:
    """A finished 'future' for the serial executor."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def result(self) -> Any:
        return self.value

    def done(self) -> bool:
        return True


class SerialExecutor:
    slots = 1

    def __init__(self, score: LocalScore) -> None:
        self.score = score

    def submit(self, spec: WalkSpec, block: Block) -> _Done:
        return _Done(evaluate_block(self.score, spec, materialise(block)))

    def map_tasks(self, fn: Callable[..., Any], tasks: list, *args: Any, check: Callable[[int], None] | None = None
                  ) -> list:
        """``fn(score, task, *args)`` for each task, in order; ``check(i)`` (if any) once task i is done."""
        out = []
        for i, task in enumerate(tasks):
            out.append(fn(self.score, task, *args))
            if check is not None:
                check(i)
        return out

    def wait_any(self, futures: list) -> None:
        return None

    def close(self) -> None:
        return None


#: a worker's score: (token of the run, the score); read on the first block of a run
_WORKER_SCORE: tuple[str, LocalScore] | None = None
_POOL: Any = None
#: the walks using the pool now (:class:`LokyExecutor` objects, until closed or collected): a pool in use is shared
#: whatever its size, never replaced (a thread that asked another size shut it down under another's run: loky's
#: "cannot schedule new futures after shutdown"; a review)
_POOL_USERS: weakref.WeakSet = weakref.WeakSet()
#: start, replacement and use-registration of the pool, one thread at a time
_POOL_LOCK = threading.RLock()
#: how long :func:`stop_pool_before_exit` waits for the task queue's feeder thread to end (it sends no more than
#: the shutdown's few sentinels; a wait past this leaves the process's exit to loky as before)
FEEDER_JOIN_SECONDS = 2.0
#: idle seconds after which the pool's workers exit (a later run in the same process reuses a live pool)
POOL_IDLE_TIMEOUT = 30


def _init_worker(own_process: bool = True) -> None:
    """A new worker: the compiled kernels loaded (from numba's cache) while the coordinator reads the data or
    generates the first blocks; in a process of its own (``own_process``), one thread for BLAS. A worker thread
    in the caller's process (``--scheduler local`` with BIC or BDeu) leaves the process's environment and loky's
    settings as they are: it set OPENBLAS/MKL/OMP_NUM_THREADS=1 for every program the caller started later (a
    review)."""
    if own_process:
        for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
            os.environ.setdefault(var, "1")
        keep_grown_loky_workers()      # it grows by design when it reads a run's score; a restart reads it again
    columns = np.zeros((2, 2), dtype=np.int32)
    ctx = CountContext(columns, np.ones(2), np.array([2, 2], dtype=np.int64), 2,
                       np.array([0.0, 0.0, 2.0 * math.log(2.0)]))
    family_counts(ctx, 0, np.zeros((1, 0), dtype=np.int64), np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.int64),
                  np.array([2.0]))


def _init_local_dask_worker(coordinator: int) -> None:
    """:func:`_init_worker` on a worker of :func:`start_local_cluster`; in a worker process of its own (not
    the ``coordinator``'s threads), Ctrl-C is ignored too. A terminal sends SIGINT to its whole foreground
    process group, workers included: the coordinator takes it — the run stops, exit 130, and the cluster is
    closed — while a worker that took it cancelled its event loop and printed its tracebacks after "bnilp:
    interrupted". Nor does it warn when a block it runs is cancelled (the coordinator cancels what is left
    when a run stops early). (Run in the worker's event loop, which is its main thread; a cluster given by
    address is the user's and is left as it is.)"""
    _init_worker(own_process=os.getpid() != coordinator)
    if os.getpid() != coordinator and threading.current_thread() is threading.main_thread():
        deaf_to_ctrl_c()
        logging.getLogger("distributed.worker.state_machine").setLevel(logging.ERROR)


def _worker_block(run: tuple[str, str], spec: WalkSpec, block: Block) -> BlockResult:
    """Evaluate ``block`` with the score of ``run`` = (file, random token of the run): read from the file
    on the run's first block in this worker (the token, not the path, tells runs apart: a path can be
    reused once its file is removed)."""
    return evaluate_block(_worker_score(run), spec, block)


def _worker_score(run: tuple[str, str]) -> LocalScore:
    """This worker's score of ``run``, read from its file on the run's first task here."""
    global _WORKER_SCORE
    if _WORKER_SCORE is None or _WORKER_SCORE[0] != run[1]:
        with open(run[0], "rb") as fh:
            _WORKER_SCORE = (run[1], pickle.load(fh))
    return _WORKER_SCORE[1]


def _worker_task(run: tuple[str, str], fn: Callable[..., Any], task: Any, *args: Any):
    """One table task ``fn(score, task, *args)`` (:meth:`_PoolExecutor.map_tasks`) with the score of ``run``."""
    return fn(_worker_score(run), task, *args)


def _noop() -> None:
    return None


def start_pool(n_jobs: int, user: Any = None):
    """The loky pool of ``n_jobs`` − 1 worker processes for :func:`run_walks`, started now if it is not
    running (its workers then start and load the kernels in the background); ``user`` (an executor) is recorded as
    using it until :func:`release_pool`. A pool another call uses is shared as it is, whatever its size (the number
    of processes changes no result), and replaced by one of the size asked for only once no call uses it. Call it
    early — the command line does, before reading the data — so that the workers' start overlaps other work; a
    later run with the same ``n_jobs`` in this process reuses the pool while it lives (its idle workers exit
    after :data:`POOL_IDLE_TIMEOUT` seconds and come back on demand). bnilp's own executor, not loky's
    process-wide reusable one: joblib's default backend takes that one over, and after a bnilp run every
    ``joblib.Parallel(n_jobs=2)`` of the process (scikit-learn's too) failed, ``'_ReusablePoolExecutor' object has
    no attribute '_temp_folder_manager'`` (a review's find)."""
    from joblib.externals.loky import ProcessPoolExecutor

    global _POOL
    workers = max(1, n_jobs - 1)
    with _POOL_LOCK:
        if _POOL is not None and (_POOL._flags.broken or _POOL._flags.shutdown
                                  or (_POOL._max_workers != workers and not _POOL_USERS)):
            _POOL.shutdown(wait=False, kill_workers=bool(_POOL._flags.broken))
            _POOL = None
        with children_start_deaf_to_ctrl_c():   # the pool's resource tracker, started here, too
            if _POOL is None:
                _POOL = ProcessPoolExecutor(max_workers=workers, initializer=_init_loky_worker,
                                            timeout=POOL_IDLE_TIMEOUT)
            _POOL.submit(_noop)   # workers are spawned on the first task
        if user is not None:
            _POOL_USERS.add(user)
        return _POOL


def release_pool(user: Any) -> None:
    """``user`` no longer uses the pool of :func:`start_pool` (the pool stays for a later run)."""
    with _POOL_LOCK:
        _POOL_USERS.discard(user)


def stop_pool() -> None:
    """Shut down the pool of :func:`start_pool` now (its workers exit; the next run starts a new one)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is not None:
            _POOL.shutdown(wait=True)
            _POOL = None


@atexit.register
def stop_pool_before_exit() -> None:
    """The pool's workers ended, a block they still run (after an interrupt) dropped: at the interpreter's exit,
    before it tears its modules down (loky's own clean-up of a pool still alive then printed "Exception ignored in
    … weakref_cb … 'NoneType' object has no attribute 'debug'"), and by the command line once a run is complete,
    before its exit (a signal that ended the exit at once with the pool alive left loky's semaphores registered:
    its resource tracker warned of "leaked semlock objects"; the pool's queues are collected here, which
    unregisters their semaphores — past the shutdown alone three still warned). The task queue's feeder thread
    holds two of them until it ends, and loky's shutdown does not wait for it (a queue's own process is not made
    to): it is joined here, for at most :data:`FEEDER_JOIN_SECONDS` (without, 4 exits in 30 still warned)."""
    global _POOL
    if _POOL is not None:
        feeder = getattr(getattr(_POOL, "_call_queue", None), "_thread", None)
        workers = list(getattr(_POOL, "_processes", {}).values())
        _unblock_cancelled_work(_POOL)
        with contextlib.suppress(Exception):
            _POOL.shutdown(wait=True, kill_workers=True)
        for worker in workers:            # none should be left; one that is would hold the exit for a minute
            if worker.is_alive():
                with contextlib.suppress(Exception):
                    worker.kill()
                    worker.join(FEEDER_JOIN_SECONDS)
        _POOL = None
        if feeder is not None:
            feeder.join(FEEDER_JOIN_SECONDS)
        del feeder
        gc.collect()


def _unblock_cancelled_work(pool: Any) -> None:
    """Before a shutdown that kills the workers: the pool's pending work items whose futures the run cancelled
    (blocks and table tasks left when a deadline or an error stopped it) get a fresh future instead. loky's
    manager thread sets an exception on every pending item's future then; on a cancelled one that raised
    ``InvalidStateError: CANCELLED`` and ended the thread before it killed the workers and closed its queues — a
    traceback after the run's last line and, at exit, a wait of about a minute for the live workers
    (``--score-time-limit`` under ``--jobs 2``, half the runs; two reviews' finds). Nobody reads the new futures.
    (Removing the items instead raced the thread's own look-ups: ``KeyError``.)

    And the ids of the items not yet handed to a worker are taken off the pool's id queue: the shutdown pops every
    pending item and then tops up the workers' queue once more, and where that queue had room (a worker had just
    taken its next call; under load, the CI's one failure) it looked up an id whose item was gone — ``KeyError`` in
    loky's thread, a traceback after the run's last line. The items stay pending, and the shutdown fails them."""
    pending = getattr(pool, "_pending_work_items", None)
    if isinstance(pending, dict):
        for item in list(pending.values()):
            future = getattr(item, "future", None)
            if future is not None and future.cancelled():
                item.future = concurrent.futures.Future()
    ids = getattr(pool, "_work_ids", None)
    if ids is not None:
        with contextlib.suppress(queue.Empty):
            while True:
                ids.get_nowait()


def _init_loky_worker() -> None:
    """A worker of :func:`start_pool`: Ctrl-C ignored — a terminal sends SIGINT to its whole foreground process
    group, and a worker that took it printed its own ``KeyboardInterrupt`` traceback after "bnilp: interrupted"
    (and was lost to the pool); the coordinator stops the run — then :func:`_init_worker`."""
    deaf_to_ctrl_c()
    _init_worker()


_LOCAL_DASK: dict[str, Any] = {}
#: the walks using this process's local cluster now (:class:`DaskExecutor` objects, until closed or collected)
_LOCAL_DASK_USERS: weakref.WeakSet = weakref.WeakSet()
#: start and stop of the local cluster, one thread at a time (two starting at once left one cluster untracked)
_LOCAL_DASK_LOCK = threading.RLock()


def connect_dask(scheduler: str, n_jobs: int, processes: bool) -> tuple[Any, bool]:
    """(Dask client for ``--scheduler``, whether it is this process's shared LocalCluster): ``local`` is
    :func:`start_local_cluster` with ``n_jobs`` − 1 workers (all cores but one for −1, at least one), kept
    for later runs; an address is a new client, which the caller closes. An address that cannot be parsed
    or reached is an :class:`InputError` naming it."""
    if scheduler == "local":
        processes_wanted = n_jobs if n_jobs > 1 else usable_cores()
        return start_local_cluster(max(processes_wanted - 1, 1), processes), True
    try:
        from dask.distributed import Client
    except ImportError:
        raise MissingExtraError("scheduler (--scheduler)", "dask") from None
    for name, noise in (("distributed.client", _no_reconnect_failure),    # a lost scheduler is said in bnilp's
                        ("distributed.batched", _no_batched_comm_closed)):  # own line (DaskExecutor._connected)
        log = logging.getLogger(name)
        if noise not in log.filters:
            log.addFilter(noise)
    return _connected_client(Client, scheduler), False


#: seconds a ``--scheduler`` address has to answer as a Dask scheduler: the connection and the handshake
SCHEDULER_CONNECT_SECONDS = 30


def _connected_client(client_class: Any, scheduler: str) -> Any:
    """A client of the Dask scheduler at ``scheduler``, connected within :data:`SCHEDULER_CONNECT_SECONDS`, else an
    :class:`InputError` naming the address. distributed bounds the connection only: at a port where something
    else listens its handshake waited for ever (an HTTP server, a dashboard's port) or read the other side's
    greeting as a frame length and failed allocating exabytes (an SSH server) — which the scoring reported as
    "the process's memory is capped", exit 3 (a review). So the client is made on a thread joined with a limit,
    and whatever it raises is the address's error."""
    made: dict[str, Any] = {}

    def connect() -> None:
        try:
            made["client"] = client_class(scheduler, timeout=SCHEDULER_CONNECT_SECONDS)
        except BaseException as exc:       # noqa: BLE001 — a MemoryError from a garbled handshake too
            made["error"] = exc

    thread = threading.Thread(target=connect, name="bnilp-dask-connect", daemon=True)
    thread.start()
    thread.join(1.2 * SCHEDULER_CONNECT_SECONDS + 1)     # past the connection's own limit, which says more
    where = f"scheduler (--scheduler) {scheduler}"
    if thread.is_alive():
        raise InputError(f"{where}: no Dask scheduler answered within {SCHEDULER_CONNECT_SECONDS} s (something "
                         "listens there but does not speak Dask's protocol: the dashboard's port?)")
    exc = made.get("error")
    if isinstance(exc, (OSError, ValueError, TypeError, TimeoutError)):
        raise InputError(f"{where}: cannot connect ({exc})") from None
    if exc is not None:
        raise InputError(f"{where}: not a Dask scheduler (its handshake failed: {type(exc).__name__})") from None
    return made["client"]


def _no_reconnect_failure(record: logging.LogRecord) -> bool:
    """A logging filter (the client's logger): drops "Failed to reconnect to scheduler after 30.00 seconds, closing
    client" — a scheduler lost mid-run, which the run's own one line says (seen above it in a CI run)."""
    return not record.getMessage().startswith("Failed to reconnect to scheduler")


def _no_batched_comm_closed(record: logging.LogRecord) -> bool:
    """A logging filter (the client's batched sends): drops "Batched Comm Closed <TCP (closed) Client->Scheduler …>"
    and its CommClosedError traceback — logged when the scheduler dies while the client is sending to it, which the
    run's own one line says (seen above it in a CI run: a scheduler killed mid-run, 12 lines of stderr)."""
    return not record.getMessage().startswith("Batched Comm Closed")


def _not_a_busy_worker_killed(record: logging.LogRecord) -> bool:
    """A logging filter: drops the nanny's "Worker process still alive after 4.0 seconds, killing" — what closing
    this process's own cluster says when a worker is inside a block after an interrupt (the nanny's thread may
    log it after :func:`stop_local_cluster` has returned)."""
    return not str(record.msg).startswith("Worker process still alive after")


def _no_schedule_after_shutdown(record: logging.LogRecord) -> bool:
    """A logging filter: drops the scheduler's "cannot schedule new futures after shutdown" — what closing this
    process's own cluster after an interrupt can log from the scheduler's thread once the close has returned
    (seen once in a CI run, after "bnilp: interrupted") — and its "… after interpreter shutdown", logged when that
    thread's last call comes as the interpreter ends (seen once in a later CI run, the same place)."""
    message = record.getMessage()
    return not any(f"cannot schedule new futures after {when}shutdown" in message for when in ("", "interpreter "))


def _no_lost_worker_noise(record: logging.LogRecord) -> bool:
    """A logging filter (the scheduler's and the nanny's loggers): drops what they log when this process's own
    cluster loses its worker processes — "broadcast to … failed: CommClosedError", "Restarting worker", "Couldn't
    gather keys" — which a SIGTERM sent to the whole process group (``timeout``, a service manager) causes before
    this process has run its handler (a review: 6 of 8 runs printed one around "bnilp: interrupted"); a worker lost
    otherwise ends the run with bnilp's own line (:func:`bnilp.parentsets.lost_workers_as_limits`)."""
    message = record.getMessage()
    return not ((message.startswith("broadcast to ") and " failed: " in message)
                or message.startswith(("Restarting worker", "Couldn't gather keys")))


def _no_nanny_start_left_unread(record: logging.LogRecord) -> bool:
    """A logging filter (asyncio's logger): drops "Task exception was never retrieved … Nanny failed to start" —
    what the garbage collector says of a nanny's start task once a LocalCluster start cut short by Ctrl-C is
    closed (its worker process had died of the same Ctrl-C while it imported dask)."""
    message = record.getMessage()
    return not (message.startswith("Task exception was never retrieved") and "Nanny failed to start" in message)


def start_local_cluster(workers: int, processes: bool = False):
    """The Dask client of a LocalCluster of ``workers`` single-thread workers (``--scheduler local``),
    started now unless one of that shape with that many live workers is running in this process.

    ``processes=False`` (scores counted in compiled code, :class:`~bnilp.scores.discrete.DiscreteScore`):
    threads of this process — the kernels release the GIL, so a worker thread counts beside the
    coordinator's own, and blocks and the score reach it without being pickled (a LocalCluster of
    processes cost 1.4–1.7× the loky pool on two cores; README "Parallel"). Scores evaluated in Python
    need processes. A cluster given by address ships everything either way
    (``test_a_cluster_of_processes_by_address_gives_the_same_score_file``). Like the pools it outlives a
    run, so a later run in this process pays no start-up; :func:`stop_local_cluster` (also at interpreter
    exit) ends it."""
    with _LOCAL_DASK_LOCK:
        return _start_local_cluster(workers, processes)


def _start_local_cluster(workers: int, processes: bool):
    held = _LOCAL_DASK
    if (held.get("client") is not None and held.get("workers") == workers and held.get("processes") == processes
            and held["client"].status == "running"):
        with contextlib.suppress(Exception):
            if len(held["client"].scheduler_info()["workers"]) == workers:
                return held["client"]
    if held.get("client") is not None and len(_LOCAL_DASK_USERS):
        kind = "processes" if held.get("processes") else "threads"
        raise InputError(f"scheduler (--scheduler) local: this process's local Dask cluster ({held.get('workers')} "
                         f"workers, {kind}) is in use by another call, and this one needs {workers} workers "
                         f"({'processes' if processes else 'threads'}); a cluster in use is not closed — wait for "
                         "that call, or give a cluster's address")
    if processes and not may_start_processes():
        raise InputError("scheduler (--scheduler) local: this process is a daemon (a multiprocessing pool's worker) "
                         "and may not start the cluster's worker processes; give a cluster's address, or "
                         "n_jobs (--jobs) without a scheduler")
    stop_local_cluster()
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise MissingExtraError("scheduler (--scheduler)", "dask") from None
    import dask

    # in-process, the cluster's housekeeping takes the GIL from the coordinator and the worker threads:
    # the workers' statistical profiler wakes every 10 ms to walk their stacks, the loop's blocked-loop
    # check every 20 ms, the system monitor (dashboard figures) every 0.5 s (idle: 0.23 → 0.06 s of
    # CPU in 5 s without them); a worker's next task waits in it, not at the scheduler
    quiet = {} if processes else {"distributed.worker.profile.enabled": False,
                                  "distributed.admin.tick.interval": "1s",
                                  "distributed.admin.system-monitor.interval": "5s"}
    # quieted and closed at exit from the start: Ctrl-C can come while the cluster starts (seconds on a loaded
    # machine), and its close then is the same as after a run
    for name, noise in (("distributed.nanny", _not_a_busy_worker_killed),
                        ("distributed.scheduler", _no_schedule_after_shutdown),
                        ("distributed.scheduler", _no_lost_worker_noise),
                        ("distributed.nanny", _no_lost_worker_noise),
                        ("asyncio", _no_nanny_start_left_unread)):
        log = logging.getLogger(name)
        if noise not in log.filters:
            log.addFilter(noise)
    if not held.get("atexit"):
        atexit.register(stop_local_cluster)
        held["atexit"] = True
    from distributed.deploy.spec import SpecCluster

    before = set(SpecCluster._instances)
    try:
        with dask.config.set({**quiet, "distributed.scheduler.worker-saturation": float("inf")}), \
                (children_start_deaf_to_ctrl_c() if processes else contextlib.nullcontext()):   # its workers' start
            # no dashboard; the scheduler's HTTP server (health, metrics) on a free port of this host only: by
            # default it takes 8787, and where that is taken (another cluster, a test's) distributed warned on stderr
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes,
                                   dashboard_address=None, scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
    except BaseException:
        _close_half_started([c for c in list(SpecCluster._instances) if c not in before])
        raise
    held.update(workers=workers, processes=processes, cluster=cluster)
    try:
        held["client"] = client = Client(cluster)
        client.run(_init_local_dask_worker, os.getpid())
    except BaseException:
        stop_local_cluster()
        raise
    return client


def _close_half_started(clusters: list) -> None:
    """Close clusters whose start was cut short (Ctrl-C while :class:`LocalCluster` started: it is already in
    distributed's list of clusters, but not ours) and take them off distributed's list: its exit handler closed
    them again and printed a traceback (``AssertionError: Status.init`` of a worker that never started) after
    "bnilp: interrupted". Each close is quiet and bounded; what it cannot close ends with this process."""
    from distributed.deploy.spec import SpecCluster

    for cluster in clusters:
        with _distributed_quiet(), contextlib.suppress(BaseException):
            cluster.close(timeout=5)
        SpecCluster._instances.discard(cluster)


@contextlib.contextmanager
def _distributed_quiet(level: int = logging.ERROR):
    """distributed's loggers at ``level`` for the block: closing a cluster after an interrupt cancels the tasks
    still running, and distributed warns of each cancellation and of a busy worker it has to kill — its own
    doing, said after "bnilp: interrupted" (distributed's configuration gives its loggers levels of their own, so
    each is quieted). Above CRITICAL for a client whose scheduler was lost: closing it cancels its attempt to
    reconnect, which distributed logs as an error with two tracebacks after the run's own line."""
    quiet = [logging.getLogger(name) for name in list(logging.root.manager.loggerDict)
             if name == "distributed" or name.startswith("distributed.")]
    levels = [log.level for log in quiet]
    for log in quiet:
        log.setLevel(level)
    try:
        yield
    finally:
        for log, level in zip(quiet, levels, strict=True):
            log.setLevel(level)


def stop_local_cluster() -> None:
    """Close the LocalCluster of :func:`start_local_cluster` now (the next ``local`` run starts one)."""
    with _LOCAL_DASK_LOCK:
        client, cluster = _LOCAL_DASK.pop("client", None), _LOCAL_DASK.pop("cluster", None)
        _LOCAL_DASK.pop("workers", None)
        _LOCAL_DASK.pop("processes", None)
    if client is None and cluster is None:
        return
    with _distributed_quiet(), contextlib.suppress(Exception):
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()


class _Task:
    """A block sent to the pool, or taken back (cancelled) and evaluated by the coordinator."""

    __slots__ = ("future", "value", "local")

    def __init__(self, future: Any) -> None:
        self.future, self.value, self.local = future, None, False

    def done(self) -> bool:
        return self.local or self.future.done()

    def result(self) -> BlockResult:
        return self.value if self.local else self.future.result()


class _PoolExecutor:
    """Blocks on a pool of n_jobs − 1 workers (:class:`LokyExecutor`: processes; :class:`ThreadExecutor`:
    threads) and the coordinator. Every block goes to the pool; while the coordinator waits it takes back
    the most recently queued block that has not been handed to a worker yet (``Future.cancel``
    succeeds) and evaluates it itself. So n_jobs workers compute, the coordination (generation,
    transfers) needs no core of its own, and the split of the blocks follows the speed of each worker
    (work stealing)."""

    score: LocalScore
    slots: int
    pool: Any
    queued: list[tuple[_Task, WalkSpec, Block]]
    #: one item per future done since the last drain (:meth:`wait_any`)
    finished: queue.SimpleQueue

    def _submit_block(self, spec: WalkSpec, block: Block) -> Any:
        raise NotImplementedError

    def _submit_task(self, fn: Callable[..., Any], task: Any, *args: Any) -> Any:
        raise NotImplementedError

    def submit(self, spec: WalkSpec, block: Block) -> _Task:
        block = materialise(block)
        task = _Task(self._submit_block(spec, block))
        self.queued.append((task, spec, block))
        return task

    def map_tasks(self, fn: Callable[..., Any], tasks: list, *args: Any, check: Callable[[int], None] | None = None
                  ) -> list:
        """Table tasks ``fn(score, task, *args)`` on the pool (the subset table's, the set table's), largest
        first; the coordinator takes them from the other end. ``check(i)`` (if any) runs after each task i the
        coordinator computes and each result i it reads (:func:`_table_check`; an exception cancels what is
        left)."""
        futures = [self._submit_task(fn, task, *args) for task in tasks]
        local: dict[int, Any] = {}
        try:
            for i in range(len(tasks) - 1, -1, -1):
                if not futures[i].running() and not futures[i].done() and futures[i].cancel():
                    local[i] = fn(self.score, tasks[i], *args)
                    if check is not None:
                        check(i)
            out = []
            for i in range(len(tasks)):
                out.append(local[i] if i in local else self._result(futures[i]))
                if check is not None:
                    check(i)
            return out
        finally:
            for f in futures:
                f.cancel()

    def _steal(self) -> bool:
        self.queued = [q for q in self.queued if not q[0].future.running() and not q[0].future.done()]
        while self.queued:
            task, spec, block = self.queued.pop()
            if task.future.cancel():
                task.value, task.local = evaluate_block(self.score, spec, block), True
                return True
        return False

    def _watch(self, future: Any) -> Any:
        """A pool's ``Future`` that puts a token in :attr:`finished` when it is done (or cancelled)."""
        future.add_done_callback(self._wake)
        return future

    def _wake(self, future: Any) -> None:
        self.finished.put(None)

    def _result(self, future: Any) -> Any:
        """A watched future's result, waited for on :attr:`finished` (a Ctrl-C comes at once; in
        ``Future.result`` it would wait for the result: :func:`bnilp.threads.interrupt_where_safe`)."""
        while not future.done():
            self.finished.get()
        return future.result()

    def wait_any(self, tasks: list) -> None:
        """Until one of ``tasks`` is done (or the coordinator took one back and evaluated it): a get from
        :attr:`finished` (drained first, so a completion after the look at the tasks still wakes it), which an
        interrupt leaves without any lock held. ``concurrent.futures.wait`` took the futures' locks in a Python
        loop: an interrupt between two left one held and the worker finishing that future blocked for ever
        (1 in ~11,000 interrupts of a wait in a stress loop; see :mod:`bnilp.threads` for the threads' tasks).
        No ``tasks``: nothing to wait for, it returns at once (a wait on none blocked for ever, the tokens of the
        blocks done already drained: 2 hangs in ~4,400 calls of ``learn(..., n_jobs=2)``, a review's find)."""
        if not tasks:
            return
        with contextlib.suppress(queue.Empty):
            while True:
                self.finished.get_nowait()
        if any(t.done() for t in tasks) or self._steal():
            return
        self.finished.get()

    def close(self) -> None:
        """After an error: blocks not started are not run. The pool stays for a later run."""
        for task, _, _ in self.queued:
            task.future.cancel()


def _no_temporary_file(exc: OSError) -> InputError:
    """The one line for a score that cannot be handed to the worker processes: the system's temporary folder
    (``$TMPDIR``) is full or cannot be written."""
    try:
        where = tempfile.gettempdir()
    except OSError:         # none usable: asking again raised the same error inside this handler (a review)
        where = os.environ.get("TMPDIR") or "the temporary folder"
    return InputError(f"{where}: the score for the worker processes cannot be written there "
                      f"({exc.strerror or exc}); free space there, set TMPDIR to another folder, or score in one "
                      "process")


class LokyExecutor(_PoolExecutor):
    """The loky pool of n_jobs − 1 processes (:func:`start_pool`) for scores evaluated in Python; the
    score (with its data) reaches each worker once, through a temporary file read on its first block."""

    def __init__(self, score: LocalScore, n_jobs: int) -> None:
        self.score, self.slots = score, n_jobs
        self.queued = []                  # blocks held only until a worker has them
        self.finished = queue.SimpleQueue()
        # a file, not an argument: a pickled score in the task or initializer arguments is written into
        # the pipe of a starting worker, which blocks the coordinator until the worker has imported bnilp
        # (cloudpickle, as loky's own task arguments: a score class defined in __main__ travels too)
        import cloudpickle

        try:
            fd, path = tempfile.mkstemp(prefix="bnilp-score-", suffix=".pickle")
        except OSError as exc:
            raise _no_temporary_file(exc) from None
        # removed by close, else when the executor is collected or the process exits (an interrupt can land
        # where no close follows: the file was left behind in one run of an interrupted `bnilp score` out of two)
        self.remove_file = weakref.finalize(self, _remove_file, path)
        self.run = (path, secrets.token_hex(8))
        try:
            with os.fdopen(fd, "wb") as fh:
                cloudpickle.dump(score, fh, protocol=pickle.HIGHEST_PROTOCOL)
        except OSError as exc:
            self.remove_file()
            raise _no_temporary_file(exc) from None
        try:
            self.pool = start_pool(n_jobs, user=self)
        except BaseException:
            self.remove_file()
            raise

    def _submit_block(self, spec: WalkSpec, block: Block) -> Any:
        return self._watch(self.pool.submit(_worker_block, self.run, spec, block))

    def _submit_task(self, fn: Callable[..., Any], task: Any, *args: Any) -> Any:
        return self._watch(self.pool.submit(_worker_task, self.run, fn, task, *args))

    def close(self) -> None:
        """Remove the score's file; the pool stays for a later run (its workers exit when idle)."""
        try:
            super().close()
        finally:
            release_pool(self)
            self.remove_file()


def _remove_file(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


_THREADS: dict[str, Any] = {}


def start_threads(n_jobs: int) -> DaemonThreads:
    """The pool of ``n_jobs`` − 1 threads of :class:`ThreadExecutor`, kept for a later run in this process."""
    if _THREADS.get("n") != n_jobs:
        if _THREADS.get("pool") is not None:
            _THREADS["pool"].shutdown(wait=False)
        _THREADS.update(pool=DaemonThreads(max(1, n_jobs - 1), "bnilp-blocks"), n=n_jobs)
    return _THREADS["pool"]


class ThreadExecutor(_PoolExecutor):
    """n_jobs − 1 threads of this process (:func:`start_threads`) for scores counted in compiled code
    (:class:`~bnilp.scores.discrete.DiscreteScore`: BIC, BDeu), whose kernels release the GIL: no process
    to start, no copy of the score or of the blocks."""

    def __init__(self, score: LocalScore, n_jobs: int) -> None:
        self.score, self.slots = score, n_jobs
        self.queued, self.finished = [], queue.SimpleQueue()
        self.pool = start_threads(n_jobs)

    def _submit_block(self, spec: WalkSpec, block: Block) -> Any:
        return self.pool.submit(evaluate_block, self.score, spec, block, notify=self.finished)

    def _submit_task(self, fn: Callable[..., Any], task: Any, *args: Any) -> Any:
        return self.pool.submit(fn, self.score, task, *args, notify=self.finished)


def block_cost(block: Block) -> int:
    """A block's evaluation work, in candidate × parent cells (each counts the rows once)."""
    return len(block.new) * block.size


def _dask_blocks(score: LocalScore, items: list[tuple[WalkSpec, Block, Any]]) -> tuple[list[BlockResult], float]:
    """A Dask task: several blocks (with their frontiers' futures resolved) and the seconds they took."""
    t0 = time.perf_counter()
    results = [evaluate_block(score, spec, materialise(block, frontier)) for spec, block, frontier in items]
    return results, time.perf_counter() - t0


def _score_subsets(score: LocalScore, task: tuple[int, ...], *args: Any):
    """A subset-table task (:func:`bnilp.scores.subsets.subset_task`) of ``score``'s counts."""
    return subset_task(score.count_context(), task, *args)


class _DaskTask:
    """A block held by the coordinator until it is sent to the cluster (in a task of several blocks,
    :attr:`DaskExecutor.sent`) or evaluated by the coordinator itself; ``value`` once its result is here."""

    __slots__ = ("spec", "block", "value", "cost")

    def __init__(self, spec: WalkSpec, block: Block) -> None:
        self.spec, self.block, self.value = spec, block, None
        self.cost = block_cost(block)

    def done(self) -> bool:
        """Evaluated and read back (:meth:`DaskExecutor.wait_any` reads finished tasks back together)."""
        return self.value is not None

    def result(self) -> BlockResult:
        return self.value


@dataclass
class _Pace:
    """Seconds per unit of :func:`block_cost`, from every evaluation timed so far (the coordinator's own
    and the workers'), and the cost a Dask task should carry to take :data:`DASK_TASK_SECONDS`."""

    seconds: float = 0.0
    cost: int = 0

    def add(self, seconds: float, cost: int) -> None:
        self.seconds, self.cost = self.seconds + seconds, self.cost + cost

    def task_cost(self) -> float:
        """0 before any measurement: a task is then one block."""
        return DASK_TASK_SECONDS * self.cost / self.seconds if self.seconds > 0 else 0.0


def _returned(value: Any) -> Any:
    """``value``, as a Dask task's result: what every task needs (the score, a level's frontier) is a task of its own
    rather than scattered data, so the scheduler, which holds its inputs, recomputes it where the workers holding it
    died (:meth:`DaskExecutor._shared`)."""
    return value


def _no_large_graph_warning() -> Any:
    """Dask's "Sending large graph of size … Consider loading the data with Dask directly" (a task over 10 MiB:
    blocks with their subsets' rows on wide data) is advice to whoever builds the tasks, which is bnilp, not the
    user: it flooded stderr, ``-q`` too (hailfinder100, BDeu, ``--jobs 3``; a review's find)."""
    import dask

    return dask.config.set({"distributed.admin.large-graph-warning-threshold": "1 TiB"})


class DaskExecutor:
    """Blocks as Dask tasks; the score is sent once, as a task of its own (:meth:`_shared`), and tasks refer to it.

    Blocks wait in the coordinator and go to the cluster oldest first, packed into tasks of about
    :data:`DASK_TASK_SECONDS` of work each (a task costs the scheduler, the worker and the client a few
    milliseconds whatever it holds: on two cores 5–7 ms of CPU a task in-process, README "Parallel"), only
    while fewer than :data:`DASK_QUEUED_PER_THREAD` tasks per worker thread are there. With ``--scheduler
    local`` the cluster has ``--jobs`` − 1 workers and the coordinator is the last: while it waits it
    evaluates the newest block not yet sent (as the loky executor's work stealing), so no block it
    computes crosses the scheduler, and with none left it takes back the newest task queued at the
    cluster (:meth:`_take_back`). On a cluster given by address the coordinator only coordinates."""

    def __init__(self, score: LocalScore, scheduler: str, n_jobs: int) -> None:
        self.score, self.local, self.address = score, scheduler == "local", scheduler
        self.lost = False                     # the scheduler's connection lost mid-run (:meth:`_connected`)
        self.held: list[_DaskTask] = []      # blocks not sent yet, oldest first
        self.sent: list[tuple[Any, list[_DaskTask]]] = []   # tasks at the cluster and their blocks
        self.frontiers: dict[int, tuple[Any, Any]] = {}   # child -> (its level's stats, their Dask future)
        self.pace = _Pace()
        with _LOCAL_DASK_LOCK:                 # the cluster is not closed by another thread between the two
            self.client, _ = connect_dask(scheduler, n_jobs, not isinstance(score, DiscreteScore))
            if self.local:
                _LOCAL_DASK_USERS.add(self)
        self.coordinator_computes = self.local and (n_jobs if n_jobs > 1 else usable_cores()) > 1
        try:
            self.client.wait_for_workers(1, timeout=DASK_WORKER_WAIT_SECONDS)
            self.score_future = self._shared(score)
            self.threads = max(sum(self.client.nthreads().values()), 1)
        except (OSError, TimeoutError) as exc:        # e.g. a scheduler with no worker to take the score
            _LOCAL_DASK_USERS.discard(self)
            if not self.local:
                self.client.close()
            raise InputError(f"scheduler (--scheduler) {scheduler}: the cluster takes no work ({exc})") from None
        self.slots = max(n_jobs, self.threads + self.coordinator_computes, 2)

    @contextlib.contextmanager
    def _connected(self) -> Iterator[None]:
        """A cluster given by address whose scheduler is lost mid-run (stopped, killed, the network gone): the
        client cancels every future (``FutureCancelledError``/``FuturesCancelledError``, read as a worker killed for
        memory) or a read fails
        (``CommClosedError``: a traceback, exit 1; a review). It is one line naming ``scheduler`` instead, as a
        scheduler that cannot be reached at the start is (a deepening keeps its finished passes, as it does when a
        worker dies: :func:`bnilp.parentsets._deepen`)."""
        try:
            yield
        except Exception as exc:
            comm = sys.modules.get("distributed.comm.core")
            closed = comm is not None and isinstance(exc, comm.CommClosedError)
            if self.local or (self.client.status == "running" and not closed):
                raise
            self.lost = True
            raise InputError(f"scheduler (--scheduler) {self.address}: the connection to the scheduler was lost "
                             f"mid-run ({type(exc).__name__})") from None

    def submit(self, spec: WalkSpec, block: Block) -> _DaskTask:
        task = _DaskTask(spec, block)    # sent by wait_any, which follows the generation of a batch:
        self.held.append(task)            # blocks go out packed, not one by one as they come
        return task

    def _collect(self) -> None:
        """Read back every finished task in one round trip (``Future.result`` is one each)."""
        done = [(future, pack) for future, pack in self.sent if future.done()]
        if not done:
            return
        for (_, pack), (results, seconds) in zip(done, self.client.gather([f for f, _ in done]), strict=True):
            self.pace.add(seconds, sum(t.cost for t in pack))
            for task, result in zip(pack, results, strict=True):
                task.value, task.spec, task.block = result, None, None
        self.sent = [(future, pack) for future, pack in self.sent if pack[0].value is None]

    def _send(self, cover: int = 0) -> None:
        """Top the cluster up from the held blocks, oldest first, to DASK_QUEUED_PER_THREAD tasks per
        thread, and to at least ``cover`` × its threads in :func:`block_cost` (the block the coordinator is
        about to evaluate: the cluster's threads must not run dry while it does)."""
        self._collect()
        per_task = self.pace.task_cost()
        while self.held and (len(self.sent) < DASK_QUEUED_PER_THREAD * self.threads
                             or sum(t.cost for _, pack in self.sent for t in pack) < cover * self.threads):
            pack = [self.held.pop(0)]
            while self.held and sum(t.cost for t in pack) + self.held[0].cost <= per_task:
                pack.append(self.held.pop(0))
            items = []
            for task in pack:
                block, frontier = task.block, None
                if block.sub_rows is not None:     # the rows travel; the frontier's arrays with the task
                    frontier = block.frontier      # if small, else scattered once per level
                    if sum(a.nbytes for a in frontier) > DASK_INLINE_FRONTIER_BYTES:
                        frontier = self._frontier(task.spec.child, frontier)
                    block = Block(block.size, block.bases, block.base_of, block.new, block.q_all,
                                  block.best_subset, sub_rows=block.sub_rows)
                items.append((task.spec, block, frontier))
            with _no_large_graph_warning():
                future = self.client.submit(_dask_blocks, self.score_future, items, pure=False)
            self.sent.append((future, pack))   # the blocks stay here until read back (_take_back)

    def map_tasks(self, fn: Callable[..., Any], tasks: list, *args: Any, check: Callable[[int], None] | None = None
                  ) -> list:
        """Table tasks ``fn(score, task, *args)`` on the cluster, largest first, at most DASK_QUEUED_PER_THREAD
        per thread there at once; under ``local`` the coordinator computes the smallest ones while it waits.
        ``check(i)`` (if any) runs once task i is done."""
        from dask.distributed import wait

        held = list(range(len(tasks)))
        results: dict[int, Any] = {}
        sent: dict[int, Any] = {}
        try:
            with self._connected():
                while held or sent:
                    for i, f in [(i, f) for i, f in sent.items() if f.done()]:
                        results[i] = f.result()
                        del sent[i]
                        if check is not None:
                            check(i)
                    while held and len(sent) < DASK_QUEUED_PER_THREAD * self.threads:
                        i = held.pop(0)
                        with _no_large_graph_warning():
                            sent[i] = self.client.submit(fn, self.score_future, tasks[i], *args, pure=False)
                    if held and self.coordinator_computes:
                        i = held.pop()
                        results[i] = fn(self.score, tasks[i], *args)
                        if check is not None:
                            check(i)
                    elif sent:
                        wait(list(sent.values()), return_when="FIRST_COMPLETED")
            return [results[i] for i in range(len(tasks))]
        finally:
            with contextlib.suppress(Exception):
                self.client.cancel(list(sent.values()))

    def _shared(self, value: Any) -> Any:
        """The future of ``value`` as a task (:func:`_returned`), sent once: a worker fetches it from another that
        holds it. Scattered data cannot be recomputed, and a broadcast scatter does not keep a copy on every worker —
        distributed's Active Memory Manager drops the extra replicas within seconds — so one worker killed lost it and
        every task needing it was cancelled, or the next scatter hung (a review: a worker of a cluster given by
        address killed, 4 runs in 45 ended with no file, 2 hung); a task's inputs stay with the scheduler, which
        runs it again elsewhere."""
        with _no_large_graph_warning():
            return self.client.submit(_returned, value, pure=False)

    def _frontier(self, child: int, stats: tuple) -> Any:
        """The Dask future of a level's (ll, nh), sent on the level's first block sent (the previous level's is
        released once no task needs it), as the score is (:meth:`_shared`: recomputed if the workers holding it
        die)."""
        held = self.frontiers.get(child)
        if held is None or held[0] is not stats:
            held = (stats, self._shared(stats))
            self.frontiers[child] = held
        return held[1]

    def wait_any(self, tasks: list) -> None:
        with self._connected():
            self._wait_any(tasks)

    def _wait_any(self, tasks: list) -> None:
        from dask.distributed import wait

        self._send()
        if any(t.done() for t in tasks):
            return
        if self.held and self.coordinator_computes:
            task = self.held.pop()
            self._send(cover=task.cost)
            t0 = time.perf_counter()
            task.value = evaluate_block(self.score, task.spec, materialise(task.block))
            self.pace.add(time.perf_counter() - t0, task.cost)
            task.spec = task.block = None
            return
        if self.coordinator_computes and len(self.sent) > self.threads:
            self._take_back()
            return
        if self.sent:
            wait([future for future, _ in self.sent], return_when="FIRST_COMPLETED")

    def _take_back(self) -> None:
        """Evaluate the newest task sent (queued behind one task per worker thread, so most likely not
        started) here and release its future: at the end of a level the coordinator would otherwise wait
        for a queued task while its own core idles. A block's result is canonical, so which of the two
        evaluations counts does not matter; a task already running on the worker is only wasted work."""
        future, pack = self.sent.pop()
        future.release()
        t0 = time.perf_counter()
        for task in pack:
            task.value = evaluate_block(self.score, task.spec, materialise(task.block))
            task.spec = task.block = None
        self.pace.add(time.perf_counter() - t0, sum(t.cost for t in pack))

    def close(self) -> None:
        """Drop the held blocks and cancel the sent ones (after an error); release the score. A local
        cluster stays up for a later run (:func:`stop_local_cluster`); a client by address is closed."""
        self.held.clear()
        self.frontiers.clear()
        with contextlib.suppress(Exception):
            self.client.cancel([future for future, _ in self.sent if not future.done()] + [self.score_future])
        _LOCAL_DASK_USERS.discard(self)
        if not self.local:      # (its scheduler lost: closing cancels the client's attempt to reconnect, logged)
            with _distributed_quiet(logging.CRITICAL + 1) if self.lost else contextlib.nullcontext():
                self.client.close()


def _light(block: Block) -> Block:
    """The block without the subsets' statistics (which only the evaluation needs)."""
    return Block(block.size, block.bases, block.base_of, block.new, block.q_all, block.best_subset)


def make_executor(score: LocalScore, n_jobs: int, scheduler: str | None):
    """The executor of the walk's blocks: Dask on ``scheduler``; else one process (``n_jobs`` 1), threads for the
    compiled discrete scores, loky processes for the scores evaluated in Python (one process inside a pool's
    worker). ``n_jobs`` −1 is every usable core; below 1 an :class:`InputError` naming ``n_jobs (--jobs)``."""
    if scheduler is not None:
        # an interrupt waits for the imports of dask.distributed to end: one cut short left the module half made
        # in sys.modules, and every later scheduler="local" call of the process failed ("module 'distributed'
        # has no attribute 'utils'", a review's find); the walk itself is protected by run_walks
        with interrupts_where_safe():
            return DaskExecutor(score, scheduler, n_jobs)
    if n_jobs == -1:
        n_jobs = usable_cores()
    if n_jobs < 1:
        raise InputError(f"n_jobs (--jobs) must be ≥ 1 or −1 (all cores), got {n_jobs}")
    if n_jobs == 1:
        return SerialExecutor(score)
    if isinstance(score, DiscreteScore):
        return ThreadExecutor(score, n_jobs)
    if not may_start_processes():       # a multiprocessing pool's worker: no children of its own
        return SerialExecutor(score)
    return LokyExecutor(score, n_jobs)


@dataclass(frozen=True)
class SubsetPlan:
    """Which subsets a table must hold for the walks: |T| ≤ ``max_size``, Q_T ≤ ``q_max``; ``subsets`` of them."""

    max_size: int
    q_max: float
    subsets: int


def plan_subset_table(score: LocalScore, walks: Sequence[_ChildWalk],
                      forced: bool = False) -> tuple[SubsetPlan | None, str]:
    """The subset table the walks need (:mod:`bnilp.scores.subsets`), or None and why it does not apply.

    A walk asks for a family (Π, i) only if R2 does not prune Π at generation, i.e. (R2 with the empty
    set, a subset of every Π, as comparator: s(∅) ≤ best_subset, and BIC scores are ≤ 0 so its slack
    ``_tol`` is at most s(∅)'s) only if w·(r_i − 1)·Q_Π ≤ −s_i(∅) + ε + slack. So T₁ = Π has
    Q ≤ q_i := (−s_i(∅) + ε + slack)/(w(r_i − 1)) and T₂ = Π ∪ {i} has Q ≤ q_i·r_i: every subset a walk
    needs has Q_T ≤ max_i q_i·r_i. Children without R2 (BDeu, structure priors, required parents, a
    constant column) leave Q unbounded; a palim bounds |T|. The lookups fall back to the walk's own counts
    for any family not in the table, so the plan only decides cost, never results. Unless ``forced``,
    BIC on fewer than :data:`SUBSET_TABLE_MIN_ROWS` distinct rows or more than
    :data:`SUBSET_TABLE_MAX_BIC_VARIABLES` variables keeps the walk's own counts: a family then costs about
    as much to count as to look up, or the walk needs few of the subsets the bound admits.
    """
    if not walks or not isinstance(score, DiscreteScore) or any(w.spec.kind not in ("bic", "bdeu") for w in walks):
        return None, "the score is not discrete BIC or BDeu"
    n = score.data.n
    if n > SUBSET_TABLE_MAX_VARIABLES:
        return None, f"more than {SUBSET_TABLE_MAX_VARIABLES} variables"
    ctx = score.count_context()
    if ctx.N <= 0:
        return None, "no rows"
    if not forced and walks[0].spec.kind == "bic" and ctx.n_rows < SUBSET_TABLE_MIN_ROWS:
        return None, f"BIC on fewer than {SUBSET_TABLE_MIN_ROWS:,} distinct rows"
    if not forced and walks[0].spec.kind == "bic" and n > SUBSET_TABLE_MAX_BIC_VARIABLES:
        return None, f"BIC on more than {SUBSET_TABLE_MAX_BIC_VARIABLES} variables"
    if max(ctx.n_rows, 1) * int(ctx.arities.max()) > SUBSET_TABLE_MAX_SLOTS:
        return None, "too many distinct rows × states"
    sizes, q_max = [], 0.0
    for walk in walks:
        spec = walk.spec
        sizes.append(n if walk.palim is None else walk.palim + 1)
        if "R2" not in spec.active or spec.fixed or spec.r_child < 2 or spec.w <= 0:
            q_max = math.inf
            continue
        s0 = score.local(spec.child, ())
        slack = 1e-6 * max(1.0, abs(s0))
        q_max = max(q_max, (-s0 + spec.epsilon + slack) / (spec.w * (spec.r_child - 1)) * spec.r_child)
    max_size = min(n, max(sizes), largest_size(ctx.arities, q_max))
    if (max_size + 1) * max(ctx.n_rows, 1) * 4 > SUBSET_TABLE_MAX_PARTITION_BYTES:
        return None, "too many distinct rows for one partition per depth"
    total = count_subsets(ctx.arities, max_size, q_max, limit=SUBSET_TABLE_MAX_SUBSETS)
    if total > SUBSET_TABLE_MAX_SUBSETS:
        return None, f"more than {SUBSET_TABLE_MAX_SUBSETS:,} subsets to count"
    return SubsetPlan(max_size, q_max, total), ""


#: BIC uses the subset table (``counts="auto"``) from this many distinct rows on; measured on the Table 1
#: data: with 100–600 rows and 28–31 variables the serial walk on look-ups was 1.6–2.4× slower than the
#: parallel walk counting its families (horse, flag, wdbc), from ~1,000 rows on it was as fast or faster
SUBSET_TABLE_MIN_ROWS = 1000
#: ... and only up to this many variables: with more, R3/R4 stop the walk long before it needs most of the
#: subsets Q_T bounds. ``--jobs 2``, BIC BF 3, seconds families / subsets (2026-11-27): nltcs (16) 1.13 / 0.71,
#: adult (14) 1.30 / 0.72, letter and msnbc (17) gain (README); mushroom (22) 1.25 / 1.33; water1000 (26)
#: 1.18 / 1.32, insurance1000 (27) 0.68 / 0.86, alarm1000 (37) 4.68 / 8.31 (2.7 M subsets)
SUBSET_TABLE_MAX_BIC_VARIABLES = 20
#: a parallel table build splits the subsets into about this many tasks per process
SUBSET_TASKS_PER_SLOT = 8
#: below this many row·subsets (~1 s on one core) the table is counted in this process: starting
#: workers would cost more than it saves
SUBSET_TABLE_PARALLEL_MIN = 1 << 28


def _table_check(table: str, unit: str, sizes: list[int], progress: Callable[[Any], None] | None,
                 deadline: Deadline | None) -> Callable[[int], None] | None:
    """The ``check`` of an executor's ``map_tasks`` for a table's build: once task i is done (each counted once),
    ``progress`` gets a :class:`~bnilp.parentsets.TableProgress` (``sizes[i]`` units a task) and the deadline is
    looked at (:meth:`~bnilp.parentsets.Deadline.check`)."""
    from bnilp.parentsets import TableProgress

    if progress is None and deadline is None:
        return None
    seen: set[int] = set()
    t0 = time.perf_counter()
    done = 0

    def check(i: int) -> None:
        nonlocal done
        if i not in seen:
            seen.add(i)
            done += sizes[i]
            if progress is not None:
                progress(TableProgress(table, done, sum(sizes), unit, time.perf_counter() - t0))
        if deadline is not None:
            deadline.check()

    return check


def build_subset_table(score: DiscreteScore, plan: SubsetPlan, n_jobs: int, scheduler: str | None,
                       progress: Callable[[Any], None] | None = None) -> SubsetTable:
    """Count the subsets of ``plan`` on the executor of ``n_jobs``/``scheduler`` (tasks: subtrees of the
    depth-first walk, :func:`bnilp.scores.subsets.split_prefixes`); the table does not depend on the split.
    ``progress`` gets a :class:`~bnilp.parentsets.TableProgress` after each part."""
    t0 = time.perf_counter()
    ctx = score.count_context()
    ess = score.ess if isinstance(score, BDeu) else None
    small = plan.subsets * max(ctx.n_rows, 1) < SUBSET_TABLE_PARALLEL_MIN
    executor = SerialExecutor(score) if small else make_executor(score, n_jobs, scheduler)
    try:
        tasks = [()] if executor.slots == 1 else split_prefixes(
            ctx.arities, plan.max_size, plan.q_max, SUBSET_TASKS_PER_SLOT * executor.slots)
        parts = executor.map_tasks(_score_subsets, tasks, plan.max_size, plan.q_max, ess,
                                   check=_table_check("subset table", "parts", [1] * len(tasks), progress, None))
    finally:
        executor.close()
    n_log_n = float(ctx.N * math.log(ctx.N))
    table = assemble(parts, n_log_n)
    table.seconds = time.perf_counter() - t0
    return table


#: a set-table build splits the sets into about this many tasks per process
SET_TASKS_PER_SLOT = 16
#: ... a family-table build its families (:func:`plan_family_table`), and holds at most this many (~40 MB)
FAMILY_TASKS_PER_SLOT = 16
FAMILY_TABLE_MAX_FAMILIES = 200_000


def plan_set_table(score: LocalScore, walks: Sequence[_ChildWalk]) -> tuple[list[int] | None, str]:
    """The variable sets, as bit masks (bit j: variable j), whose ℓ the walks will ask of a score whose
    families are differences of one set function (CG; CGd's continuous children:
    :meth:`~bnilp.scores.cg.ConditionalGaussian.set_loglik_df`) — empty where the score holds them all — or None
    and why the walks do not read such a table.

    Such a score prunes no superset (only R1, which removes a set but not its supersets), so the walk of
    child Y with fixed parents F, candidates C and palim p generates every parent set Π = F ∪ S, S ⊆ C,
    |Π| ≤ p (all of C without a palim), and its family asks for ℓ(Π) and ℓ(Π ∪ {Y}) (ℓ(Y | Π) =
    ℓ({Y} ∪ Π) − ℓ(Π)): the union over the children is known before any walk starts. Sets the score
    holds already (an earlier pass of a deepening, an earlier call) are left out. Ordered by their discrete
    variables, so a task's sets share row partitions. More than :data:`~bnilp.scores.cg.SET_TABLE_MAX_SETS` sets:
    None."""
    from bnilp.parentsets import SUPERSET_RULES
    from bnilp.scores.cg import SET_TABLE_MAX_SETS, ConditionalGaussian, discrete_mask

    if not isinstance(score, ConditionalGaussian):
        return None, "the score is not a set function's differences (CG, CGd)"
    users = [w for w in walks if score.uses_set_function(w.spec.child)]
    if not users:
        return None, "no child's families are set differences"
    if any(w.spec.kind != "generic" or w.spec.active & SUPERSET_RULES for w in users):
        return None, "a walk prunes supersets"
    masks: set[int] = set()
    for walk in users:
        own = 1 << walk.spec.child
        for parents in _walk_parent_sets(walk):
            m = sum(1 << j for j in parents)
            masks.add(m)
            masks.add(m | own)
            if len(masks) > SET_TABLE_MAX_SETS:
                return None, f"more than {SET_TABLE_MAX_SETS:,} sets"
    names = range(score.data.n)
    discrete = discrete_mask(score.discrete, names)
    todo = [m for m in masks if not score.holds_set(frozenset(j for j in names if m >> j & 1))]
    return sorted(todo, key=lambda m: (m & discrete, m)), "" if todo else "every set is at hand"


def _walk_parent_sets(walk: _ChildWalk) -> Iterator[tuple[int, ...]]:
    """The parent sets the walk of a score that prunes no superset generates, as the walk writes them (its
    required parents F, then S ⊆ its candidates in increasing order): F ∪ S with |F ∪ S| ≤ palim (all of the
    candidates without one), F itself even past a palim below it."""
    fixed = tuple(walk.spec.fixed)
    candidates = [int(j) for j in walk.candidates]
    largest = len(candidates) if walk.palim is None else min(len(candidates), walk.palim - len(fixed))
    for size in range(max(largest, 0) + 1):
        for combo in itertools.combinations(candidates, size):
            yield fixed + combo


def plan_family_table(score: LocalScore, walks: Sequence[_ChildWalk]
                      ) -> tuple[list[tuple[int, tuple[int, ...]]] | None, str]:
    """The families (child, parents as the walk writes them) that the walks of a score with shared per-key sums
    (:meth:`~bnilp.scores.base.LocalScore.family_share_key`: MVP's bases and MML's cell sums on the discrete
    parents' partition) will score, sorted by key — empty where the score holds them all — or None and why the walks
    do not read such a table.

    As for the set table (:func:`plan_set_table`), such a walk prunes no superset, so its families are known
    before it starts. Scored in the walks' order, each child's walk visits every partition again, and a process
    keeps the bases of the first ones only (:class:`~bnilp.scores.cg.PartitionCache`); on several processes
    each built nearly all of them. Sorted by key, a task's families share one partition's bases, each built
    once and let go when the key changes. Families the score holds already are left out; more than
    :data:`FAMILY_TABLE_MAX_FAMILIES`: None."""
    from bnilp.parentsets import SUPERSET_RULES

    users = [w for w in walks if w.spec.kind == "generic" and not w.spec.active & SUPERSET_RULES
             and score.family_share_key(w.spec.child, w.spec.fixed) is not None]
    if not users:
        return None, "the score shares no sums between families, or a walk prunes supersets"
    families = []
    for walk in users:
        for parents in _walk_parent_sets(walk):
            families.append((walk.spec.child, parents))
            if len(families) > FAMILY_TABLE_MAX_FAMILIES:
                return None, f"more than {FAMILY_TABLE_MAX_FAMILIES:,} families"
    todo = [f for f in families if not score.holds_family(*f)]
    return sorted(todo, key=lambda f: (score.family_share_key(*f), f)), "" if todo else "every family is at hand"


def family_values(score: LocalScore, families: Sequence[tuple[int, tuple[int, ...]]]) -> list[float]:
    """A task of the family table: the local score of each family, the sums of a key let go when the next key
    begins — the families come sorted by key (:func:`plan_family_table`), so a key is built once even where the
    next task goes on with it. On a thread other than the main one (a Dask worker's, where several may run tasks
    at once on one score and would let go of each other's sums) the task works on its own copy of the score's
    kept sums (:meth:`~bnilp.scores.base.LocalScore.for_task`)."""
    mine = score if threading.current_thread() is threading.main_thread() else score.for_task()
    out = []
    for child, parents in families:
        mine.share(mine.family_share_key(child, parents))
        out.append(mine.local(child, parents))
    return out


def _key_tasks(score: LocalScore, families: list[tuple[int, tuple[int, ...]]], step: int
               ) -> list[list[tuple[int, tuple[int, ...]]]]:
    """``families`` (sorted by key) cut into tasks of about ``step`` families, at changes of key where a key has
    fewer (two processes each building the sums of a key cut between their tasks: MVP's 10⁵-row walk on two
    processes took 3.88 s cut every 87 families, 3.43 s cut at keys); a key with more is cut into tasks of ``step``."""
    tasks: list[list[tuple[int, tuple[int, ...]]]] = []
    for _, run in itertools.groupby(families, key=lambda f: score.family_share_key(*f)):
        group = list(run)
        if tasks and len(tasks[-1]) + len(group) <= step:
            tasks[-1].extend(group)
        else:
            tasks.extend(group[i:i + step] for i in range(0, len(group), step))
    return tasks


def build_family_table(score: LocalScore, families: list[tuple[int, tuple[int, ...]]], n_jobs: int,
                       scheduler: str | None, deadline: Deadline | None = None,
                       progress: Callable[[Any], None] | None = None) -> float:
    """The local scores of ``families`` (:func:`plan_family_table`) computed once on the executor of
    ``n_jobs``/``scheduler`` (:func:`family_values`, contiguous slices of the sorted families) and put in the
    score's family table (:meth:`~bnilp.scores.base.LocalScore.add_family_table`), which the walks then read:
    MVP on 15 discrete and 15 continuous columns at palim 3 scored in the walks' order built 2,269 partitions
    with their bases where 576 differ. The same floats as the walks' own calls (the score's values do not depend
    on what it scored before). Past ``deadline`` it raises as the walk does; ``progress`` gets a
    :class:`~bnilp.parentsets.TableProgress` (families) after each task. Returns seconds."""
    t0 = time.perf_counter()
    executor = make_executor(score, n_jobs, scheduler)
    tasks = _key_tasks(score, families, max(1, math.ceil(len(families) / (FAMILY_TASKS_PER_SLOT * executor.slots))))
    with (interrupts_where_safe(), memory_watch(deadline), contextlib.ExitStack() as closing,
          lost_workers_as_limits(scheduler)):
        closing.callback(executor.close)
        check = _table_check("family table", "families", [len(t) for t in tasks], progress, deadline)
        values = executor.map_tasks(family_values, tasks, check=check)
    score.add_family_table({f: v for task, part in zip(tasks, values, strict=True)
                            for f, v in zip(task, part, strict=True)})
    score.share(None)
    return time.perf_counter() - t0


def build_set_table(score: LocalScore, masks: list[int], n_jobs: int, scheduler: str | None,
                    deadline: Deadline | None = None, progress: Callable[[Any], None] | None = None) -> float:
    """ℓ of the sets ``masks`` (:func:`plan_set_table`) computed once on the executor of ``n_jobs``/``scheduler``
    (:func:`bnilp.scores.cg.set_values`, contiguous slices of the sorted masks) and put in the score's set
    table (:meth:`~bnilp.scores.cg.ConditionalGaussian.add_set_table`), which then travels to the workers
    with the score: without it each worker process computed for itself nearly every set, as the families
    of different children share most sets; in one process the sorted order builds each row partition and its
    cells' sums once (the walks' own order cleared the partition cache over and over: 8,545 partitions built
    where at most 576 differ, CGd's continuous children on 15 + 15 columns at palim 3). Past ``deadline`` it
    raises as the walk does; ``progress`` gets a
    :class:`~bnilp.parentsets.TableProgress` (sets) after each task. Returns seconds."""
    from bnilp.scores.cg import set_values

    t0 = time.perf_counter()
    executor = make_executor(score, n_jobs, scheduler)
    step = max(1, math.ceil(len(masks) / (SET_TASKS_PER_SLOT * executor.slots)))
    tasks = [masks[i:i + step] for i in range(0, len(masks), step)]
    with (interrupts_where_safe(), memory_watch(deadline), contextlib.ExitStack() as closing,
          lost_workers_as_limits(scheduler)):
        closing.callback(executor.close)
        check = _table_check("set table", "variable sets", [len(t) for t in tasks], progress, deadline)
        values = executor.map_tasks(set_values, tasks, check=check)
    n = score.data.n
    score.add_set_table({frozenset(j for j in range(n) if m >> j & 1): v
                         for task, part in zip(tasks, values, strict=True)
                         for m, v in zip(task, part, strict=True)})
    return time.perf_counter() - t0


def walk_spec(score: LocalScore, child: int, epsilon: float, active: frozenset[str],
              fixed: tuple[int, ...] = ()) -> WalkSpec:
    """The block-evaluation settings of ``child``'s walk; ``fixed`` parents are in every set (required arrows)."""
    fixed = tuple(sorted(fixed))
    if isinstance(score, DiscreteScore):
        kind = "bdeu" if isinstance(score, BDeu) else "bic"
        return WalkSpec(child, epsilon, active, kind, int(score.data.arities[child]), score.penalty_weight(),
                        getattr(score, "ess", DEFAULT_ESS), fixed)
    return WalkSpec(child, epsilon, active, "generic", fixed=fixed)


@dataclass
class _InFlight:
    """A child's current level in the coordinator: its blocks sent so far (light copies) and their tasks."""

    blocks: list[Block] = field(default_factory=list)
    tasks: list[Any] = field(default_factory=list)
    generated: bool = False     # every block of the level has been generated

    def complete(self) -> bool:
        return self.generated and all(t.done() for t in self.tasks)


def run_walks(score: LocalScore, walks: list[_ChildWalk], n_jobs: int, scheduler: str | None,
              progress: Callable[[Any], None] | None, deadline: Deadline | None = None) -> None:
    """Run every child's walk to the end, blocks on the chosen executor; ``progress`` gets a child's stats when
    its walk ends and after each level of a walk that goes on (``WalkStats.finished`` tells which).

    Blocks are generated on demand: about :data:`BLOCKS_IN_FLIGHT_PER_SLOT` per process are waiting
    or running at once (a base range can yield a few more), taken from the children's levels in the
    order those levels began (so the oldest level completes first and its child can advance). A
    child's next level starts when every block of its level is back; at most
    :data:`ACTIVE_CHILDREN_PER_SLOT` children per process are walked at once. Past ``deadline`` it raises
    :class:`bnilp.parentsets.ScoringTimeLimit`, and with too little memory left
    :class:`~bnilp.parentsets.ScoringMemoryLimit` (:meth:`Deadline.check`, whenever a block comes back)."""
    executor = make_executor(score, n_jobs, scheduler)
    live: dict[int, _InFlight] = {}
    waiting = list(range(len(walks)))[::-1]     # children not started yet (popped from the end)
    child_limit = ACTIVE_CHILDREN_PER_SLOT * executor.slots if executor.slots > 1 else 1
    task_limit = BLOCKS_IN_FLIGHT_PER_SLOT * executor.slots

    def begin(i: int, after_level: bool = False) -> None:
        if walks[i].begin_level():
            live[i] = _InFlight()
            if progress and after_level:
                progress(walks[i].stats)
        elif progress:
            progress(walks[i].stats)

    def fill() -> None:
        busy = sum(not t.done() for state in live.values() for t in state.tasks)
        for i, state in list(live.items()):
            while not state.generated and busy < task_limit:
                blocks = walks[i].more_blocks()
                if blocks is None:
                    state.generated = True
                    break
                for block in blocks:   # the coordinator keeps only what it needs to read the results back
                    state.tasks.append(executor.submit(walks[i].spec, block))
                    state.blocks.append(_light(block))
                    busy += 1

    with (interrupts_where_safe(), memory_watch(deadline), contextlib.ExitStack() as closing,
          lost_workers_as_limits(scheduler)):
        closing.callback(executor.close)
        while live or waiting:
            if deadline is not None:
                deadline.check()
            for i in [i for i, state in live.items() if state.complete()]:
                state = live.pop(i)
                walks[i].absorb(state.blocks, [t.result() for t in state.tasks])
                walks[i].note_level()
                begin(i, after_level=True)
            while waiting and len(live) < child_limit:
                i = waiting.pop()
                walks[i].start()
                begin(i)
            fill()
            # the blocks not done listed first: a block that finished after a look at the levels (none complete)
            # and before the list was left out of it, the list could be empty and the wait never ended
            pending = [t for state in live.values() for t in state.tasks if not t.done()]
            if pending and not any(state.complete() for state in live.values()):
                executor.wait_any(pending)
