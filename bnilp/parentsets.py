"""Candidate parent sets: a lattice walk with the ε-relaxed pruning rules of ``pruning.md``.

For each child the walk visits parent sets by size (0, 1, 2, …). A set of size k is generated only
if all its (k−1)-subsets were generated and none of the rules that prune *supersets* fired on
them; it is then scored, and rule R1 decides whether it is written. Memory is proportional to the
current frontier (two levels), not to all subsets.

Invariant (soundness): a parent set used by some DAG G with s(G) ≥ OPT − ε is never pruned. Each
rule below shows that a set it removes can be swapped for a subset that scores more than ε higher;
the swap keeps the DAG acyclic, so the DAG is below OPT − ε. The rules compare with a small
tolerance on the side of keeping (a borderline set is kept).

Sources: Liao, Sharma, Cussens & van Beek (AAAI 2019), Lemma 1, Theorems 1–4 and the supplement,
with signs fixed and Theorem 2 tightened as in ``shared/docs/pruning.md``; de Campos & Ji (2011)
for the classic ε = 0 forms.
"""

from __future__ import annotations

import _thread
import contextlib
import logging
import math
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bnilp.errors import (
    InputError,
    LimitError,
    caused_by_interrupt,
    check_callback,
    check_count,
    check_flag,
    check_real,
    check_seconds,
    interrupts_as_keyboard,
)
from bnilp.memory import free_memory, memory_floor, worker_count
from bnilp.provenance import provenance
from bnilp.scorefile import ScoreTable
from bnilp.scores.base import LocalScore, bayes_factor, check_score, tie_tolerance
from bnilp.scores.discrete import DiscreteScore
from bnilp.scores.subsets import COUNT_MODES
from bnilp.threads import retries_pending

log = logging.getLogger(__name__)

ALL_RULES = frozenset({"R1", "R2", "R3", "R4", "R5", "R6"})
SUPERSET_RULES = frozenset({"R2", "R3", "R4", "R5", "R6"})
#: family budget that picks the palim when no rule bounds the parent-set size (mixed scores, priors)
DEFAULT_FAMILY_BUDGET = 250_000
#: refuse an unpruned, unlimited walk past this many parent sets per child
MAX_UNPRUNED_SETS = 1 << 16


#: a scoring walk stops (:class:`ScoringMemoryLimit`) when the memory the system has left
#: (:func:`bnilp.memory.free_memory`) falls below this share of its physical memory, or below
#: SCORING_MEMORY_FLOOR_BYTES if that is larger — so that the caller reports it, instead of the operating
#: system's out-of-memory killer ending the process without a word (BDeu on sponge: 24 GiB in 4.5 minutes)
SCORING_MEMORY_FLOOR_SHARE = 0.05
SCORING_MEMORY_FLOOR_BYTES = 1 << 29
#: seconds between two looks at the free memory (one read of /proc/meminfo, ~20 µs)
MEMORY_CHECK_SECONDS = 0.2


def scoring_memory_floor() -> int:
    """Bytes of free memory below which a scoring walk stops (:data:`SCORING_MEMORY_FLOOR_SHARE`)."""
    return memory_floor(SCORING_MEMORY_FLOOR_SHARE, SCORING_MEMORY_FLOOR_BYTES)


@dataclass
class Deadline:
    """When a scoring walk stops: its current pass at ``at`` (``score_parent_sets(time_limit=…)``; ∞
    without one), and the walk when free memory falls below ``memory_floor`` bytes (None: never)."""

    at: float
    memory_floor: int | None = None
    next_look: float = field(default=0.0, repr=False)

    def passed(self) -> bool:
        return time.perf_counter() > self.at

    def check(self) -> None:
        """Raise :class:`ScoringTimeLimit` past ``at``, :class:`ScoringMemoryLimit` when the free memory
        (looked at every :data:`MEMORY_CHECK_SECONDS`) is below ``memory_floor``."""
        if self.passed():
            raise ScoringTimeLimit
        now = time.perf_counter()
        if self.memory_floor is not None and now >= self.next_look:
            self.next_look = now + MEMORY_CHECK_SECONDS
            free = free_memory()
            if free is not None and free < self.memory_floor:
                raise ScoringMemoryLimit.below_floor(free, self.memory_floor)


#: how long :func:`memory_watch` waits at most for an interrupt put off (:func:`~bnilp.threads.retries_pending`)
PUT_OFF_WAIT_SECONDS = 30.0


def _let_interrupt_arrive() -> None:
    """Take an interrupt of :func:`memory_watch` that is still to come: one set for the main thread arrives at its
    next Python step (0.1 s is ample); one that the CLI's handler put off (it landed in a lock step or a finalizer)
    comes when :mod:`bnilp.threads`' thread sends it again — waited for, up to :data:`PUT_OFF_WAIT_SECONDS`."""
    with contextlib.suppress(KeyboardInterrupt):
        for _ in range(100):
            time.sleep(0.001)
        if retries_pending():
            give_up = time.monotonic() + PUT_OFF_WAIT_SECONDS
            while retries_pending() and time.monotonic() < give_up:
                time.sleep(0.001)
            for _ in range(100):
                time.sleep(0.001)


@dataclass
class _Watch:
    """A :func:`memory_watch`: whether it may interrupt (only while the block runs), and the free bytes it saw
    when it did."""

    active: bool = False
    fired: int | None = None


@contextmanager
def memory_watch(deadline: Deadline | None) -> Iterator[None]:
    """Stop the walk in the block when the free memory falls below ``deadline.memory_floor``, even inside
    one long step (building a level of millions of sets holds the walk for seconds while it allocates
    gigabytes: :meth:`Deadline.check` between blocks came too late on sponge).

    A thread looks every :data:`MEMORY_CHECK_SECONDS`; below the floor it interrupts the main thread
    (``_thread.interrupt_main``), and the ``KeyboardInterrupt`` that arrives in the block becomes
    :class:`ScoringMemoryLimit`, also where the code it lands in re-raises it wrapped (numba's dispatcher
    makes it a ``SystemError``: BDeu on flag failed so); one that is still pending when the block ends is
    let in and dropped here, never later; none is sent before the block begins (on a loaded machine the main
    thread can still be in ``Thread.start`` when the first look finds memory short: an interrupt there escaped
    as a bare ``KeyboardInterrupt``). The interrupt arrives between Python steps, so a single call into
    compiled code finishes first (a level's build is many such calls, each well under a second).
    :meth:`Deadline.check` still looks between blocks too (and alone where the walk does not run on the main
    thread)."""
    if (deadline is None or deadline.memory_floor is None
            or threading.current_thread() is not threading.main_thread()):
        yield
        return
    lock, stop = threading.Lock(), threading.Event()
    state = _Watch()
    floor = deadline.memory_floor

    def watch() -> None:
        while not stop.wait(max(MEMORY_CHECK_SECONDS, 0.01)):
            free = free_memory()
            if free is not None and free < floor:
                with lock:
                    if not state.active:    # the block has not begun (or has ended): no interrupt outside it
                        continue
                    state.fired = free
                    _thread.interrupt_main()
                return

    thread = threading.Thread(target=watch, name="bnilp-memory-watch", daemon=True)
    thread.start()
    try:
        try:
            with lock:
                state.active = True
            yield
        finally:
            with lock:
                state.active = False
            stop.set()
            if state.fired is not None:     # let a pending interrupt arrive here, not in the caller
                _let_interrupt_arrive()
    except BaseException as exc:
        if state.fired is None or not caused_by_interrupt(exc):
            raise
        raise ScoringMemoryLimit.below_floor(state.fired, floor) from None
    finally:
        thread.join()
    if state.fired is not None:
        raise ScoringMemoryLimit.below_floor(state.fired, floor)


