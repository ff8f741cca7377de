"""Phase 2 on several processes: the credible set split into cubes by adjacency, one branch-and-cut per cube.

A *cube* fixes the adjacency of a few variable pairs. The pair {u, v} is adjacent in a DAG iff
a(u, v) = Σ_{Π ∋ v} x(u, Π) + Σ_{Π ∋ u} x(v, Π) = 1 (the 2-cluster row makes the sum ≤ 1), so the 2^k sign
vectors over k pairs cut the DAGs into disjoint parts, and since Markov equivalent DAGs share their skeleton
(Verma & Pearl 1990), each equivalence class lies whole in one part: the cubes' credible lists are disjoint
in both enumeration units and their union is the credible set — as are the leaves of any binary tree
that splits on one pair at each node, which is what splitting a running cube makes. Each cube is phase 2's own
branch-and-cut (:func:`bnilp.ilp.search._phase2_model`) with the rows a(u, v) = 0 or 1 added — the
self-splitting of a search tree among workers that never talk (Fischetti, Monaci & Salvagnin, 2014), here with
more cubes than workers, handed out as workers free up, because the parts are far from equal, and, where
:data:`~bnilp.ilp.settings.PHASE2_STEAL_SECONDS` allows, a running cube split for an idle worker.

:func:`split_pairs` (which pairs can split the set), :func:`balanced_pairs` (which of them split what the serial
start found most evenly), :func:`cube_order` (the cheapest first) and :func:`steal_pair` (how a running cube
gives half of itself to an idle worker) are the plain, testable choice of cubes;
:func:`enumerate_in_cubes` runs the cubes on ``jobs`` processes, gathers what they find as they go, and stops
them all at the network cap, a memory stop or a signal.
"""

from __future__ import annotations

import math
import os
import pickle
import queue as queue_module
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bnilp.ilp import settings
from bnilp.ilp.classbest import BestPerClass
from bnilp.ilp.families import _Data
from bnilp.memory import keep_grown_loky_workers
from bnilp.scores.base import tie_tolerance
from bnilp.threads import children_start_deaf_to_ctrl_c, deaf_to_ctrl_c

#: seconds the coordinator waits for a message before it looks at the cubes again
_POLL_SECONDS = 0.2

#: seconds to wait, after the last cube returned, for records it sent that have not arrived
_SETTLE_SECONDS = 10.0

#: Cube statuses that mean "nothing credible is left in it" (SCIP proves the objective limit unreachable)
_CUBE_DONE = ("infeasible", "optimal")


def adjacency_families(data: _Data, u: int, v: int) -> np.ndarray:
    """The families whose indicator sum is a(u, v): u's parent sets holding v and v's holding u."""
    return np.flatnonzero(((data.child == u) & data.pbool[:, v]) | ((data.child == v) & data.pbool[:, u]))


def pair_costs(data: _Data) -> tuple[np.ndarray, np.ndarray]:
    """(adj, apart), n × n: the least loss (best_i − s(i, Π) summed over the variables) that making {u, v}
    adjacent, or keeping it apart, costs, ignoring acyclicity — adj = min(min_{Π ∋ v} loss_u(Π),
    min_{Π ∋ u} loss_v(Π)), apart = min_{Π ∌ v} loss_u(Π) + min_{Π ∌ u} loss_v(Π) (inf where impossible)."""
    n = data.n
    loss = -np.asarray(data.obj, dtype=float)
    with_v = np.full((n, n), math.inf)          # [u, v]: cheapest family of u holding v
    without_v = np.full((n, n), math.inf)       # [u, v]: cheapest family of u not holding v
    for u in range(n):
        block = slice(int(data.start[u]), int(data.start[u + 1]))
        pb = data.pbool[block]
        lu = loss[block][:, None]
        if pb.shape[0]:
            with_v[u] = np.where(pb, lu, math.inf).min(axis=0)
            without_v[u] = np.where(~pb, lu, math.inf).min(axis=0)
    return np.minimum(with_v, with_v.T), without_v + without_v.T


