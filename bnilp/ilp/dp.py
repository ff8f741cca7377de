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

Cost: n·2^(n−1) table entries (float64) and n²·2^(n−1) steps: n = 20 takes 105 MB, n = 22 460 MB (:func:`dp_bytes`);
:data:`bnilp.ilp.settings.DP_MAX_VARIABLES` bounds it. Subsets of V∖{v} are stored compressed:
bit v removed, the higher bits shifted down by one.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np
from numba import njit

from bnilp.ilp.families import _Data


@njit(cache=True, nogil=True)
def _compress(mask, v):
    low = mask & ((np.int64(1) << v) - 1)
    return low | ((mask >> (v + 1)) << v)


@njit(cache=True, nogil=True)
def _expand(c, v):
    low = c & ((np.int64(1) << v) - 1)
    return low | ((c >> v) << (v + 1))


@njit(cache=True, nogil=True)
def _best_parent_tables(n, pmask, score, start):
    """bps[v, compress(S, v)] = max{score[k] : child v, pmask[k] ⊆ S} (a subset-maximum transform)."""
    size = np.int64(1) << (n - 1)
    bps = np.full((n, size), -np.inf)
    for v in range(n):
        row = bps[v]
        for k in range(start[v], start[v + 1]):
            c = _compress(pmask[k], v)
            if score[k] > row[c]:
                row[c] = score[k]
        for b in range(n - 1):
            step = np.int64(1) << b
            for m in range(size):
                if m & step:
                    other = row[m ^ step]
                    if other > row[m]:
                        row[m] = other
    return bps


@njit(cache=True, nogil=True)
def _forward(n, bps):
    """F over all 2^n subsets and the sink that attains each."""
    full = np.int64(1) << n
    f = np.full(full, -np.inf)
    sink = np.full(full, -1, dtype=np.int8)
    f[0] = 0.0
    for s in range(1, full):
        best = -np.inf
        arg = -1
        for v in range(n):
            bit = np.int64(1) << v
            if s & bit:
                rest = s ^ bit
                val = f[rest] + bps[v, _compress(rest, v)]
                if val > best:
                    best = val
                    arg = v
        f[s] = best
        sink[s] = arg
    return f, sink


@njit(cache=True, nogil=True)
def _backward(n, bps):
    """R over all 2^n subsets."""
    full = np.int64(1) << n
    r = np.full(full, -np.inf)
    r[full - 1] = 0.0
    for t in range(full - 2, -1, -1):
        best = -np.inf
        for u in range(n):
            bit = np.int64(1) << u
            if not t & bit:
                val = bps[u, _compress(t, u)] + r[t | bit]
                if val > best:
                    best = val
        r[t] = best
    return r


@njit(cache=True, nogil=True)
def _best_containing(n, pmask, score, start, f, r):
    """best[k] = score[k] + max_{pmask[k] ⊆ S ⊆ V∖{child}} F(S) + R(S ∪ {child})."""
    size = np.int64(1) << (n - 1)
    out = np.full(score.size, -np.inf)
    g = np.empty(size)
    for v in range(n):
        if start[v + 1] == start[v]:
            continue
        vbit = np.int64(1) << v
        for c in range(size):
            s = _expand(c, v)
            g[c] = f[s] + r[s | vbit]
        for b in range(n - 1):
            step = np.int64(1) << b
            for m in range(size):
                if not m & step:
                    other = g[m | step]
                    if other > g[m]:
                        g[m] = other
        for k in range(start[v], start[v + 1]):
            out[k] = score[k] + g[_compress(pmask[k], v)]
    return out


@dataclass
class DPResult:
    """OPT by dynamic programming (``opt``: the DP's float sum; −inf when no DAG exists), an optimal
    choice of family indices, and, when asked for, the score of the best DAG containing each family
    (``best_containing``)."""

    opt: float
    choice: tuple[int, ...]
    best_containing: np.ndarray | None
    #: F over all 2^n subsets (the bound of :class:`Peeler`); None when no DAG exists
    forward: np.ndarray | None = None


def dp_bytes(n: int) -> int:
    """Memory the DP holds at its peak: n·2^(n−1) best-parent entries, F, R, the sinks and one G_v."""
    return 8 * n * 2 ** (n - 1) + 17 * 2 ** n + 8 * 2 ** (n - 1)


def dp_seconds(n: int) -> float:
    """A generous estimate of the programme's time with the filter (measured 2026-11: n = 22 3.5 s,
    24 16 s, 25 45 s with the table's conversion, on one core of the 2-core machine)."""
    return 3e-9 * n * n * 2 ** n


def free_memory() -> int | None:
    """Bytes of physical memory available now (None where the system does not say)."""
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def solve_dp(data: _Data, containing: bool = False) -> DPResult:
    """Dynamic programming over the families of ``data`` (module docstring): OPT, one optimal DAG
    (a family of the sink of each prefix, best first among those that fit), and with ``containing``
    the best DAG score through each family. ``data.n`` must be ≥ 1. When the table admits no DAG,
    ``opt`` is −inf and ``choice`` empty."""
    n = data.n
    pmask = np.asarray(data.pmask, dtype=np.int64)
    score = np.ascontiguousarray(data.score, dtype=np.float64)
    start = np.asarray(data.start, dtype=np.int64)
    bps = _best_parent_tables(n, pmask, score, start)
    f, sink = _forward(n, bps)
    opt = float(f[(1 << n) - 1])
    if not math.isfinite(opt):          # every order leaves some variable without a family
        return DPResult(-math.inf, (), None)
    choice = []
    s = (1 << n) - 1
    while s:
        v = int(sink[s])
        rest = s & ~(1 << v)
        for k in range(int(start[v]), int(start[v + 1])):      # families best first: the first that fits
            if pmask[k] & ~rest == 0:
                choice.append(k)
                break
        s = rest
    if len(choice) != n:
        raise RuntimeError("dynamic programming lost its optimal DAG")
    best = None
    if containing:
        r = _backward(n, bps)
        del bps
        best = _best_containing(n, pmask, score, start, f, r)
    return DPResult(opt, tuple(sorted(choice)), best, f)


# ---------------------------------------------------------------------------------------------------
# Enumeration: every DAG with s(G) ≥ T, each once, by peeling canonical sinks under the bound F.
# ---------------------------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _peel(n, pmask, score, start, f, stack_s, stack_n, stack_need, stack_v, stack_k, state, choice, out,
          max_steps):
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

    @property
    def done(self) -> bool:
        return bool(self.state[0] < 0)

    def next_chunk(self, max_steps: int = 2_000_000) -> np.ndarray:
        self.state[1] = 0
        if self.done:
            return self.out[:0]
        self.steps += _peel(self.n, self.pmask, self.score, self.start, self.f, self.stack_s, self.stack_n,
                            self.stack_need, self.stack_v, self.stack_k, self.state, self.choice, self.out,
                            max_steps)
        return self.out[:int(self.state[1])].copy()