class ScoringTimeLimit(Exception):
    """A pass of the walk reached its :class:`Deadline` (caught by :func:`score_parent_sets`)."""


class ScoringMemoryLimit(Exception):
    """The system's free memory fell below the walk's floor, or an allocation failed (caught by
    :func:`score_parent_sets`)."""

    @classmethod
    def below_floor(cls, free: int, floor: int) -> ScoringMemoryLimit:
        return cls(f"the system had {free / 2**30:.2f} GiB of memory left, below the scoring walk's floor of "
                   f"{floor / 2**30:.2f} GiB")

    @classmethod
    def failed(cls, exc: MemoryError) -> ScoringMemoryLimit:
        """An allocation that failed: under a cap on the process's memory (``ulimit -v``, a batch system's
        limit), which the free-memory floor does not see, or with the system out of memory."""
        return cls(f"an allocation failed ({str(exc) or 'MemoryError'}): the process's memory is capped (ulimit -v, "
                   "a batch system's limit) or the system has none left")


def _tol(value):
    """Slack that makes every rule keep borderline sets (floating-point safety); scalars or arrays."""
    return tie_tolerance(value)


def r1_dominated(score: float, best_subset: float, epsilon: float) -> bool:
    """R1 (Lemma 1), any decomposable score: prune Π′ if s(Π′) < s(Π) − ε for some Π ⊊ Π′.

    Proof: in a DAG using Π′, replace Π′ by Π; still acyclic, total rises by more than ε, so the
    DAG scores below OPT − ε. Supersets of Π′ are not covered. ``best_subset`` is the best score
    over all proper subsets, pruned ones included (their scores are valid comparators).
    """
    return score < best_subset - epsilon - _tol(best_subset)


def r2_penalty_bound(penalty: float, best_subset: float, epsilon: float) -> bool:
    """R2 (Theorem 1), BIC: s(Π″) = LL(Π″) − pen(Π″) ≤ −pen(Π″) since LL ≤ 0 for a discrete child.

    If −pen(Π′) < s(Π) − ε for a subset Π, then every Π″ ⊇ Π′ has s(Π″) ≤ −pen(Π″) ≤ −pen(Π′) <
    s(Π) − ε (penalties grow with supersets, and Π ⊂ Π″): prune Π′ and all its supersets.
    """
    return -penalty < best_subset - epsilon - _tol(best_subset)


def r3_no_superset_pays(ll: float, w: float, r_child: int, q: float, epsilon: float) -> bool:
    """R3 (Theorem 2, tightened), BIC: for Π″ ⊋ Π, s(Π″) − s(Π) ≤ −LL(Π) − w·(r_i−1)·q_Π.

    Because LL(Π″) ≤ 0 and q_Π″ ≥ 2·q_Π (every arity ≥ 2), s(Π″) ≤ −2w(r_i−1)q_Π while
    s(Π) = LL(Π) − w(r_i−1)q_Π. If w(r_i−1)q_Π + LL(Π) > ε every proper superset scores more than ε
    below Π: prune all proper supersets of Π (Π itself is kept if R1 lets it).
    """
    gain_bound = -ll - w * (r_child - 1) * q
    return gain_bound < -epsilon - _tol(ll)


def r4_entropy_bound(nh_child: float, nh_new: float, w: float, r_child: int, q: float, r_new: int,
                     epsilon: float) -> bool:
    """R4 (Theorem 3), BIC: LL(Π∪{j}) − LL(Π) = N·I(V_i; V_j | Π) ≤ N·min{H(V_i|Π), H(V_j|Π)}.

    The penalty grows by w(r_i−1)q_Π(r_j−1). If N·min{…} − w(r_i−1)q_Π(r_j−1) < −ε then
    s(Π∪{j}) < s(Π) − ε; adding any S to both sides lowers both entropies and raises q, so the
    same holds for Π∪S∪{j} against Π∪S: prune Π∪{j} and all its supersets.
    ``nh_child`` = N·H(V_i|Π) = −LL(Π); ``nh_new`` = N·H(V_j|Π).
    """
    bound = np.minimum(nh_child, nh_new) - w * (r_child - 1) * q * (r_new - 1)
    return bound < -epsilon - _tol(nh_child)


def r5_bdeu_bound(q_plus: int, r_child: int, best_subset: float, epsilon: float) -> bool:
    """R5 (Theorem 4), BDeu: each observed parent configuration adds at most −ln r_i.

    The first row of a configuration has predictive probability 1/r_i and the later ones at
    most 1, so s(Π″) ≤ −q⁺_Π″·ln r_i, and q⁺ never shrinks for supersets. If −q⁺_Π′·ln r_i <
    s(Π) − ε for a subset Π, prune Π′ and all its supersets.
    """
    return -q_plus * math.log(r_child) < best_subset - epsilon - _tol(best_subset)


def r6_bdeu_cell_bound(c_plus, r_child: int, best_subset, epsilon: float):
    """R6 (new), BDeu: each *non-empty cell* (configuration j, child state k) costs at least ln r_i.

    Bound: s_BDeu(Π″) ≤ −c⁺_Π″·ln r_i, with c⁺ the number of cells n_ijk > 0; and c⁺_Π″ ≥ c⁺_Π′ for
    every Π″ ⊇ Π′. If −c⁺_Π′·ln r_i < s(Π) − ε for a subset Π ⊊ Π′, prune Π′ and all its supersets.
    It implies R5 (c⁺ ≥ q⁺, each observed configuration holds a state) and is up to r_i times tighter.

    Proof. Write the BDeu term of one configuration j (α′ = α/q, rows in any order) as the product of
    the predictive probabilities (α′/r_i + m_k)/(α′ + t) of its rows, t = rows of j before this one and
    m_k = those of them in state k. Every factor is ≤ 1. The *first* row in state k has m_k = 0, so
    its factor is (α′/r_i)/(α′ + t) ≤ 1/r_i. So the term is at most −d_j·ln r_i, d_j the number of
    states seen in configuration j, and s_BDeu(Π″) ≤ −ln r_i·Σ_j d_j = −c⁺_Π″·ln r_i (unobserved
    configurations contribute 0). Monotonicity: every non-empty cell (j, k) of Π′ holds a row, and
    that row's configuration j″ of Π″ ⊇ Π′ refines j, so (j″, k) is non-empty; distinct (j, k) give
    distinct (j″, k). So c⁺_Π″ ≥ c⁺_Π′ and s(Π″) ≤ −c⁺_Π′·ln r_i < s(Π) − ε with Π ⊂ Π″: by Lemma 1
    no DAG within ε of OPT uses Π″. The walk also applies it *before counting* a candidate, with the
    largest c⁺ of its subsets (a lower bound of its own c⁺).
    """
    return -c_plus * math.log(r_child) < best_subset - epsilon - _tol(best_subset)