def split_pairs(data: _Data, budget: float, k: int | None = None,
                costs: tuple[np.ndarray, np.ndarray] | None = None) -> list[tuple[int, int]]:
    """Up to ``k`` pairs {u, v} (every one with ``k=None``) to split the credible set on, both of whose sides may
    hold credible DAGs.

    A DAG G has s(G) = Σ_i best_i − Σ_i loss_i(Π_i) with loss_i(Π) = best_i − s(i, Π) ≥ 0, so it is credible
    only if Σ_i loss_i ≤ ``budget`` = Σ_i best_i − OPT + ε. Ignoring acyclicity, making {u, v} adjacent costs
    at least adj and keeping it apart at least apart (:func:`pair_costs`). Pairs with both ≤ ``budget`` qualify,
    ranked by max(adj, apart), cheapest first (both sides likely to hold much of the set; ties by the pair), and
    those sharing no variable with a pair ranked before them come first (pairs on one variable, or on twins,
    split the set alike and leave cubes empty). The first ``k`` of that order; fewer (none: no split) when fewer
    pairs qualify. ``costs``: :func:`pair_costs` of ``data`` where the caller has it already.
    """
    n = data.n
    adj, apart = pair_costs(data) if costs is None else costs
    cost = np.maximum(adj, apart)
    tol = float(tie_tolerance(budget))
    iu, jv = np.triu_indices(n, 1)
    ok = (adj[iu, jv] <= budget + tol) & (apart[iu, jv] <= budget + tol)
    cand = [(u, v) for _, u, v in sorted(zip(cost[iu, jv][ok].tolist(), iu[ok].tolist(), jv[ok].tolist(),
                                             strict=True))]
    disjoint: list[tuple[int, int]] = []
    used: set[int] = set()
    for u, v in cand:
        if u not in used and v not in used:
            disjoint.append((u, v))
            used.update((u, v))
    taken = set(disjoint)
    ranked = disjoint + [p for p in cand if p not in taken]
    return ranked if k is None else ranked[:max(0, k)]


#: A cube: the pairs {u, v} it fixes, each with a(u, v) = 0 (apart) or 1 (adjacent)
Cube = list[tuple[tuple[int, int], int]]


def _adjacency(data: _Data, sample: list[tuple[int, ...]] | np.ndarray, pairs: list[tuple[int, int]]) -> np.ndarray:
    """(S, P) booleans: pair p adjacent in the DAG of the family choice ``sample[s]``."""
    rows = np.asarray(sample, dtype=np.int64).reshape(len(sample), data.n)
    u = np.array([p[0] for p in pairs], dtype=np.int64)
    v = np.array([p[1] for p in pairs], dtype=np.int64)
    return data.pbool[rows[:, v], u] | data.pbool[rows[:, u], v]


def uniform_cubes(pairs: list[tuple[int, int]]) -> list[Cube]:
    """The 2^k cubes of every sign vector over ``pairs`` (cube i fixes pair b to bit b of i)."""
    return [[(pair, (signs >> b) & 1) for b, pair in enumerate(pairs)] for signs in range(2 ** len(pairs))]


def balanced_pairs(data: _Data, pairs: list[tuple[int, int]], sample: list[tuple[int, ...]] | np.ndarray,
                   k: int) -> list[tuple[int, int]]:
    """Up to ``k`` of ``pairs`` (in their order) chosen so that the cubes split ``sample`` — credible choices
    found so far, e.g. by phase 2's serial start — as evenly as they can: greedily, the pair whose adjacency
    leaves the largest cube of the sample smallest given the pairs before it (ties: the earlier pair). Pairs on
    twins or on one variable split the sample alike, so the second of them gains nothing and is passed over.
    With fewer than 2^k sample points the first ``k`` of ``pairs`` (the sample says too little)."""
    if not pairs or len(sample) < 2 ** k:
        return pairs[:k]
    adj = _adjacency(data, sample, pairs)                       # (S, P): pair p adjacent in sample s
    cell = np.zeros(len(sample), dtype=np.int64)
    chosen: list[int] = []
    for _ in range(min(k, len(pairs))):
        ones = np.zeros((2 ** len(chosen), len(pairs)))
        np.add.at(ones, cell, adj)
        sizes = np.bincount(cell, minlength=2 ** len(chosen))[:, None]
        largest = np.maximum(ones, sizes - ones).max(axis=0)
        largest[chosen] = np.inf
        best = int(np.argmin(largest))
        chosen.append(best)
        cell = 2 * cell + adj[:, best]
    return [pairs[i] for i in chosen]


