"""Window search: a block of consecutive variables of an order re-ordered exactly by dynamic programming.

For an order π, the best DAG consistent with it scores S(π) = Σ_v max{s(v, Π) : Π ⊆ pred_π(v)} (Teyssier &
Koller, UAI 2005, §3). Take the k variables B = π[a : a + k] with the prefix P = π[:a] before them. Any
re-ordering of B leaves every other variable's set of predecessors as it was (a prefix variable's is a part of
P; a suffix variable's holds all of P ∪ B), so the best re-ordering of B is the best order of B alone with P
available to all of it — the subset recursion of Silander & Myllymäki (UAI 2006, §3) over B:

    f(∅) = 0,   f(S) = max_{v ∈ S} f(S ∖ {v}) + bps_v(P ∪ S ∖ {v}),   bps_v(W) = max{s(v, Π) : Π ⊆ W},

and bps_v over the subsets T of B is the subset maximum (a zeta transform in (max, +)) of g_v(T) = the best
family of v whose parents lie in P ∪ B and meet B in exactly T. f(B) is at least the block's present share of
S(π), since its present order is one of the k! orders, so a sweep of windows never lowers S(π); with k = n it is
the exact programme over all orders (OPT). Cost per window: k·2^k for the recursion (2^k float64 and int64
entries: 16 MB at k = 20) and |U|·2^|U| for each member's transform, U the block positions its families use.

:func:`window_search` sweeps windows over an order until none improves it. The sink heuristic's plugin
(:mod:`bnilp.ilp.heur_sinks`) calls it on its roundings once phase 1 has run a while (``WINDOW_SEARCH``): on
soybean, 36 variables, SCIP's incumbent stalled 3 nats below OPT for hundreds of seconds where insertion moves
(:mod:`bnilp.ilp.heur_orders`) stall too; windows of 20 reach OPT from a few starts."""

from __future__ import annotations

import math

import numpy as np

from bnilp.compiled import njit
from bnilp.ilp.families import _Data
from bnilp.ilp.heur_orders import _best_given, _predecessors, topological_order


@njit(cache=True, nogil=True)
def _block_dp(block: np.ndarray, prefix: np.uint64, start: np.ndarray, pm: np.ndarray,
              key: np.ndarray) -> tuple[float, np.ndarray]:
    """The best order of ``block`` (variable indices) after the variables of the bit mask ``prefix``: the value
    f(B) of the recursion in the module's docstring (−inf when some member has no family within reach) and
    the order attaining it. Families of v are ``start[v]:start[v+1]``, parent masks ``pm``, values ``key``.

    Member i's table g_i is kept over the subsets of U_i, the block positions its families within reach use
    (bps_i(S) = bps_i(S ∩ U_i)), so its transform costs |U_i|·2^|U_i|; S ∩ U_i is compressed to an index by
    two look-up tables, one per half of the block's bits."""
    k = block.shape[0]
    full = 1 << k
    one = np.uint64(1)
    inblock = np.uint64(0)
    for b in range(k):
        inblock |= one << np.uint64(block[b])
    allowed = prefix | inblock
    # each member's families within reach, as block-position masks
    used = np.zeros(k, np.int64)
    nfam = 0
    for i in range(k):
        v = block[i]
        for f in range(start[v], start[v + 1]):
            if (pm[f] & ~allowed) == 0 and key[f] > -np.inf:
                nfam += 1
    fam_t = np.empty(nfam, np.int64)
    fam_key = np.empty(nfam, np.float64)
    fam_of = np.empty(nfam, np.int64)
    nfam = 0
    for i in range(k):
        v = block[i]
        for f in range(start[v], start[v + 1]):
            m = pm[f]
            if (m & ~allowed) != 0 or not key[f] > -np.inf:
                continue
            t = 0
            for b in range(k):
                if m & (one << np.uint64(block[b])):
                    t |= 1 << b
            fam_t[nfam] = t
            fam_key[nfam] = key[f]
            fam_of[nfam] = i
            used[i] |= t
            nfam += 1
    # compression tables: index of S ∩ U_i = lo[i, S mod 2^h] | hi[i, S >> h]
    h = k // 2
    lo = np.zeros((k, 1 << h), np.int64)
    hi = np.zeros((k, 1 << (k - h)), np.int64)
    size = np.zeros(k, np.int64)
    offset = np.zeros(k + 1, np.int64)
    for i in range(k):
        u = used[i]
        nlo = 0
        for b in range(h):
            if u & (1 << b):
                nlo += 1
        for x in range(1 << h):
            c = 0
            j = 0
            for b in range(h):
                if u & (1 << b):
                    if x & (1 << b):
                        c |= 1 << j
                    j += 1
            lo[i, x] = c
        for y in range(1 << (k - h)):
            c = 0
            j = 0
            for b in range(k - h):
                if u & (1 << (b + h)):
                    if y & (1 << b):
                        c |= 1 << j
                    j += 1
            hi[i, y] = c << nlo
        bits = 0
        for b in range(k):
            if u & (1 << b):
                bits += 1
        size[i] = bits
        offset[i + 1] = offset[i] + (1 << bits)
    bps = np.full(offset[k], -np.inf)
    for q in range(nfam):
        i = fam_of[q]
        t = fam_t[q]
        c = lo[i, t & ((1 << h) - 1)] | hi[i, t >> h]
        if fam_key[q] > bps[offset[i] + c]:
            bps[offset[i] + c] = fam_key[q]
    for i in range(k):                          # subset maximum over U_i: g[S] = max over T ⊆ S
        o = offset[i]
        cnt = 1 << size[i]
        for b in range(size[i]):
            bb = 1 << b
            for s in range(cnt):
                if (s & bb) and bps[o + (s ^ bb)] > bps[o + s]:
                    bps[o + s] = bps[o + (s ^ bb)]
    f = np.full(full, -np.inf)
    last = np.full(full, -1, np.int64)
    f[0] = 0.0
    mlo = (1 << h) - 1
    for s in range(1, full):
        for i in range(k):
            bi = 1 << i
            if s & bi:
                r = s ^ bi
                val = f[r] + bps[offset[i] + (lo[i, r & mlo] | hi[i, r >> h])]
                if val > f[s]:
                    f[s] = val
                    last[s] = i
    out = block.copy()
    s = full - 1
    if last[s] < 0:
        return f[s], out
    for pos in range(k - 1, -1, -1):
        i = last[s]
        out[pos] = block[i]
        s ^= 1 << i
    return f[full - 1], out