@dataclass
class WalkStats:
    """What the walk did for one child."""

    child: str
    scored: int = 0
    kept: int = 0
    pruned: dict[str, int] = field(default_factory=lambda: {r: 0 for r in sorted(ALL_RULES)})
    max_size: int = 0
    palim_reached: bool = False
    seconds: float = 0.0
    #: a pass of the deepening (:func:`_deepen`) stopped this walk below its own palim
    depth_cut: bool = False
    #: the walk has ended (``progress`` also gets a running walk's stats after each level, with this False)
    finished: bool = False
    #: the size of the parent sets of the last level scored (a running walk's progress)
    level: int = 0
    #: the parent sets carried to the next level (generated from them), after the last level scored
    frontier: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"scored": self.scored, "kept": self.kept, "pruned": dict(self.pruned),
                "max_kept_size": self.max_size, "palim_reached": self.palim_reached,
                "seconds": round(self.seconds, 4)}


@dataclass
class TableProgress:
    """How far a table computed ahead of the walks has got (``progress`` gets one after each of its tasks): the
    subset table's counts (:func:`bnilp.lattice.build_subset_table`: ``done`` of ``total`` parts) or ℓ of the
    variable sets of a set-function walk (:func:`bnilp.lattice.build_set_table`: sets).
    ``finished`` is False, as for a walk still running."""

    table: str
    done: int
    total: int
    unit: str
    seconds: float
    finished: bool = False


@dataclass
class _Node:
    """A generated parent set on the frontier: its score and the best score of any subset ≤ it."""

    score: float
    best_up_to: float
    ll: float = 0.0
    q: float = 1.0
    nh: float = 0.0


def walk_child(
    score: LocalScore,
    child: int,
    *,
    epsilon: float = 0.0,
    palim: int | None = None,
    rules: Iterable[str] | None = None,
    banned: frozenset[int] = frozenset(),
) -> tuple[dict[tuple[int, ...], float], WalkStats]:
    """All parent sets of ``child`` that survive the rules (a dict sorted-tuple → local score): the reference
    walk, one family at a time, that the lattice engine (:mod:`bnilp.lattice`, which scores every data set)
    reproduces set for set and score for score (``tests/test_scoring_scale.py``).

    ``rules`` restricts the rules used (default: every rule the score says is sound for this
    child); an empty set keeps every parent set up to ``palim``. ``banned``: parents that are never
    scored (forbidden arrows, see :func:`score_parent_sets`).
    """
    t0 = time.perf_counter()
    data = score.data
    stats = WalkStats(child=data.names[child])
    sound = score.pruning_rules(child)
    active = sound if rules is None else sound & frozenset(rules)
    discrete = isinstance(score, DiscreteScore)
    if active & SUPERSET_RULES and not discrete:
        raise InputError(f"rules {sorted(active & SUPERSET_RULES)} need a discrete score")
    candidates = [j for j in range(data.n) if score.allowed_parent(child, j) and j not in banned]
    if palim is None and not active & SUPERSET_RULES and len(candidates) > 16:
        raise InputError(f"no rule bounds the parent sets of {data.names[child]!r}: "
                         f"give palim (--palim) (it has {len(candidates)} candidate parents)")
    w = score.penalty_weight() if discrete else 0.0
    arities = data.arities
    r_child = arities[child]
    kept: dict[tuple[int, ...], float] = {}

    def evaluate(parents: tuple[int, ...], best_subset: float) -> _Node | None:
        """Score ``parents``; None if a superset rule prunes it (and all its supersets) first."""
        if discrete:
            q = score.q_all(parents)
            if "R2" in active and r2_penalty_bound(score.penalty_weight() * q * (r_child - 1), best_subset,
                                                   epsilon):
                stats.pruned["R2"] += 1
                return None
            fam = score.canonical_stats(child, parents)
            q_plus, nh = fam.q_plus, fam.nh
            if "R5" in active and r5_bdeu_bound(q_plus, r_child, best_subset, epsilon):
                stats.pruned["R5"] += 1
                return None
            if "R6" in active and r6_bdeu_cell_bound(fam.c_plus, r_child, best_subset, epsilon):
                stats.pruned["R6"] += 1
                return None
            if "R4" in active and parents:
                for j in parents:
                    sub = frontier[tuple(x for x in parents if x != j)]
                    if r4_entropy_bound(-sub.ll, nh - sub.nh, w, r_child, sub.q, arities[j], epsilon):
                        stats.pruned["R4"] += 1
                        return None
            stats.scored += 1
            return _Node(fam.score, max(fam.score, best_subset), fam.ll, q, nh)
        value = score.local(child, parents)
        if not math.isfinite(value):
            raise InputError(f"score {score.name!r} gave {value} for {data.names[child]!r} "
                             f"with parents {[data.names[p] for p in parents]}")
        stats.scored += 1
        return _Node(value, max(value, best_subset))

    def expandable(parents: tuple[int, ...], node: _Node) -> bool:
        if "R3" in active and r3_no_superset_pays(node.ll, w, r_child, node.q, epsilon):
            stats.pruned["R3"] += 1
            return False
        return True

    frontier: dict[tuple[int, ...], _Node] = {}
    empty = evaluate((), -math.inf)
    assert empty is not None
    kept[()] = empty.score
    if expandable((), empty):
        frontier[()] = empty
    def next_level_scores_any() -> bool:
        """Whether the walk past the palim would score a set: a candidate whose subsets all survived and that
        R2 (which needs only q) lets through — as the lattice's ``_any_candidate``, so a palim that cuts
        nothing the rules would not is no limit."""
        for base in frontier:
            for j in candidates:
                if j <= (base[-1] if base else -1):
                    continue
                parents = base + (j,)
                subs = [frontier.get(tuple(y for y in parents if y != x)) for x in parents]
                if any(sub is None for sub in subs):
                    continue
                best_subset = max(sub.best_up_to for sub in subs)
                if not (discrete and "R2" in active and r2_penalty_bound(
                        score.penalty_weight() * score.q_all(parents) * (r_child - 1), best_subset, epsilon)):
                    return True
        return False

    size = 0
    while frontier:
        if palim is not None and size >= palim:
            stats.palim_reached = next_level_scores_any()
            break
        size += 1
        nxt: dict[tuple[int, ...], _Node] = {}
        for base in sorted(frontier):
            last = base[-1] if base else -1
            for j in candidates:
                if j <= last:
                    continue
                parents = base + (j,)
                best_subset = -math.inf
                complete = True
                for x in parents:
                    sub = frontier.get(tuple(y for y in parents if y != x))
                    if sub is None:
                        complete = False
                        break
                    best_subset = max(best_subset, sub.best_up_to)
                if not complete:
                    continue
                node = evaluate(parents, best_subset)
                if node is None:
                    continue
                if "R1" in active and r1_dominated(node.score, best_subset, epsilon):
                    stats.pruned["R1"] += 1
                else:
                    kept[parents] = node.score
                    stats.max_size = size
                if expandable(parents, node):
                    nxt[parents] = node
        frontier = nxt
        if not active and len(kept) > MAX_UNPRUNED_SETS and palim is None:
            raise InputError(f"prune=False (--no-prune) without palim (--palim): more than {MAX_UNPRUNED_SETS} "
                             f"parent sets for {data.names[child]!r}; give --palim")
    stats.kept = len(kept)
    stats.seconds = time.perf_counter() - t0
    stats.finished = True
    return kept, stats