def cube_fixings(data: _Data, cubes: list[Cube]) -> list[list[tuple[np.ndarray, int]]]:
    """Each cube's rows: for every pair it fixes, (the families of a(u, v), 0 or 1)."""
    fams: dict[tuple[int, int], np.ndarray] = {}
    return [[(fams.setdefault(pair, adjacency_families(data, *pair)), value) for pair, value in cube]
            for cube in cubes]


def _inside(data: _Data, sample: list[tuple[int, ...]], cube: Cube) -> np.ndarray:
    """Which of ``sample`` lie in ``cube`` (satisfy its rows)."""
    inside = np.ones(len(sample), dtype=bool)
    if cube and sample:
        pairs = [pair for pair, _ in cube]
        adj = _adjacency(data, sample, pairs)
        for c, (_, value) in enumerate(cube):
            inside &= adj[:, c] == bool(value)
    return inside


def cube_order(data: _Data, cubes: list[Cube], costs: tuple[np.ndarray, np.ndarray] | None = None) -> list[int]:
    """The indices of ``cubes`` in the order to hand them out: the cube whose rows cost least first — the sum over
    its pairs of adj or apart (:func:`pair_costs`), a lower bound on the loss of its DAGs when the pairs share no
    variable — ties by index. A cube that leaves more of the budget unspent tends to hold more of the credible set
    (sponge BF 20, 8 cubes: ranked by this cost, their seconds 90.6, 50.3, 26.5, 14.3, 28.2, 17.3, 10.5, 5.8;
    ranked by their share of the serial start's classes, 28.2, 90.6, 5.8, 17.3, 26.5, 10.5, 14.3, 50.3), so this is the
    longest-processing-time-first rule of list scheduling (Graham 1969: with m workers the last cube ends within
    4/3 − 1/(3m) of the best schedule when the sizes are known) with estimated sizes: a large cube does not start
    last and run on alone. ``costs``: :func:`pair_costs` of ``data`` where the caller has it already."""
    adj, apart = pair_costs(data) if costs is None else costs
    cost = [sum(float(adj[pair] if value else apart[pair]) for pair, value in cube) for cube in cubes]
    return sorted(range(len(cubes)), key=lambda i: (cost[i], i))


def steal_pair(data: _Data, pairs: list[tuple[int, int]], cube: Cube,
               finds: list[tuple[int, ...]]) -> tuple[tuple[int, int], int] | None:
    """How a running cube gives half of itself to an idle worker: (pair, kept) — it keeps a(u, v) = kept and the
    other side becomes a new cube. The pair is the one of ``pairs`` (:func:`split_pairs`' order) not fixed in
    ``cube`` that splits the cube's own ``finds`` (those inside it) most evenly (ties: the earlier), and the cube
    keeps the side holding more of them (ties: apart), so the new cube repeats less of the search already done:
    it starts its side afresh, and what the running cube had explored there is explored again (classes found
    twice are counted once). With fewer than two finds, the first free pair, kept apart. None when every pair is
    fixed already."""
    fixed = {pair for pair, _ in cube}
    free = [p for p in pairs if p not in fixed]
    if not free:
        return None
    own = [f for f, ok in zip(finds, _inside(data, finds, cube), strict=True) if ok]
    if len(own) < 2:
        return free[0], 0
    ones = _adjacency(data, own, free).sum(axis=0)
    larger = np.maximum(ones, len(own) - ones)
    best = int(np.argmin(larger))
    return free[best], int(2 * int(ones[best]) > len(own))