def _order_value(data: _Data, key: np.ndarray, pm: np.ndarray, order: list[int], bit: np.ndarray) -> float:
    best, _ = _best_given(data, key, pm, _predecessors(order, bit))
    return math.fsum(best)


#: the largest window: its recursion holds 2^k float64 and int64 entries (k = 26: 1 GiB)
MAX_WINDOW = 26


def window_starts(n: int, k: int) -> list[int]:
    """Where the windows of one sweep begin: every ⌈k/2⌉ positions (neighbours overlap by half), the last
    window ending at the order's end."""
    if k >= n:
        return [0]
    step = max(1, (k + 1) // 2)
    return sorted(set(range(0, n - k + 1, step)) | {n - k})


def window_search(data: _Data, choice: tuple[int, ...], k: int, usable: np.ndarray | None = None,
                  max_sweeps: int = 50) -> tuple[tuple[int, ...], list[int] | None]:
    """A parent choice at least as good as ``choice``, by sweeps of exact window re-orderings.

    Starts from the topological order of ``choice`` and, window by window (:func:`window_starts`, size
    min(k, n)), replaces the block by its best order (the recursion in the module's docstring) when that raises
    the order's score S(π) by more than 1e-9; sweeps until one changes nothing or ``max_sweeps``. The result is
    the best DAG of the final order, so every family's parents precede its child, and it scores at least as much
    as ``choice``. ``usable`` restricts the families (default: all).

    Returns the improved choice and its order (``choice`` itself and None when nothing improves it, it has a
    cycle or families outside ``usable``, or n > 63: the masks are 64-bit). Raises ValueError when ``k``
    exceeds :data:`MAX_WINDOW`."""
    if k > MAX_WINDOW:
        raise ValueError(f"k = {k}: a window holds at most MAX_WINDOW = {MAX_WINDOW} variables "
                         f"(its tables take 2^k entries)")
    n = data.n
    order = topological_order(data, choice)
    if order is None or n < 2 or n > 63 or k < 2:
        return choice, None
    key = data.score if usable is None else np.where(usable, data.score, -np.inf)
    if not all(np.isfinite(key[c]) for c in choice):
        return choice, None
    k = min(k, n)
    pm = np.asarray(data.pmask, dtype=np.uint64)
    bit = np.left_shift(np.uint64(1), np.arange(n, dtype=np.uint64))
    start = np.asarray(data.start, dtype=np.int64)
    value = _order_value(data, key, pm, order, bit)
    done: dict[int, list[int]] = {}             # window start → order[:a + k] when it last changed nothing
    for _ in range(max_sweeps):
        improved = False
        for a in window_starts(n, k):
            if done.get(a) == order[:a + k]:
                continue                        # same prefix set and block order: the same answer
            prefix = np.uint64(0)
            for u in order[:a]:
                prefix |= bit[u]
            _, block = _block_dp(np.asarray(order[a:a + k], dtype=np.int64), prefix, start, pm, key)
            candidate = order[:a] + [int(u) for u in block] + order[a + k:]
            new = _order_value(data, key, pm, candidate, bit)
            if new > value + 1e-9:
                value, order, improved = new, candidate, True
            else:
                done[a] = order[:a + k]
        if not improved:
            break
    _, first = _best_given(data, key, pm, _predecessors(order, bit))
    new_choice = tuple(int(c) for c in first)
    if any(c < 0 for c in new_choice) or (math.fsum(data.score[c] for c in new_choice)
                                          <= math.fsum(data.score[c] for c in choice) + 1e-9):
        return choice, None
    return new_choice, order