def default_palim(n_variables: int, budget: int = DEFAULT_FAMILY_BUDGET) -> int:
    """Largest K with n·Σ_{k≤K} C(n−1, k) ≤ ``budget`` (at least 1): every set up to K gets scored."""
    total, k = n_variables, 0
    while k < n_variables - 1:
        more = n_variables * math.comb(n_variables - 1, k + 1)
        if total + more > budget:
            break
        total += more
        k += 1
    return max(k, 1)


def needs_default_palim(score: LocalScore, rules: Iterable[str] | None = None) -> bool:
    """True when, for some child, no sound rule bounds the size of parent sets."""
    allowed = ALL_RULES if rules is None else frozenset(rules)
    return any(not (score.walk_score(i).pruning_rules(i) & allowed & SUPERSET_RULES) for i in range(score.data.n))


def _palim_by_default(score: LocalScore, prune: bool, rules: frozenset[str] | None) -> int | None:
    """The palim used when none is given: :func:`default_palim` where no rule bounds some child's sets
    (or without pruning on more than 16 variables), else None."""
    if prune and not needs_default_palim(score, rules):
        return None
    if not prune and score.data.n <= 16:
        return None
    return default_palim(score.data.n)


@interrupts_as_keyboard
def score_parent_sets(
    score: LocalScore,
    *,
    epsilon: float = 0.0,
    palim: int | None = None,
    prune: bool = True,
    rules: Iterable[str] | None = None,
    n_jobs: int = 1,
    scheduler: str | None = None,
    progress: Callable[[WalkStats], None] | None = None,
    knowledge: Any = None,
    counts: str = "auto",
    time_limit: float | None = None,
    table_progress: Callable[[TableProgress], None] | None = None,
) -> ScoreTable:
    """Score and prune the parent sets of every variable; returns the :class:`ScoreTable`.

    ``knowledge`` (a :class:`bnilp.knowledge.Knowledge`, a dict or a file path) restricts the walk so
    that the table is sound for the credible set of the DAGs that satisfy it (:func:`_knowledge_plan`):
    forbidden parents are never scored, every kept set holds the child's required parents, and the
    sidecar (``meta["knowledge"]``) records the statements.

    ``palim``: the largest parent set scored (``None``: no limit beyond what the rules prove). ``rules``:
    the pruning rules to apply, a subset of :data:`ALL_RULES` (default: every rule the score says is sound for
    the child, ``LocalScore.pruning_rules``). ``progress``: called with a child's :class:`WalkStats` when its
    walk ends (``finished`` True) and, while it runs, after each level of parent sets it has scored
    (``finished`` False; ``level`` the size just scored, ``frontier`` the sets the next level extends, ``scored``
    and ``seconds`` so far) — one child's walk can take minutes. ``table_progress``: called with a
    :class:`TableProgress` after each task of a table computed ahead of the walks (the subset table; the set
    table of a CG/CGd walk, :func:`bnilp.lattice.build_set_table`), which can take minutes too.

    ε = ln(BF) ≥ 0. ``prune=False`` keeps every set up to ``palim``. When no rule bounds the size
    for some child (mixed scores, structure priors) and no ``palim`` is given,
    :func:`default_palim` is used and recorded in ``meta`` (the result is then exact for
    parent sets of at most that size). ``n_jobs`` runs blocks of parent sets (within and across
    children) on ``n_jobs`` processes (:func:`bnilp.lattice.start_pool`); ``scheduler`` (a Dask address, or
    ``"local"``) runs them on a Dask cluster. ``counts`` (:data:`bnilp.scores.subsets.COUNT_MODES`): ``auto``
    counts each variable subset once and shares it between the families that use it where that applies and pays
    (:func:`bnilp.lattice.plan_subset_table`: discrete BDeu, or BIC on at least
    :data:`bnilp.lattice.SUBSET_TABLE_MIN_ROWS` distinct rows; at most
    :data:`bnilp.scores.subsets.SUBSET_TABLE_MAX_SUBSETS` subsets; ``meta["counts"]`` says what was done
    and why), ``families`` counts every family on its own,
    ``subsets`` requires the table. The kept sets and their scores are the same in every mode.

    ``time_limit`` (seconds) deepens the walk instead (:func:`_deepen`): passes with palim 1, 2, … until
    one needs no larger sets (the complete result) or time runs out; then the last finished pass is
    returned, exact for parent sets up to its palim, and ``meta`` says so (``palim_reached``,
    ``exact_for_parent_sets_up_to``, ``score_time_limit_reached``). A deeper pass that cannot run (an
    :class:`InputError`, e.g. ``counts='subsets'`` past its table's size) or that a lost worker process ends (a
    :class:`~bnilp.errors.LimitError`, :func:`lost_workers_as_limits`) ends the deepening the same way, its
    message in ``meta["score_deeper_pass_refused"]`` (the time limit is then not what stopped it).

    Memory: the walk stops when the system's free memory falls below :func:`scoring_memory_floor`
    (:func:`memory_watch`). With
    ``time_limit`` that ends the deepening like the clock (``score_memory_limit_reached``); without it
    :class:`bnilp.errors.LimitError` is raised (the CLI exits 3), since no finished pass is there to keep.
    """
    check_score(score)
    check_flag(prune, "prune")
    check_callback(progress)
    check_callback(table_progress, "table_progress")
    progress = _routed(progress, table_progress)
    epsilon = check_real(epsilon, "epsilon (--epsilon)", 0)
    n_jobs = check_count(n_jobs, "n_jobs (--jobs)", 1, also=(-1,))
    # an address, 'local', or a Dask cluster object (distributed.Client takes it); not a pandas Series
    if scheduler is not None and (not scheduler if isinstance(scheduler, str)
                                  else not hasattr(scheduler, "scheduler_address")):
        raise InputError(f"scheduler (--scheduler) must be a Dask scheduler's address, 'local' or a Dask cluster, "
                         f"got {scheduler!r}")
    if scheduler is None or (isinstance(scheduler, str) and scheduler == "local"):   # this machine: its cores
        n_jobs = worker_count(n_jobs)
    if time_limit is not None:
        time_limit = check_seconds(time_limit, "time_limit (--score-time-limit)", positive=True)
        return _deepen(score, time_limit, dict(epsilon=epsilon, palim=palim, prune=prune, rules=rules,
                                                n_jobs=n_jobs, scheduler=scheduler, progress=progress,
                                                knowledge=knowledge, counts=counts))
    try:
        return _score_parent_sets(score, epsilon=epsilon, palim=palim, prune=prune, rules=rules, n_jobs=n_jobs,
                                  scheduler=scheduler, progress=progress, knowledge=knowledge, counts=counts,
                                  deadline=Deadline(math.inf, scoring_memory_floor()))
    except ScoringMemoryLimit as exc:
        raise _scoring_stopped(exc) from None


