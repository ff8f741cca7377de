"""Order-based local search: a DAG improved by moving one variable in its topological order.

A DAG defines orders of its variables; for an order, the best DAG consistent with it takes for each
variable its best family whose parents all precede it (Teyssier & Koller, UAI 2005, "Ordering-based
search", §3: the score of an order). :func:`climb_orders` starts from a DAG's topological order and
applies the best *insertion* move (one variable taken out and put back elsewhere) while it improves the
score — the rounding of the sink heuristic (:mod:`bnilp.ilp.heur_sinks`) can be a few such moves from a
better network. It is a plain function; the sink heuristic's plugin calls it on the DAGs it rounds."""

from __future__ import annotations

import math

import numpy as np

from bnilp.errors import InputError
from bnilp.graphs import dag_order
from bnilp.ilp.families import _Data


def topological_order(data: _Data, choice: tuple[int, ...]) -> list[int] | None:
    """The variables of the parent choice ``choice`` (one family index per variable) parents first,
    or None when the choice has a cycle."""
    try:
        return dag_order({v: np.flatnonzero(data.pbool[k]).tolist() for v, k in enumerate(choice)})
    except InputError:              # the choice's directed cycle
        return None


def _predecessors(order: list[int], bit: np.ndarray) -> np.ndarray:
    """Per variable, the bit mask of the variables before it in ``order``."""
    pred = np.zeros(len(order), dtype=np.uint64)
    acc = np.uint64(0)
    for v in order:
        pred[v] = acc
        acc |= bit[v]
    return pred


def _best_given(data: _Data, key: np.ndarray, pm: np.ndarray, pred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per variable, the best ``key`` over its families whose parents lie in ``pred[v]`` (bit masks), and
    the first (best-first) family attaining it; −inf / −1 where none."""
    ok = (pm & ~pred[data.child]) == 0
    k = np.where(ok, key, -np.inf)
    best = np.maximum.reduceat(k, data.start[:-1])
    hit = ok & (k >= best[data.child])
    first = np.minimum.reduceat(np.where(hit, np.arange(data.K), data.K), data.start[:-1])
    return best, np.where(np.isfinite(best), first, -1)


def climb_orders(data: _Data, choice: tuple[int, ...], usable: np.ndarray | None = None,
                 max_moves: int = 200) -> tuple[tuple[int, ...], list[int] | None]:
    """A parent choice at least as good as ``choice``, by best-improvement insertion moves on orders.

    The order's score is ``Σ_v max{s(v, Π) : Π ⊆ pred(v), Π usable}`` (Teyssier & Koller 2005); it is
    never below the score of ``choice`` (whose families are consistent with its own topological order),
    and each accepted move raises it by more than 1e-9, so the result is a DAG (every family's parents
    precede its child) scoring at least as much as ``choice``. Moving v from position i to j changes
    the predecessors of v and of the variables between: for j < i they gain v, for j > i they lose it;
    all targets of one v are scored at once from three evaluations of the families (prefix sums).
    ``usable`` restricts the families (default: all); at most ``max_moves`` moves.

    Returns the improved choice and the order it is the best DAG of (``choice`` itself and None when no
    move improves it, it has a cycle or families outside ``usable``, or n > 63: the masks are 64-bit)."""
    n = data.n
    order = topological_order(data, choice)
    if order is None or n < 2 or n > 63:
        return choice, None
    key = data.score if usable is None else np.where(usable, data.score, -np.inf)
    if not all(np.isfinite(key[k]) for k in choice):
        return choice, None
    pm = np.asarray(data.pmask, dtype=np.uint64)
    bit = np.left_shift(np.uint64(1), np.arange(n, dtype=np.uint64))
    for _ in range(max_moves):
        pred = _predecessors(order, bit)
        b0, _ = _best_given(data, key, pm, pred)
        best_gain, best_move = 1e-9, None
        for i, v in enumerate(order):
            others = order[:i] + order[i + 1:]
            # v's best family when inserted at position j of ``others`` (after its first j members)
            fam = slice(data.start[v], data.start[v + 1])
            pos = np.full(n, -1)
            pos[others] = np.arange(n - 1)
            pb = data.pbool[fam]
            first_ok = np.where(pb, pos[None, :], -1).max(axis=1) + 1     # parents among the first j others
            own = np.full(n, -np.inf)
            np.maximum.at(own, first_ok, key[fam])
            own = np.maximum.accumulate(own)                         # own[j]: best with the first j others
            plus, _ = _best_given(data, key, pm, pred | bit[v])
            minus, _ = _best_given(data, key, pm, pred & ~bit[v])
            dplus = plus[others] - b0[others]       # u gains v as a predecessor (b0 is finite: the DAG's own)
            dminus = minus[others] - b0[others]     # u loses v (−inf where u has no family without v)
            # v inserted after the first j others: for j < i others[j:i] gain v, for j > i others[i:j] lose it
            cplus = np.concatenate([[0.0], np.cumsum(dplus)])
            cminus = np.concatenate([[0.0], np.cumsum(dminus)])
            for j in range(n):
                if j == i:
                    continue
                delta = own[j] - b0[v] + (cplus[i] - cplus[j] if j < i else cminus[j] - cminus[i])
                if delta > best_gain and math.isfinite(delta):
                    best_gain, best_move = delta, (i, j)
        if best_move is None:
            break
        i, j = best_move
        v = order.pop(i)
        order.insert(j, v)
    _, first = _best_given(data, key, pm, _predecessors(order, bit))
    new = tuple(int(k) for k in first)
    if any(k < 0 for k in new) or math.fsum(data.score[k] for k in new) <= math.fsum(data.score[k] for k in choice):
        return choice, None
    return new, order