def cube_count(jobs: int) -> int:
    """How many pairs to split on for ``jobs`` processes: 2^k ≥ ``PHASE2_CUBES_PER_JOB`` × jobs cubes."""
    return max(1, math.ceil(math.log2(max(2, settings.PHASE2_CUBES_PER_JOB * jobs))))


@dataclass
class CubeRun:
    """What the coordinator knows of the cubes: their rows, which wait and which run, each one's status and
    statistics, the records received."""

    #: each cube's rows as they stand: its fixings, then the side it kept at each split while running
    rows: list[Cube] = field(default_factory=list)
    #: cubes not handed out yet, the next first
    todo: deque[int] = field(default_factory=deque)
    #: running cube → when it was handed out or last split (``time.perf_counter()``)
    running: dict[int, float] = field(default_factory=dict)
    #: running cube → the split asked of it and not taken on yet (None: it cannot be split)
    asked: dict[int, tuple[tuple[int, int], int] | None] = field(default_factory=dict)
    #: (cube, pair) of every split taken on
    taken: set[tuple[int, tuple[int, int]]] = field(default_factory=set)
    #: cube → the choices it sent (a split's pair is chosen by them); None: running cubes are never split
    finds: dict[int, list[tuple[int, ...]]] | None = None
    statuses: dict[int, str] = field(default_factory=dict)
    stats: dict[int, dict[str, Any]] = field(default_factory=dict)
    received: dict[int, int] = field(default_factory=dict)
    #: how many records each returned cube sent (all must arrive before the end)
    expected: dict[int, int] = field(default_factory=dict)
    broken: bool = False
    #: some records a cube sent never arrived (:func:`_gather`)
    lost: bool = False

    def took(self, index: int, pair: tuple[int, int], kept: int) -> None:
        """Cube ``index`` took on a(pair) = ``kept`` while running: the other side is a new cube, next to run."""
        if (index, pair) in self.taken:
            return
        self.taken.add((index, pair))
        self.rows.append(self.rows[index] + [(pair, 1 - kept)])
        self.rows[index] = self.rows[index] + [(pair, kept)]
        self.todo.appendleft(len(self.rows) - 1)
        self.asked.pop(index, None)
        if index in self.running:
            self.running[index] = time.perf_counter()


@dataclass
class _Board:
    """Split requests to running cubes: one int64 per cube index — 0, or 1 + 2·(u·n + v) + kept asks cube i to
    keep a(u, v) = kept (:meth:`_Acyclicity.restrict`) — in a file that every worker maps."""

    array: np.ndarray
    n: int
    #: the pairs a split may use, in :func:`split_pairs`' order
    pairs: list[tuple[int, int]]

    def ask(self, index: int, pair: tuple[int, int], kept: int) -> None:
        self.array[index] = 1 + 2 * (pair[0] * self.n + pair[1]) + kept

    @staticmethod
    def read(code: int, n: int) -> tuple[tuple[int, int], int]:
        uv, kept = divmod(code - 1, 2)
        u, v = divmod(uv, n)
        return (u, v), kept


# ------------------------------------------------------------------------------------------------ workers

_WORKER: dict[str, Any] = {}


def _settings_snapshot() -> dict[str, Any]:
    """The coordinator's :mod:`bnilp.ilp.settings` (a user or a benchmark may have changed them)."""
    return {name: getattr(settings, name) for name in dir(settings) if name.isupper()}


def _worker_init(path: str, snapshot: dict[str, Any], found_q: Any, stop: Any, board_path: str | None = None) -> None:
    """A worker process: ignore SIGINT (the coordinator stops the cubes through ``stop``), take the
    coordinator's settings, load the problem once, map the split requests' board (read only)."""
    deaf_to_ctrl_c()
    keep_grown_loky_workers()
    for name, value in snapshot.items():
        setattr(settings, name, value)
    with open(path, "rb") as handle:
        data, found, epsilon, classes = pickle.load(handle)
    board = None if board_path is None else np.memmap(board_path, dtype=np.int64, mode="r")
    _WORKER.update(data=data, found=found, epsilon=epsilon, classes=classes, queue=found_q, stop=stop, board=board)