def _scoring_stopped(exc: ScoringMemoryLimit) -> LimitError:
    """The limit a walk that ran the system short of memory ends the scoring with, where no finished pass is kept."""
    return LimitError(f"scoring stopped: {exc}; time_limit (--score-time-limit) keeps the largest parent-set size "
                      "the walk finished, palim (--palim) bounds the walk")


def _routed(progress: Callable[[WalkStats], None] | None, table_progress: Callable[[TableProgress], None] | None
            ) -> Callable[[Any], None] | None:
    """The one callback the walk calls: a :class:`WalkStats` to ``progress``, a :class:`TableProgress` to
    ``table_progress`` (a caller's ``progress`` is never given what it did not ask for)."""
    if progress is None and table_progress is None:
        return None

    def route(stats: Any) -> None:
        to = table_progress if isinstance(stats, TableProgress) else progress
        if to is not None:
            to(stats)

    return route


def _deepen(score: LocalScore, time_limit: float, kwargs: dict[str, Any]) -> ScoreTable:
    """Iterative deepening under a time limit: the walk with every child's palim capped at p = 1, 2, …
    (:func:`_score_parent_sets` ``depth``), each pass stopped at the deadline.

    Why a finished pass is exact for parent sets of size ≤ p: every rule decides a set from its own
    counts and its subsets' scores and bounds, never from larger sets, so the walk with palim p keeps
    exactly the sets of size ≤ p that the unlimited walk keeps. A pass in which no child was cut by the
    depth (no candidate beyond p survived generation, or the child's own palim — given, default, or of
    required knowledge — is ≤ p) is the run without a time limit, with its record. The cost of the
    earlier passes is the sum of smaller lattices (about one more pass where levels grow geometrically).
    """
    deadline = Deadline(time.perf_counter() + time_limit, scoring_memory_floor())
    t0 = time.perf_counter()
    out_of_memory = False
    refused: str | None = None              # a deeper pass that could not run (InputError), not the clock
    passes: list[dict[str, Any]] = []
    last: ScoreTable | None = None
    table: ScoreTable | None = None
    depth = 1
    while True:
        started = time.perf_counter()
        record: dict[str, Any] = {"palim": depth}
        try:
            table = _score_parent_sets(score, **kwargs, deadline=deadline, depth=depth)
        except ScoringTimeLimit:
            passes.append({**record, "seconds": round(time.perf_counter() - started, 4), "finished": False})
            break
        except ScoringMemoryLimit as exc:
            out_of_memory = True
            passes.append({**record, "seconds": round(time.perf_counter() - started, 4), "finished": False,
                           "stopped": str(exc)})
            break
        except (InputError, LimitError) as exc:     # counts='subsets' no longer fits, or a worker process died
            if last is None:                        # under the pass (lost_workers_as_limits): keep what is exact
                raise
            refused = str(exc)
            passes.append({**record, "seconds": round(time.perf_counter() - started, 4), "finished": False,
                           "stopped": str(exc)})
            break
        passes.append({**record, "seconds": round(time.perf_counter() - started, 4), "finished": True})
        if not table.meta.pop("depth_cut"):
            break
        last, table = table, None
        depth += 1
    if table is None:
        kept_depth = depth - 1
        try:        # no pass finished: the required parents alone (depth 0), or the limit if even they do not fit
            table = last if last is not None else _score_parent_sets(score, **kwargs, depth=0)
        except ScoringMemoryLimit as exc:      # (a review: a traceback, exit 1, where the walk without the limit
            raise _scoring_stopped(exc) from None      # ended in one line, exit 3)
        table.meta.pop("depth_cut", None)
        own = table.meta["exact_for_parent_sets_up_to"] if table.meta["palim_reached"] else None  # e.g. knowledge's
        table.meta.update(palim=kept_depth, palim_default=False, palim_reached=True,
                          exact_for_parent_sets_up_to=kept_depth if own is None else min(kept_depth, own))
    table.meta.update(score_time_limit=time_limit,
                      score_time_limit_reached=not passes[-1]["finished"] and not out_of_memory and refused is None,
                      score_memory_limit_reached=out_of_memory,
                      deepening=passes, seconds=round(time.perf_counter() - t0, 4))
    if refused is not None:
        table.meta["score_deeper_pass_refused"] = refused
    return table


def _score_parent_sets(score: LocalScore, **kwargs: Any) -> ScoreTable:
    """:func:`_score_pass`, a ``MemoryError`` in it turned into :class:`ScoringMemoryLimit`: an allocation refused
    under a cap on the process's memory (``ulimit -v``), which the free-memory floor does not see, stops the walk
    as running short of free memory does (a review's find: a traceback; with a time limit the last finished pass
    is kept)."""
    try:
        return _score_pass(score, **kwargs)
    except MemoryError as exc:
        raise ScoringMemoryLimit.failed(exc) from None


def _score_pass(score: LocalScore, *, epsilon: float, palim: int | None, prune: bool,
                rules: Iterable[str] | None, n_jobs: int, scheduler: str | None,
                progress: Callable[[WalkStats], None] | None, knowledge: Any, counts: str,
                deadline: Deadline | None = None, depth: int | None = None) -> ScoreTable:
    """:func:`score_parent_sets` without a time limit, or one pass of :func:`_deepen`: every child's palim
    capped at ``depth``, stopped at ``deadline``; ``meta["depth_cut"]`` says whether the cap cut a walk
    that its own palim would have continued."""
    if not isinstance(counts, str) or counts not in COUNT_MODES:
        raise InputError(f"counts (--counts) must be one of {', '.join(COUNT_MODES)}, got {counts!r}")
    if not (math.isfinite(epsilon) and epsilon >= 0):
        raise InputError(f"ε must be a finite number ≥ 0, got {epsilon}")
    if palim is not None:
        palim = check_count(palim, "palim (--palim)", 0)
    if rules is not None and not isinstance(rules, str) and not isinstance(rules, Iterable):
        raise InputError(f"rules must be a list of pruning rules ({', '.join(sorted(ALL_RULES))}), got {rules!r}")
    rule_set = frozenset([rules] if isinstance(rules, str) else map(str, rules)) if rules is not None else None
    if rule_set is not None and rule_set - ALL_RULES:
        raise InputError(f"rules: unknown pruning rules {sorted(map(str, rule_set - ALL_RULES))} "
                         f"(known: {', '.join(sorted(ALL_RULES))})")
    if not prune:
        rule_set = frozenset()
    plan = _knowledge_plan(score, knowledge)
    if plan is not None and palim is not None:      # the walk kept the required set itself, past the palim
        over = next(((v, ps) for v, ps in plan.required.items() if len(ps) > palim), None)
        if over is not None:                        # as restrict_table says it of a table scored with this palim
            raise InputError(f"knowledge: no candidate parent set of {over[0]!r} agrees with the knowledge (it must "
                             f"contain {sorted(over[1])}; palim {palim})")
    palim_default = False
    fallback = _palim_by_default(score, prune, rule_set) if palim is None else None
    if fallback is not None:
        palim, palim_default = fallback, True
        if palim < score.data.n - 1 and depth in (None, 1):    # once: not again on each deepening pass (a review)
            log.warning("no pruning rule bounds the parent-set size for some variables: using palim %d", palim)
    elif palim is None and plan is not None and plan.unpruned and score.data.n > 16:
        plan.palim = default_palim(score.data.n)     # only the children walked without pruning
        which = (f"all {score.data.n} variables are" if len(plan.unpruned) == score.data.n
                 else f"variables {[score.data.names[i] for i in sorted(plan.unpruned)]} are")
        log.warning("required knowledge (adjacencies, ancestor relations, dependences): %s walked without pruning, "
                    "with palim %d", which, plan.palim)
    t0 = time.perf_counter()
    children = list(range(score.data.n))
    results, counting = _run_lattice(score, children, epsilon, palim, rule_set, n_jobs, scheduler, progress, plan,
                                     counts, deadline, depth)
    names = score.data.names
    if plan is not None:
        results = [({ps: s for ps, s in fam.items() if plan.required.get(names[i], frozenset()) <= ps}, st)
                   for i, (fam, st) in zip(children, results, strict=True)]
        for fam, st in results:
            st.kept = len(fam)
    families = {names[i]: fam for i, (fam, _) in zip(children, results, strict=True)}
    per_var = {names[i]: st.to_dict() for i, (_, st) in zip(children, results, strict=True)}
    palim_cut = any(st.palim_reached and not st.depth_cut for _, st in results)   # by the palim, not a pass
    pruned_total = {r: sum(st.pruned[r] for _, st in results) for r in sorted(ALL_RULES)}
    meta: dict[str, Any] = {
        **score.settings(),
        **score.data.describe(),
        "epsilon": epsilon,
        "bf": bayes_factor(epsilon),
        "palim": palim,
        "palim_default": palim_default,
        "palim_reached": palim_cut,
        "exact_for_parent_sets_up_to": (palim if palim is not None else plan.palim if plan else None)
        if palim_cut else None,
        "prune": prune,
        "rules": sorted(rule_set if rule_set is not None else ALL_RULES) if prune else [],
        "rules_applied": {names[i]: sorted(score.walk_score(i).pruning_rules(i) & (rule_set if rule_set is not None
                                                                      else ALL_RULES)) for i in children},
        "scored": sum(st.scored for _, st in results),
        "kept": sum(st.kept for _, st in results),
        "pruned": pruned_total,
        "seconds": round(time.perf_counter() - t0, 4),
        "counts": counting,
        "per_variable": per_var,
        "provenance": provenance(),
    }
    if depth is not None:
        meta["depth_cut"] = any(st.depth_cut for _, st in results)
    if plan is not None:
        meta["knowledge"] = plan.knowledge.to_dict()
        meta["knowledge_unpruned"] = [names[i] for i in sorted(plan.unpruned)]
        meta["knowledge_palim"] = plan.palim
    return ScoreTable(variables=list(names), families=families, meta=meta)


def _run_lattice(score: LocalScore, children: list[int], epsilon: float, palim: int | None,
                 rules: frozenset[str] | None, n_jobs: int, scheduler: str | None,
                 progress: Callable[[WalkStats], None] | None,
                 plan: _Plan | None = None, counts: str = "auto", deadline: Deadline | None = None,
                 depth: int | None = None, scale: float | None = None,
                 ) -> tuple[list[tuple[dict[frozenset[str], float], WalkStats]], dict[str, Any]]:
    """Every child's walk through :mod:`bnilp.lattice` (blocks within and across children, any executor);
    also how the families were counted (``counts``: :data:`bnilp.scores.subsets.COUNT_MODES`).

    A child walks on ``score.walk_score(child)`` (CGd's discrete children on its BIC view of the binned data,
    the same values, counted compiled and pruned by BIC's rules); the children of each such score walk
    together, those of ``score`` first (CGd's ``counts`` then gives the view's as ``discrete_children``).
    Under ``scheduler="local"`` a discrete view walks on this process's threads (what a local cluster gives a
    discrete score), so the run needs one cluster, of the shape ``score`` needs."""
    from bnilp.lattice import _ChildWalk, walk_spec

    data = score.data
    if scale is None:
        scale = search_scale(score, children, plan)
    walk_epsilon = epsilon + float(tie_tolerance(scale))
    walks = []
    own_palims = []
    for child in children:
        banned, child_rules, child_palim = _planned(plan, child, rules, palim)
        own_palims.append(child_palim)
        if depth is not None:               # a pass of _deepen: the depth caps the child's own palim
            child_palim = depth if child_palim is None else min(child_palim, depth)
        walker = score.walk_score(child)
        sound = walker.pruning_rules(child)
        active = sound if child_rules is None else sound & child_rules
        if active & SUPERSET_RULES and not isinstance(walker, DiscreteScore):
            raise InputError(f"rules {sorted(active & SUPERSET_RULES)} need a discrete score")
        fixed = plan.fixed.get(child, ()) if plan is not None else ()
        candidates = [j for j in range(data.n)
                      if walker.allowed_parent(child, j) and j not in banned and j not in fixed]
        if child_palim is None and not active & SUPERSET_RULES and len(candidates) > 16:
            raise InputError(f"no rule bounds the parent sets of {data.names[child]!r}: "
                             f"give palim (--palim) (it has {len(candidates)} candidate parents)")
        walks.append(_ChildWalk(walker, walk_spec(walker, child, walk_epsilon, frozenset(active), fixed), candidates,
                                child_palim,
                                WalkStats(child=data.names[child]), MAX_UNPRUNED_SETS))
    views = {id(w.score): w.score for w in walks if w.score is not score}
    counting: dict[str, Any] = {}
    if any(w.score is score for w in walks):     # first: a counts mode that does not apply fails at once
        counting = _walk_counts(score, [w for w in walks if w.score is score], counts, n_jobs, scheduler,
                                progress, deadline)
    for view in views.values():
        local = scheduler == "local" and isinstance(view, DiscreteScore)
        done = _walk_counts(view, [w for w in walks if w.score is view], counts, n_jobs,
                            None if local else scheduler, progress, deadline)
        counting = {**counting, "discrete_children": done} if counting else done
    if depth is not None:
        for walk, own in zip(walks, own_palims, strict=True):
            walk.stats.depth_cut = walk.stats.palim_reached and (own is None or depth < own)
    reached = sum(max(walk.kept.values(), default=0.0) for walk in walks)        # Σ_v best_v ≥ OPT
    if reached > scale * (1.0 + 1e-12) + 1.0:
        # the best families' total passes the bound the slack was made for (densities of near-deterministic
        # children): once more with it (the bests are the same: no rule removes a child's best set)
        return _run_lattice(score, children, epsilon, palim, rules, n_jobs, scheduler, progress, plan, counts,
                            deadline, depth, scale=reached)
    names = data.names
    return [({frozenset(names[p] for p in ps): s for ps, s in walk.kept.items()}, walk.stats)
            for walk in walks], counting