@dataclass
class _Sending:
    """A cube's side of the talk: records sent so far, when the last batch went, the last split request taken."""

    flushed: float
    records: int = 0
    request: int = 0


def _run_cube(index: int, fixings: list[tuple[np.ndarray, int]], deadline: float | None) -> dict[str, Any]:
    """Phase 2 on one cube in a worker: credible choices go to the coordinator in batches as they are found
    (``("found", index, [(choice, score), ...])``); a split request on the board is taken on at once
    (``("split", index, pair, kept)``: the cube keeps to one side from now on); returns the cube's status,
    statistics, how many records it sent and the splits it took on. ``deadline`` is a wall-clock time
    (``time.time()``)."""
    from bnilp.ilp.model import _new_stats
    from bnilp.ilp.search import _optimize, _phase2_model, _Run, _Signals, _tie_tol

    w = _WORKER
    data, found, epsilon, classes = w["data"], w["found"], w["epsilon"], w["classes"]
    stop, out, board = w["stop"], w["queue"], w.get("board")
    stats2 = _new_stats()
    splits: list[tuple[tuple[int, int], int]] = []
    if stop.is_set():
        return {"index": index, "status": "skipped", "stats": stats2, "sent": 0, "splits": splits}
    threshold = found.opt - epsilon - _tie_tol(found.opt)
    batch: list[tuple[tuple[int, ...], float]] = []
    sending = _Sending(flushed=time.perf_counter())

    def flush() -> None:
        if batch:
            out.put(("found", index, list(batch)))
            sending.records += len(batch)
            batch.clear()
        sending.flushed = time.perf_counter()

    def tick() -> None:
        if stop.is_set():
            model2.interruptSolve()
        code = int(board[index]) if board is not None and index < len(board) else 0
        if code and code != sending.request:
            sending.request = code
            pair, kept = _Board.read(code, data.n)
            hdlr2.restrict(adjacency_families(data, *pair), kept)
            splits.append((pair, kept))
            flush()
            out.put(("split", index, pair, kept))
        if time.perf_counter() - sending.flushed >= settings.PHASE2_CUBE_FLUSH_SECONDS:
            flush()

    def on_record(choice: tuple[int, ...]) -> None:
        s = data.exact(choice)
        if s >= threshold:
            batch.append((choice, s))
        tick()

    rem = None if deadline is None else deadline - time.time()
    if rem is not None and rem <= 0:
        return {"index": index, "status": "timelimit", "stats": stats2, "sent": 0, "splits": splits}
    model2, hdlr2 = _phase2_model(data, found, epsilon, stats2, False, on_record, tick, classes, fixings)
    now = time.perf_counter()
    rem = None if deadline is None else deadline - time.time()      # the model's build counts against the limit
    run = _Run(epsilon, "mecs" if classes else "dags", None, _Signals(), now, None if rem is None else now + rem)
    status = _optimize(model2, run, stats2)
    stats2.update(collected=hdlr2.n_recorded)
    flush()
    model2.freeTransform()
    return {"index": index, "status": status, "stats": stats2, "sent": sending.records, "splits": splits}


# ------------------------------------------------------------------------------------------------ coordinator

def enumerate_in_cubes(run: Any, data: _Data, found: Any, got: Any, classes: bool, jobs: int,
                       max_networks: int, watch: Any, stats2: dict[str, Any]) -> tuple[str, str] | None:
    """Phase 2 split into cubes (:func:`split_pairs`, :func:`balanced_pairs`, :func:`cube_order`) on ``jobs`` worker
    processes; once no cube waits and a worker is idle, a cube running for
    :data:`~bnilp.ilp.settings.PHASE2_STEAL_SECONDS` gives one side of a pair to it (:func:`steal_pair`).

    What the cubes find is folded into ``got.credible`` (:func:`~bnilp.ilp.classbest.choice_table`, holding what
    the serial start found: 4 bytes a variable), which keeps the best DAG of each class (``classes``) or each DAG
    once, whichever cube found it and whether or not it was found before the split. Returns None when every cube
    is done (the set is complete), else (status, words) for the message; None too when ``got.limit_hit`` /
    ``got.memory_hit`` say that the cap or the memory guard (``watch``, over every class or DAG gathered)
    stopped them.
    """
    stats2.update(method="branch-and-cut in cubes", jobs=jobs)
    try:
        budget = data.offset - found.opt + run.epsilon
        sample = got.credible.ranked()[1]
        costs = pair_costs(data)
        pairs = split_pairs(data, budget, costs=costs)
        # no pair qualifies: one cube, the whole rest
        split = uniform_cubes(balanced_pairs(data, pairs, sample, cube_count(jobs)))
        order = cube_order(data, split, costs)
    except KeyboardInterrupt:       # the split runs in Python, where the first Ctrl-C arrives as KeyboardInterrupt
        run.sig.received = True     # (_signals_stop_the_search): the run stops with what the serial start found
        stats2.update(cubes=0)      # (it ended with exit 130 and nothing written: a review)
        return "interrupted", "interrupted (SIGINT/SIGTERM)"
    stats2["order"] = order
    from joblib.externals.loky import ProcessPoolExecutor
    from joblib.externals.loky.backend import get_context

    ctx = get_context("loky")           # fresh interpreters; a user's unguarded script is not run again
    found_q = ctx.Queue()
    stop = ctx.Event()
    steal = settings.PHASE2_STEAL_SECONDS is not None and bool(pairs)
    state = CubeRun(rows=list(split), todo=deque(order), finds={} if steal else None)
    t0 = time.perf_counter()
    try:
        # ignore_cleanup_errors: on Windows the board's memory map, still open when an error leaves _gather, cannot
        # be removed, and that error hid the run's own
        with tempfile.TemporaryDirectory(prefix="bnilp-cubes-", ignore_cleanup_errors=True) as tmp:
            path, board_path = os.path.join(tmp, "problem.pkl"), os.path.join(tmp, "board.i64")
            with open(path, "wb") as handle:
                pickle.dump((data, found, run.epsilon, classes), handle, protocol=pickle.HIGHEST_PROTOCOL)
            board = _Board(np.memmap(board_path, dtype=np.int64, mode="w+", shape=(settings.PHASE2_MAX_CUBES,)),
                           data.n, pairs) if steal else None
            rem = run.remaining()
            deadline = None if rem is None else time.time() + rem
            inbox = _Inbox(found_q)
            try:
                with ProcessPoolExecutor(max_workers=jobs, context=ctx, initializer=_worker_init,
                                         initargs=(path, _settings_snapshot(), found_q, stop,
                                                   board_path if steal else None)) as pool:
                    def submit(i: int) -> Future:
                        fixings = cube_fixings(data, [state.rows[i]])[0]
                        with children_start_deaf_to_ctrl_c():       # the first submit starts the workers
                            return pool.submit(_run_cube, i, fixings, deadline)

                    _gather(run, submit, jobs, inbox, stop, state, got, max_networks, watch, data, board)
            finally:
                inbox.close()
            del board
    except KeyboardInterrupt:       # writing the problem or starting the pool: _gather catches it once it runs
        run.sig.received = True
    stats2["seconds"] = time.perf_counter() - t0
    used = list(dict.fromkeys(pair for cube in state.rows for pair, _ in cube))
    stats2.update(cubes=len(state.rows), splits=len(state.taken),
                  split_pairs=[[data.names[u], data.names[v]] for u, v in used],
                  cube_rows=[[[data.names[u], data.names[v], value] for (u, v), value in cube] for cube in state.rows])
    _merge_stats(stats2, state)
    if got.limit_hit or (got.memory_hit and not run.sig.received):
        return None                             # the caller words these
    if run.sig.received or state.broken or state.lost:
        return "interrupted", ("interrupted (SIGINT/SIGTERM)" if run.sig.received else
                               "interrupted (a worker process of phase 2 died)" if state.broken else
                               "interrupted (records of phase 2's workers were lost)")
    if all(s in _CUBE_DONE for s in state.statuses.values()) and len(state.statuses) == len(state.rows):
        return None
    if any(s == "memlimit" for s in state.statuses.values()):
        return "memory_limit", "memory limit reached"
    return "time_limit", "time limit reached"