def search_scale(score: LocalScore, children: list[int], plan: _Plan | None = None) -> float:
    """S = Σ_v max(|s_v(∅)|, |s_v(R_v)|) (R_v the child's required parents): a bound of |OPT| where no family
    scores above 0 (every discrete score): OPT lies between the empty graph's total (or the required parents') and
    0. The walk prunes for ε + TIE_RTOL·S, not ε: the search lists every DAG down to OPT − ε − TIE_RTOL·|OPT|
    (:func:`bnilp.scores.base.tie_tolerance`: rounding), and a rule's own slack, TIE_RTOL·|s| of one family, is
    smaller by up to a factor n — a family between the two was pruned while the search counted its DAG, and
    class counting stopped with "class 2 has 2 DAGs but the table admits only 1" (a review: N = 20,000, ε 5e-5
    from a family's gap). OPT ∈ [Σ_v s_v(base), Σ_v best_v], so |OPT| ≤ max(S, Σ_v best_v): where the best
    families total more than S (densities of near-deterministic continuous children), :func:`_run_lattice` walks
    once more with that total."""
    total = 0.0
    probe = score.with_data(score.data)     # its caches are not the walk's: the set table still holds every set
    for child in children:
        walker = probe.walk_score(child)
        fixed = tuple(sorted(plan.fixed.get(child, ()))) if plan is not None else ()
        base = abs(walker.local(child, ()))
        if fixed:
            base = max(base, abs(walker.local(child, fixed)))
        total += base
    return total


#: the subset table's build costs about this many seconds per distinct row and subset on one core (measured
#: 2.9 ns on the 10⁶-row run; README, "How it counts")
TABLE_SECONDS_PER_ROW_SUBSET = 3e-9
#: under a scoring time limit, the table is built only if that estimate is at most this share of the time left
TABLE_SHARE_OF_TIME_LEFT = 0.25


def _table_fits(score: LocalScore, plan: Any, n_jobs: int, deadline: Deadline) -> bool:
    """Whether a pass of :func:`_deepen` can afford the subset table (its build does not check the deadline)."""

    estimate = plan.subsets * score.count_context().n_rows * TABLE_SECONDS_PER_ROW_SUBSET / max(1, n_jobs)
    return estimate <= TABLE_SHARE_OF_TIME_LEFT * (deadline.at - time.perf_counter())


def _walk_counts(score: LocalScore, walks: list, counts: str, n_jobs: int, scheduler: str | None,
                 progress: Callable[[WalkStats], None] | None, deadline: Deadline | None = None) -> dict[str, Any]:
    """Run the walks, with a subset table (:mod:`bnilp.scores.subsets`) where ``counts`` asks for one and
    it applies: the table is counted on the executor, then the walks (look-ups) run on the executor too
    (the table travels with the score: once per worker, in the file or the scatter of the score). A score
    whose families are differences of one set function (CG, CGd's continuous children) gets its set table
    first (:func:`bnilp.lattice.plan_set_table`): ℓ of each set the walks will ask for, computed once (split
    across the workers) in the order that shares the cells' sums; the walks then run on look-ups, in this
    process when no child needs more (``counts["set_table"]``). A score whose families share sums kept per row
    partition (MVP, MML) gets a family table instead (:func:`bnilp.lattice.plan_family_table`): every family the walks
    will score, computed once, sorted by partition (``counts["family_table"]``). Returns what was done, for the
    sidecar."""
    from bnilp.lattice import (
        build_family_table,
        build_set_table,
        build_subset_table,
        plan_family_table,
        plan_set_table,
        plan_subset_table,
        run_walks,
    )

    plan, why = plan_subset_table(score, walks, forced=counts == "subsets") if counts != "families" \
        else (None, "--counts families")
    if plan is not None and deadline is not None and counts == "auto" and not _table_fits(score, plan, n_jobs,
                                                                                          deadline):
        plan, why = None, "the scoring time limit (the table's build is not interrupted)"
    if plan is None:
        if counts == "subsets":
            raise InputError(f"counts='subsets' (--counts subsets) does not apply here: {why}")
        out = {"mode": "families", "reason": why}
        sets = plan_set_table(score, walks)[0]
        if sets is not None:        # computed once (across the workers), in the order that shares cell sums
            if sets:
                log.info("computing ℓ of %d variable sets for the walk", len(sets))
                seconds = build_set_table(score, sets, n_jobs, scheduler, deadline, progress)
                out["set_table"] = {"sets": len(sets), "seconds": round(seconds, 4)}
            if all(score.uses_set_function(w.spec.child) for w in walks):
                n_jobs, scheduler = 1, None  # every family is two look-ups now: no work to send away
        else:
            families = plan_family_table(score, walks)[0]
            if families is not None:    # scored once, by partition (MVP's bases built once per partition)
                if families:
                    log.info("scoring %d families by partition for the walk", len(families))
                    seconds = build_family_table(score, families, n_jobs, scheduler, deadline, progress)
                    out["family_table"] = {"families": len(families), "seconds": round(seconds, 4)}
                if all(score.holds_family(w.spec.child, w.spec.fixed) for w in walks):
                    n_jobs, scheduler = 1, None     # every family is a look-up now (a score used before too)
        run_walks(score, walks, n_jobs, scheduler, progress, deadline)
        return out
    log.info("counting %d variable subsets (|T| ≤ %d) for the walk", plan.subsets, plan.max_size)
    ctx = score.count_context()
    table = build_subset_table(score, plan, n_jobs, scheduler, progress)
    if deadline is not None:
        deadline.check()
    ctx.table = table
    t0 = time.perf_counter()
    try:
        run_walks(score, walks, n_jobs, scheduler, progress, deadline)
    finally:
        ctx.table = None
    return {"mode": "subsets", "subsets": table.counted, "max_size": plan.max_size,
            "q_max": plan.q_max if math.isfinite(plan.q_max) else None,
            "table_seconds": round(table.seconds, 4), "walk_seconds": round(time.perf_counter() - t0, 4)}