def _gather(run: Any, submit: Callable[[int], Future], jobs: int, inbox: _Inbox, stop: Any, state: CubeRun,
            got: Any, max_networks: int, watch: Any, data: _Data, board: _Board | None) -> None:
    """Hand out the cubes of ``state.todo`` (``submit``) to keep ``jobs`` running, split a running one for an idle
    worker (:func:`_ask_split`; ``board`` None: never), take the cubes' batches until every cube has returned
    and all it sent has arrived; stop them all at the cap, a memory stop, a signal (SIGTERM through
    ``run.sig``, Ctrl-C as KeyboardInterrupt here). Batches still missing :data:`_SETTLE_SECONDS` after the last
    cube returned (a Ctrl-C between taking a batch and counting it) leave ``state.lost`` set: the list is then
    not complete; so do cubes never handed out (a stop), by having no status. The batches come from ``inbox``,
    whose own thread reads the workers' pipe: a Ctrl-C here never lands inside a read, and a worker killed in
    the middle of a batch blocks that thread, not this loop, which then sees the broken pool."""
    futures: dict[int, Future] = {}
    settle: float | None = None
    while True:
        try:
            _drain(inbox, state, got.credible, timeout=_POLL_SECONDS)
            for i in sorted(i for i, f in futures.items() if f.done()):
                future = futures.pop(i)
                state.running.pop(i, None)
                state.asked.pop(i, None)
                try:
                    res = future.result()
                except BrokenProcessPool:
                    state.broken = True
                    stop.set()
                    continue
                for pair, kept in res.get("splits", []):
                    state.took(i, pair, kept)
                state.statuses[i] = res["status"]
                state.stats[i] = res["stats"]
                state.expected[i] = res["sent"]
            if run.capped(len(got.credible), max_networks) and not got.limit_hit:
                got.limit_hit = True
                stop.set()
            if not got.memory_hit and watch.short(len(got.credible), got.credible):
                got.memory_hit = True
                stop.set()
            if run.sig.received or state.broken:
                stop.set()
            if not stop.is_set() and run.remaining() == 0.0:    # the time limit: no cube handed out past it
                stop.set()
            if not stop.is_set():
                while state.todo and len(futures) < jobs:
                    i = state.todo.popleft()
                    futures[i] = submit(i)
                    state.running[i] = time.perf_counter()
                if board is not None and not state.todo and len(futures) < jobs:
                    _ask_split(state, data, board)
            run.report("enumerate", len(got.credible))
            if not futures and (stop.is_set() or not state.todo):
                if state.broken or all(state.received.get(i, 0) >= n for i, n in state.expected.items()):
                    return
                settle = time.perf_counter() + _SETTLE_SECONDS if settle is None else settle
                if time.perf_counter() > settle:
                    state.lost = True
                    return
        except KeyboardInterrupt:
            run.sig.received = True
            stop.set()
        except BaseException:
            stop.set()          # a worker's error: stop the others before the pool waits for them
            raise


def _ask_split(state: CubeRun, data: _Data, board: _Board) -> None:
    """Ask the cube running longest since it was handed out or last split — if that is at least
    :data:`~bnilp.ilp.settings.PHASE2_STEAL_SECONDS` and nothing is asked of it yet — to give one side of a pair
    (:func:`steal_pair`) to a new cube; while the board has room for the new cube's index."""
    now = time.perf_counter()
    ready = [i for i, t in state.running.items() if i not in state.asked and now - t >= settings.PHASE2_STEAL_SECONDS]
    if not ready or len(state.rows) >= len(board.array):
        return
    i = min(ready, key=lambda c: (state.running[c], c))
    split = steal_pair(data, board.pairs, state.rows[i], (state.finds or {}).get(i, []))
    state.asked[i] = split
    if split is not None:
        board.ask(i, *split)