@contextlib.contextmanager
def lost_workers_as_limits(scheduler: object = None) -> Iterator[None]:
    """A worker process that dies under the walk (the kernel's out-of-memory killer, a crash) ends the run
    as a :class:`~bnilp.errors.LimitError` — one line, exit 3 — not a pool's traceback: loky's
    ``TerminatedWorkerError`` (a ``BrokenExecutor``), Dask's ``KilledWorker`` and the cancelled futures of
    a worker that left. On this machine (``scheduler`` None or ``"local"``) the line names memory and
    ``n_jobs``, which decide it; a worker of a cluster given by address (or a ``Client``) lives elsewhere,
    where ``n_jobs`` does not reach, and the line points to that cluster's logs."""
    from concurrent.futures import BrokenExecutor, CancelledError

    try:
        yield
    except Exception as exc:
        if not (isinstance(exc, (BrokenExecutor, CancelledError)) or _killed_dask_worker(exc)):
            raise
        if scheduler is None or (isinstance(scheduler, str) and scheduler == "local"):
            why = ("most often killed by the operating system for memory; fewer n_jobs (--jobs) or a palim "
                   "(--palim) need less")
        else:
            where = scheduler if isinstance(scheduler, str) else f"given ({type(scheduler).__name__})"
            why = (f"on the Dask cluster {where}: its workers' logs say why (memory is the most common cause; a "
                   "palim (--palim) needs less)")
        raise LimitError(f"scoring stopped: a worker process ended unexpectedly ({type(exc).__name__}), "
                         f"{why}") from None


def _killed_dask_worker(exc: BaseException) -> bool:
    """Whether ``exc`` is Dask's ``KilledWorker``, looked up only where Dask is loaded (a Dask cluster ran the
    walk): importing ``distributed`` on every run took 0.5 s of each first pass, and a memory stop that landed in
    that import left it half made — the fallback pass then failed with an ``AttributeError`` (said as
    "interrupted", exit 130, no file) and so did every later scoring call of the process."""
    scheduler = sys.modules.get("distributed.scheduler")
    killed = getattr(scheduler, "KilledWorker", None)
    return killed is not None and isinstance(exc, killed)


@dataclass
class _Plan:
    """How background knowledge shapes the walk: ``banned[i]`` parents never scored for child i,
    ``unpruned`` children walked without pruning rules (with ``palim`` when n > 16 and no palim was
    given), ``required`` R_v (name → names)."""

    knowledge: Any
    banned: dict[int, frozenset[int]]
    unpruned: frozenset[int]
    required: dict[str, frozenset[str]]
    palim: int | None = None
    #: child → its required parents (indices), the fixed base of its lattice walk
    fixed: dict[int, tuple[int, ...]] = field(default_factory=dict)


def _knowledge_plan(score: LocalScore, knowledge: Any) -> _Plan | None:
    """The walk under knowledge K, and why the table stays sound for {G ∈ D(K): s(G) ≥ OPT_K − ε}.

    Every rule removes a set Π of child v because some Π' ⊂ Π scores more than ε higher, so the DAG
    G with Π is below s(G') − ε, G' = G with Π' at v (acyclic: fewer arrows). Under K that argument
    needs G' ∈ D(K):

    - forbidden arrows (tiers, forbidden adjacencies, forbidden ancestor relations): G' has a subset
      of G's arrows and paths, so G' ∈ D(K) whenever G is — banned parents are simply never
      candidates (never scored), and every rule stays sound;
    - required parents R_v: the lattice walk is the lattice of the sets Π ⊇ R_v — R_v is the
      fixed base of every set (``WalkSpec.fixed``), so every rule compares Π only with subsets Π' with
      R_v ⊆ Π' ⊂ Π, and G' (Π' at v) keeps every required arrow: G' ∈ D(K), and all rules stay sound
      and active.
    - a required adjacency at v, a required ancestor relation, a conditional dependence: dropping a parent
      can break them (a dependence holds in supergraphs, not subgraphs), so G' may lie outside D(K) and OPT_K
      may be lower than s(G'). Such a child v (every child, when K requires an ancestor relation or a
      dependence) is walked with no pruning rule — every set up to the palim is
      scored (:func:`default_palim` when n > 16, recorded as usual) — and only the sets Π ⊇ R_v are
      kept. Exact, at the cost of a larger table for those children.
    """
    from bnilp.knowledge import Knowledge

    k = Knowledge.coerce(knowledge)
    if k is None or k.empty():
        return None
    names = score.data.names
    k.validated(names, score.data.dropped)
    index = {v: i for i, v in enumerate(names)}
    banned: dict[int, set[int]] = {}
    for a, b in k.forbidden_arrows():
        banned.setdefault(index[b], set()).add(index[a])
    required = k.required_parents()
    unpruned = set()
    unpruned |= {index[v] for e in k.required_adjacent for v in e}
    if k.required_ancestors or k.dependent:
        unpruned = set(range(len(names)))
    fixed = {index[v]: tuple(sorted(index[p] for p in ps)) for v, ps in required.items()}
    return _Plan(k, {i: frozenset(b) for i, b in banned.items()}, frozenset(unpruned), required, fixed=fixed)


def _planned(plan: _Plan | None, child: int, rules: frozenset[str] | None,
             palim: int | None) -> tuple[frozenset[int], frozenset[str] | None, int | None]:
    """(banned parents, rules, palim) of one child's walk under ``plan``."""
    if plan is None:
        return frozenset(), rules, palim
    if child in plan.unpruned:
        return plan.banned.get(child, frozenset()), frozenset(), palim if palim is not None else plan.palim
    return plan.banned.get(child, frozenset()), rules, palim