class _Inbox:
    """The workers' messages, moved from their shared multiprocessing queue to a local one by a daemon thread.

    A message larger than the pipe's buffer is read in pieces; read on the coordinator's main thread, a worker
    killed between two pieces (out of memory, ``kill -9``) left the read waiting for ever — the coordinator holds
    a write end itself, so no end of file comes — and a Ctrl-C landing in the read dropped the bytes read so
    far, so the next read began inside a message. Here only this thread reads the pipe: such a worker blocks
    it, not the coordinator (which sees the broken pool and reports it), and signals go to the main thread."""

    def __init__(self, found_q: Any):
        self.found_q = found_q
        self.local: queue_module.Queue = queue_module.Queue()
        self.closed = threading.Event()
        self.thread = threading.Thread(target=self._read, name="bnilp-cubes-inbox", daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while not self.closed.is_set():
            try:
                message = self.found_q.get(timeout=_POLL_SECONDS)
            except queue_module.Empty:
                continue
            except BaseException as exc:      # noqa: BLE001 - an unreadable stream: the coordinator raises it
                self.local.put(("error", exc))
                return
            self.local.put(message)

    def get(self, timeout: float) -> Any:
        """The next message (waiting up to ``timeout`` seconds; 0: only one already here), or queue.Empty."""
        message = self.local.get(timeout=timeout) if timeout > 0 else self.local.get_nowait()
        if message[0] == "error":
            raise RuntimeError("phase 2's workers sent a message that could not be read") from message[1]
        return message

    def close(self) -> None:
        """End the thread once the workers are gone (a thread blocked by a worker killed mid-message stays
        blocked: a daemon, it never holds the process at exit)."""
        self.closed.set()
        self.thread.join(timeout=2 * _POLL_SECONDS)


def _drain(inbox: _Inbox, state: CubeRun, table: BestPerClass, timeout: float) -> None:
    """Take every message waiting in ``inbox`` (the first after up to ``timeout`` seconds): batches go to
    ``table`` (and the cube's finds), splits taken on make new cubes (:meth:`CubeRun.took`)."""
    wait = timeout
    while True:
        try:
            message = inbox.get(wait)
        except queue_module.Empty:
            return
        wait = 0.0
        if message[0] == "split":
            _, index, pair, kept = message
            state.took(index, tuple(pair), kept)
            continue
        _, index, batch = message
        state.received[index] = state.received.get(index, 0) + len(batch)
        if state.finds is not None:
            state.finds.setdefault(index, []).extend(c for c, _ in batch)
        if batch:
            table.add_rows(np.array([c for c, _ in batch], dtype=np.int64), np.array([s for _, s in batch]))


def _merge_stats(stats2: dict[str, Any], state: CubeRun) -> None:
    """Phase 2's statistics summed over the cubes, with each cube's status, nodes, seconds and records."""
    per_cube = []
    for i in sorted(state.stats):
        s = state.stats[i]
        per_cube.append({"cube": i, "status": state.statuses.get(i), "seconds": round(s.get("seconds", 0.0), 3),
                         "nodes": s.get("nodes", 0), "found": state.received.get(i, 0)})
        for key in ("nodes", "lp_iterations", "lps", "cuts_total", "sepa_calls", "python_sepa_seconds",
                    "python_enforce_seconds", "collected"):
            if key in s:
                stats2[key] = stats2.get(key, 0) + s[key]
        for kind, count in s.get("cuts", {}).items():
            stats2["cuts"][kind] = stats2["cuts"].get(kind, 0) + count
    stats2["per_cube"] = per_cube
    stats2["scip_status"] = "cubes: " + (", ".join(f"{st}×{sum(1 for v in state.statuses.values() if v == st)}"
                                                   for st in sorted(set(state.statuses.values())))
                                         or "none returned")
