"""The two phases: prove OPT (phase 1), then list the credible set (phase 2); statuses and signals."""

from __future__ import annotations

import logging
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pyscipopt import SCIP_HEURTIMING, SCIP_PARAMSETTING

from bnilp.errors import (
    InputError,
    check_callback,
    check_count,
    check_flag,
    check_real,
    check_seconds,
    interrupts_as_keyboard,
)
from bnilp.graphs import check_acyclic
from bnilp.ilp import settings, symmetry
from bnilp.ilp.branchings import BranchingArcs, BranchingLister, best_branching, branching_arcs
from bnilp.ilp.classbest import BestPerClass, best_members_below, canonical_representatives, choice_table, ranked
from bnilp.ilp.cons_acyclic import _choice
from bnilp.ilp.dp import DPResult, DPStopped, Peeler, bound_mode, plan_tables, solve_dp
from bnilp.ilp.event_interrupt import InterruptPending, should_interrupt
from bnilp.ilp.families import _Data
from bnilp.ilp.forests import ForestEdges, ForestLister, forest_edges, heaviest_forest, representative
from bnilp.ilp.heur_sinks import _sink_dag, _SinkHeur
from bnilp.ilp.knowledge_rows import _index_pairs, needs_rows
from bnilp.ilp.model import _build, _new_stats
from bnilp.ilp.result import ClassTail, Network, Parents, SolveResult
from bnilp.ilp.settings import ENUMERATE_UNITS
from bnilp.ilp.timing import scip_timing
from bnilp.mec import EQUIVALENCE_SLACK, MASK_MAX_VARIABLES, rounding_slack_of
from bnilp.memory import free_memory, memory_floor, paused_gc, return_freed_memory, worker_count
from bnilp.scorefile import ScoreTable, check_is_table
from bnilp.scores.base import tie_tolerance
from bnilp.threads import SEARCH_STOPPED_BY_SIGNAL, may_start_processes

logger = logging.getLogger("bnilp.ilp")


@dataclass
class _Signals:
    """SIGINT or SIGTERM seen during a solve, the SCIP model to interrupt, and how many stages that catch a
    KeyboardInterrupt are running (``catching``, kept by :meth:`catching_interrupts`)."""

    received: bool = False
    model: Any = None
    catching: int = 0

    @contextmanager
    def catching_interrupts(self) -> Iterator[None]:
        """A stage that catches KeyboardInterrupt (the dynamic programme, peeling, the forests' and branchings'
        listing, the cubes' coordinator) runs in the block: only there does the first SIGINT raise one. Elsewhere
        it is noted, as SIGTERM always is — once the listing was over, a Ctrl-C while its classes were ranked
        raised where nothing caught it, and the whole result was lost (exit 130, nothing written; a review)."""
        self.catching += 1
        try:
            yield
        finally:
            self.catching -= 1


@contextmanager
def _signals_stop_the_search(sig: _Signals):
    """While solving (main thread only), Ctrl-C and SIGTERM stop the search, which returns what it found
    (status ``interrupted``): a SCIP model that is presolving or solving is interrupted (Python runs the handler at
    the next callback into Python, which the cluster handler makes frequent; one that came while the model was
    built or transformed is delivered at the next presolving round or node, :mod:`bnilp.ilp.event_interrupt`),
    inside the stages that catch it (the dynamic programme, peeling, the forests' and branchings' listing, the
    cubes' coordinator: :meth:`_Signals.catching_interrupts`) the first SIGINT goes to the handler that was in place
    (KeyboardInterrupt), and anywhere else it is noted as SIGTERM is (each stage looks at ``received``). Further
    signals are only noted: two Ctrl-Cs 50 ms apart (a double press, or ``timeout`` passing on the terminal's)
    reached the command line's handler while the result was being built and the run ended with exit 130 and
    nothing written. SCIP's own Ctrl-C handler is off (``misc/catchctrlc``, every model of
    :mod:`bnilp.ilp`): it printed "pressed CTRL-C 1 times" on stdout, into ``--json /dev/stdout``, and inside a
    cluster sub-IP it stopped the sub-IP only. An ignored SIGINT stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signal.SIGTERM: signal.getsignal(signal.SIGTERM), signal.SIGINT: signal.getsignal(signal.SIGINT)}

    def handler(signum: int, frame: Any) -> None:
        first = not sig.received
        sig.received = True             # every stage checks it too (a KeyboardInterrupt put off comes back here)
        try:
            if sig.model is not None and should_interrupt(True, sig.model.getStage()):
                sig.model.interruptSolve()
            elif first and signum == signal.SIGINT and sig.catching and callable(previous[signal.SIGINT]):
                previous[signal.SIGINT](signum, frame)
        finally:
            SEARCH_STOPPED_BY_SIGNAL.set()

    handled = [s for s, h in previous.items() if h is not signal.SIG_IGN or s == signal.SIGTERM]
    for s in handled:
        signal.signal(s, handler)
    try:
        yield
    finally:
        for s in handled:
            signal.signal(s, previous[s])


def _early_stop(scip_status: str, sig: _Signals) -> tuple[str, str]:
    """(status, words) for a search that SCIP ended before it was done (not optimal, not infeasible)."""
    if sig.received or scip_status == "userinterrupt":
        return "interrupted", "interrupted (SIGINT/SIGTERM)"
    if scip_status == "memlimit":
        return "memory_limit", "memory limit reached"
    return "time_limit", "time limit reached"


def _dp_margin(opt: float) -> float:
    """Slack for the dynamic programme's float sums (F, R and best-through-family add up to n scores in
    another order than fsum): its filter and its peeling bound keep what lies this far below the threshold,
    and the exact fsum score decides. The programme runs only where each such sum is within 1e-10·|OPT|
    (:func:`_dp_sums_trusted`); a quantity made of at most three of them is within 3e-10·|OPT|, so half the tie
    tolerance covers it. (It was 1e-7·|OPT|: at |OPT| ≈ 7e7 peeling then listed every DAG within 7 nats of a
    credible set of 4 at ε = 0, and did not end.)"""
    return 5e-10 * max(1.0, abs(opt))


def _tie_tol(opt: float) -> float:
    """Float noise allowed below OPT − ε (the tests' oracle uses the same): score-equivalent DAGs
    whose file scores differ only by rounding (e.g. 1e-8 in 8-decimal files) stay in the set."""
    return float(tie_tolerance(opt))


def _validate_warm_start(table: ScoreTable, warm_start: Parents) -> Parents:
    ws = {v: frozenset(p) for v, p in warm_start.items()}
    missing = [v for v in table.variables if v not in ws]
    extra = [v for v in ws if v not in table.families]
    if missing or extra:
        def listed(names: list[str]) -> str:
            return f"{len(names)} ({', '.join(names[:5])}{', …' if len(names) > 5 else ''})" if names else "none"
        raise InputError(f"warm start: variables missing {listed(missing)}, unknown {listed(extra)}: it must give "
                         "every variable of the score table its parents")
    for v, ps in ws.items():
        if ps not in table.families[v]:
            raise InputError(f"warm start: parent set {sorted(ps)} of {v!r} is not in the score table")
    check_acyclic(ws, "warm start")
    return ws


@interrupts_as_keyboard
def solve(table: ScoreTable, epsilon: float = 0.0, *, time_limit: float | None = None,
          max_networks: int = settings.DEFAULT_MAX_NETWORKS, warm_start: Parents | None = None,
          enumerate_ties: bool = True, progress: Callable[[dict], None] | None = None,
          verbose: bool = False, enumerate_by: str = "dags", jobs: int = 1,
          count_past_cap: bool = False) -> SolveResult:
    """Prove OPT (phase 1), then list every DAG with score ≥ OPT − ε (phase 2).

    Phase 2 runs when ``epsilon > 0``, or when ``epsilon == 0`` and ``enumerate_ties``.
    ``time_limit`` (seconds) covers both phases; ``max_networks`` caps the credible set.
    ``enumerate_by="mecs"`` lists one representative DAG per credible Markov equivalence class instead,
    excluding each class found by :meth:`_Data.mec_row` (valid for score-equivalent scores only: every
    DAG of a class then has its representative's score); ``max_networks`` then caps classes.
    ``complete`` is True only when the returned list is provably the whole credible set; ``status`` is
    one of :data:`STATUSES` (SIGINT or SIGTERM during the search: ``interrupted``, with what was found;
    phase 2's branch-and-cut with the free memory too low for the report of more networks: ``memory_limit``,
    with what was found, :data:`~bnilp.ilp.settings.ENUMERATION_REPORT_BYTES`).
    ``jobs`` (−1: one per core): processes for phase 2 by branch-and-cut — past
    :data:`~bnilp.ilp.settings.PHASE2_SERIAL_SECONDS` it splits into cubes by adjacency (:mod:`bnilp.ilp.cubes`);
    the credible set is the same for any value (which networks a capped list holds is not).

    ``count_past_cap`` (class enumeration only): branch-and-cut does not stop at ``max_networks`` classes but
    lists on until the set is complete (or a limit stops it), as peeling always does; the best ``max_networks``
    classes are returned as networks, the rest compactly as ``unlisted`` (:class:`ClassTail`, for
    :func:`bnilp.mec.class_tail_mass`), so that DAG counts and posteriors cover every class found. The status
    is then ``network_limit`` and ``complete`` is False (the list is capped) although every credible class was
    found and counted; the message says of how many classes.

    ``progress`` gets dicts ``{"phase", "networks", "elapsed", …}`` at most every 0.25 s: phases ``optimize``,
    ``enumerate``, ``done`` (with ``status``) and ``dynamic programme`` (with ``done``, the share of its passes
    done, 0–1)."""
    from bnilp.pipeline import check_table_epsilon  # (pipeline imports this module)

    check_is_table(table)
    epsilon = check_real(epsilon, "epsilon", 0)
    check_table_epsilon(table, epsilon)      # a table pruned for less misses credible networks (a review)
    enumerate_ties, count_past_cap = check_flag(enumerate_ties, "enumerate_ties"), check_flag(count_past_cap,
                                                                                                "count_past_cap")
    check_callback(progress)
    if count_past_cap and enumerate_by != "mecs":
        raise InputError(f"count_past_cap counts equivalence classes: it needs enumerate_by='mecs', "
                         f"not {enumerate_by!r}")
    if count_past_cap and len(table.variables) > MASK_MAX_VARIABLES:
        raise InputError(f"count_past_cap counts the classes past the cap on at most {MASK_MAX_VARIABLES} "
                         f"variables (bnilp.mec.class_tail_mass), not {len(table.variables)}")
    jobs = check_count(jobs, "jobs (--jobs)", 1, also=(-1,))
    max_networks = check_count(max_networks, "max_networks (--max-networks)", 1)
    time_limit = check_seconds(time_limit, "time_limit (--time-limit)")
    jobs = worker_count(jobs)
    sig = _Signals()
    with _signals_stop_the_search(sig):
        return _solve(table, epsilon, time_limit, max_networks, warm_start, enumerate_ties, progress, verbose, sig,
                      enumerate_by, jobs, count_past_cap)


@dataclass
class _Run:
    """One solve's clock, progress reports and signals, shared by both phases."""

    epsilon: float
    enumerated: str
    progress: Callable[[dict], None] | None
    sig: _Signals
    t_start: float
    deadline: float | None
    last_tick: float = 0.0
    #: branch-and-cut's end when it races the dynamic programme (:func:`_race_budget`); None otherwise
    budget: float | None = None
    #: what branch-and-cut knew when the programme took over, for the result should the programme be stopped:
    #: OPT if proven, else phase 1's best choice and upper bound; phase 2's credible choices so far
    proven: _Optimum | None = None
    incumbent: tuple[tuple[int, ...] | None, float] | None = None
    collected: _Collected | None = None
    #: processes for phase 2's branch-and-cut (:func:`_enumerate_split`)
    jobs: int = 1
    #: class enumeration goes on past the cap, the classes past it kept compact (``solve(count_past_cap=...)``)
    count_past_cap: bool = False

    def capped(self, found: int, max_networks: int) -> bool:
        """Whether ``found`` networks stop phase 2 at the cap: one more than ``max_networks`` found (so a set of
        exactly ``max_networks`` is listed to its end and complete), never when class enumeration counts past it."""
        return found > max_networks and not (self.count_past_cap and self.enumerated == "mecs")

    def elapsed(self) -> float:
        return time.perf_counter() - self.t_start

    def remaining(self) -> float | None:
        """Seconds left before the time limit or, during a race, the end of branch-and-cut's budget."""
        ends = [t for t in (self.deadline, self.budget) if t is not None]
        return None if not ends else max(0.0, min(ends) - time.perf_counter())

    def budget_stop(self, scip_status: str) -> bool:
        """Whether SCIP stopping with ``scip_status`` is the race's budget running out: a time limit while
        racing, with no signal and the user's time limit not reached (SCIP's clock, not ours, decides
        when it stops, so the budget's end is not compared with ``perf_counter``)."""
        return (self.budget is not None and scip_status == "timelimit" and not self.sig.received
                and (self.deadline is None or time.perf_counter() < self.deadline))

    def dp_should_stop(self) -> bool:
        """Whether the dynamic programme must stop: a signal, or the time limit reached."""
        return self.sig.received or (self.deadline is not None and time.perf_counter() >= self.deadline)

    def budget_spent(self) -> bool:
        """Whether the race's budget is over before branch-and-cut (or its next phase) starts."""
        return self.budget is not None and time.perf_counter() >= self.budget and self.budget_stop("timelimit")

    def report(self, phase: str, networks: int, force: bool = False, **extra: Any) -> None:
        """Call ``progress`` at most every 0.25 s (always when ``force``)."""
        if self.progress is None:
            return
        now = time.perf_counter()
        if force or now - self.last_tick >= 0.25:
            self.last_tick = now
            self.progress({"phase": phase, "networks": networks, "elapsed": now - self.t_start, **extra})

    def finish(self, **kw: Any) -> SolveResult:
        """The result; where a SIGINT/SIGTERM came once nothing it could stop was left (the listing over, its
        classes being ranked) and the set is whole as its status says (``optimal``, ``network_limit``), the message
        says so and ``stats["signal_after_search"]`` is True — the signal was taken and dropped unsaid (a review's
        SIGTERM timeline: 21 s of ranking, then a complete result written with nothing of the signal)."""
        if self.sig.received and kw.get("status") in ("optimal", "network_limit"):
            kw["message"] = "; ".join(filter(None, (kw.get("message"), SIGNAL_AFTER_SEARCH)))
            kw["stats"] = {**(kw.get("stats") or {}), "signal_after_search": True}
        res = SolveResult(seconds=self.elapsed(), epsilon=float(self.epsilon), enumerated=self.enumerated, **kw)
        self.report("done", len(res.networks), force=True, status=res.status)
        logger.info("bnilp.ilp: %s, OPT %s, %d networks in %.2f s", res.status, res.optimum,
                    len(res.networks), res.seconds)
        return res


#: the message's words for a SIGINT/SIGTERM that came once the search had nothing left to stop (:meth:`finish`)
SIGNAL_AFTER_SEARCH = "a SIGINT/SIGTERM came after the search had ended; the result is whole as its status says"


@dataclass
class _Optimum:
    """What phase 1 proved: OPT (fsum and shifted), the dual bound, an optimal choice, its cluster cuts."""

    opt: float
    opt_shift: float
    dual: float
    choice: tuple[int, ...]
    clusters: list[tuple[np.ndarray, int]]     # (members, k) of each (k-)cluster cut, for phase 2's model


@dataclass
class _Collected:
    """Phase 2's credible choices (fsum scores), the score threshold, and whether the cap stopped it."""

    threshold: float
    #: choice → exact score (peeling), or one per class (or DAG) in a compact table (branch-and-cut)
    credible: dict[tuple[int, ...], float] | BestPerClass = field(default_factory=dict)
    limit_hit: bool = False
    #: how many there were, when the cap cut a list that was complete (peeling ranks all, keeps the best)
    of_total: int | None = None
    #: the credible DAGs in all ``of_total`` classes, when peeling listed them all (class enumeration)
    of_dags: int | None = None
    #: the classes past the cap, then
    tail: ClassTail | None = None
    #: phase 2 stopped because the free memory would not hold the report of more (:class:`_MemoryWatch`)
    memory_hit: bool = False
    #: the classes are already represented by the DAGs they fix (peeling does it before its cap)
    canonical: bool = False
    #: listed best first (forests): a list the cap cut is the best ``max_networks``
    best_first: bool = False

    @classmethod
    def of(cls, data: _Data, opt: float, epsilon: float, classes: bool) -> _Collected:
        """Branch-and-cut's collection: the threshold OPT − ε − tol, and the compact table of what it records
        (:func:`~bnilp.ilp.classbest.choice_table`: one DAG per class, or each DAG)."""
        return cls(threshold=opt - epsilon - _tie_tol(opt), credible=choice_table(data, classes))


@dataclass
class _MemoryWatch:
    """Phase 2's memory guard: short when the system's free memory is below the floor
    (:data:`~bnilp.ilp.settings.ENUMERATION_MEMORY_FLOOR_SHARE`) plus what the report of the networks
    recorded so far will need — for the ``listed`` best, a base plus a share per variable and per edge
    (:func:`report_bytes`, :data:`~bnilp.ilp.settings.ENUMERATION_REPORT_BYTES`: their mean number of edges,
    tallied from the table of what was recorded, :meth:`tally`); :data:`~bnilp.ilp.settings.ENUMERATION_TAIL_BYTES`
    for each class past them, kept compact — looked at every
    :data:`~bnilp.ilp.settings.ENUMERATION_MEMORY_CHECK_SECONDS`."""

    unit: str
    n: int
    #: each family's number of parents (the family index of a recorded row's variable → its edges)
    sizes: np.ndarray
    listed: int
    #: the report counts the classes on compiled masks (no background knowledge: :func:`report_bytes`' cap)
    compiled: bool = True
    floor: int = field(default_factory=lambda: memory_floor(settings.ENUMERATION_MEMORY_FLOOR_SHARE,
                                                            settings.ENUMERATION_MEMORY_FLOOR_BYTES))
    next_look: float = 0.0
    #: the free bytes and the bytes needed when it was last short
    seen: tuple[int, int] | None = None
    #: the networks tallied and their edges
    tallied: int = 0
    edges: int = 0

    @classmethod
    def of(cls, data: _Data, classes: bool, max_networks: int) -> _MemoryWatch:
        """The guard of a phase 2 listing classes (or DAGs) of ``data``'s families, the best ``max_networks`` of
        them reported in full."""
        return cls("mecs" if classes else "dags", data.n, data.family_sizes(), max_networks,
                   compiled=data.knowledge is None)

    def tally(self, rows: np.ndarray) -> None:
        """Count in the edges of recorded networks ``rows`` (each a row of family indices, one per variable)."""
        if len(rows):
            self.tallied += len(rows)
            self.edges += int(self.sizes[rows].sum())

    def short(self, recorded: int, table: BestPerClass | None = None) -> bool:
        """Whether the free memory is short of what ``recorded`` networks will need; ``table``: where they are
        held (its rows not yet tallied are tallied first), else the caller tallies them."""
        now = time.perf_counter()
        if now < self.next_look:
            return False
        self.next_look = now + settings.ENUMERATION_MEMORY_CHECK_SECONDS
        if table is not None and table.count > self.tallied:
            self.tally(table.held_rows()[self.tallied:])
        free = free_memory()
        past = max(0, recorded - self.listed)
        mean_edges = self.edges / self.tallied if self.tallied else 0.0
        need = (self.floor + report_bytes(self.unit, self.n, mean_edges, self.compiled) * (recorded - past)
                + settings.ENUMERATION_TAIL_BYTES * past)
        if free is None or free >= need:
            return False
        self.seen = (free, int(need))
        return True


def report_bytes(unit: str, n: int, edges: float, compiled: bool = True) -> float:
    """What the report of one network (``unit`` "dags") or class ("mecs") of ``n`` variables and ``edges`` edges
    is taken to need: min(base + per variable·n + per edge·edges, at most)
    (:data:`~bnilp.ilp.settings.ENUMERATION_REPORT_BYTES`, measured, with a margin). The cap was measured up to 56
    variables, where the report counts classes on compiled masks (``compiled``: no background knowledge); past
    :data:`~bnilp.mec.MASK_MAX_VARIABLES` the sum alone (a wholly undirected class of 300 variables, a forest,
    took 305 KB: 23,199 of them peaked at 7.6 GB against the 0.7 GB the cap reserved), and so under knowledge,
    where each class also keeps its admitted DAGs' count and shares and its PDAG (hailfinder500 at palim 1 in five
    tiers, 56 variables, 48 edges a class: 49.7 KB a class, 38.5 KB once the components were counted once)."""
    base, per_variable, per_edge, most = settings.ENUMERATION_REPORT_BYTES[unit]
    need = base + per_variable * n + per_edge * edges
    return need if most is None or n > MASK_MAX_VARIABLES or not compiled else min(need, most)


def _optimize(model: Any, run: _Run, stats: dict[str, Any]) -> str:
    """Run SCIP on ``model`` within the time left (SIGTERM interrupts it); record seconds, status,
    nodes, LP work and SCIP's clocks in ``stats``. Returns SCIP's status."""
    rem = run.remaining()
    if rem is not None:
        model.setParam("limits/time", min(max(rem, 1e-3), settings.SCIP_TIME_LIMIT_MAX))
    t0 = time.perf_counter()
    run.sig.model = model
    # a signal noted while the model was built or transformed, where SCIP takes no interrupt, is delivered at the
    # next presolving round or node (the whole phase ran before anyone looked at it again: a review)
    model.includeEventhdlr(InterruptPending(lambda: run.sig.received), "bnilp_interrupt",
                           "interrupt the solve where a signal was noted")
    model.optimize()
    run.sig.model = None
    stats["seconds"] = time.perf_counter() - t0
    status = model.getStatus()
    stats.update(scip_status=status, nodes=model.getNTotalNodes(), lp_iterations=model.getNLPIterations(),
                 lps=model.getNLPs(), timing=scip_timing(model))
    return status


def _solve(table: ScoreTable, epsilon: float, time_limit: float | None, max_networks: int,
           warm_start: Parents | None, enumerate_ties: bool, progress: Callable[[dict], None] | None,
           verbose: bool, sig: _Signals, enumerate_by: str, jobs: int = 1,
           count_past_cap: bool = False) -> SolveResult:
    if not isinstance(enumerate_by, str) or enumerate_by not in ENUMERATE_UNITS:
        raise InputError(f"enumerate_by (--enumerate) must be one of {', '.join(ENUMERATE_UNITS)}, got "
                         f"{enumerate_by!r}")
    if epsilon < 0 or not math.isfinite(epsilon):
        raise InputError(f"epsilon must be a finite number ≥ 0, got {epsilon}")
    t_start = time.perf_counter()
    run = _Run(epsilon, enumerate_by, progress, sig, t_start,
               None if time_limit is None else t_start + max(0.0, float(time_limit)), jobs=jobs,
               count_past_cap=count_past_cap)
    ws = _validate_warm_start(table, warm_start) if warm_start is not None else None
    data = _Data(table)
    stats: dict[str, Any] = {"phase1": _new_stats()}
    if any(data.start[i + 1] == data.start[i] for i in range(data.n)):
        return run.finish(optimum=None, bound=-math.inf, gap=math.inf, status="infeasible", complete=False,
                          networks=[], stats=stats, message="a variable has no candidate parent set: no DAG exists")
    if data.n == 0:
        return run.finish(optimum=0.0, bound=0.0, gap=0.0, status="optimal", complete=True,
                          networks=[Network(0.0, {})], stats=stats)
    listing = epsilon > 0 or enumerate_ties
    try:
        return _phases(run, data, table, ws, listing, max_networks, verbose, stats)
    except DPStopped as stopped:
        return _dp_stopped(run, data, stopped, max_networks, stats)


def _phases(run: _Run, data: _Data, table: ScoreTable, ws: Parents | None, listing: bool, max_networks: int,
            verbose: bool, stats: dict[str, Any]) -> SolveResult:
    """Phase 1 (the programme, or branch-and-cut racing it), then phase 2 when ``listing`` (peeling, or
    branch-and-cut). Raises :class:`DPStopped` when the time limit or a signal stops the programme."""
    epsilon = run.epsilon
    classes = run.enumerated == "mecs"
    forests = _forests(data, listing, classes)
    dp_applies = forests is None and _dp_applies(data, run)
    # where the programme runs (to 22 variables) peeling lists faster (a DAG costs the branchings n arborescences)
    branchings = _branchings(data, classes) if forests is None and not dp_applies else None
    if forests is None and branchings is None:  # the other phases read the dense family matrix: built (or refused)
        data.dense_parents()                    # before any work
    # with knowledge rows the programme's OPT is an upper bound: its best DAG through each family bounds phase 1's
    # bands and filters phase 2's families
    use_dp = dp_applies and (listing or not needs_rows(data)
                             or (settings.KNOWLEDGE_BAND_NATS > 0 and data.n <= settings.DP_MAX_VARIABLES))
    dp = _dynamic_programme(run, data, listing or needs_rows(data), stats) if use_dp else None
    if dp is not None and not math.isfinite(dp.opt):
        return _no_dag(run, stats)
    if forests is not None:
        found: _Optimum | SolveResult | None = _forest_optimum(data, forests, stats)
        if ws is not None:
            stats["warm_start_used"] = False
    elif branchings is not None:
        found = _branching_optimum(run, data, branchings, stats)
        if ws is not None:
            stats["warm_start_used"] = False
    elif dp is not None and not needs_rows(data):
        found = _optimum_of(data, dp, stats)
        if ws is not None:      # only branch-and-cut's phase 1 takes a start: say it went unused
            stats["warm_start_used"] = False
    elif dp is not None and dp.best_containing is not None and ws is None and settings.KNOWLEDGE_BAND_NATS > 0:
        found = _optimum_in_bands(run, data, table, dp, verbose, stats)
    else:
        run.budget = None if use_dp else _race_budget(data, run)
        found = _prove_optimum(run, data, table, ws, verbose, stats)
        if found is None and _handover_fits(run, data, stats, "phase1"):   # the race's budget ran out in phase 1
            dp = _dp_takes_over(run, data, listing, stats, "phase1")
            if not math.isfinite(dp.opt):
                return _no_dag(run, stats)
            found = _optimum_of(data, dp, stats)
        elif found is None:                     # no room for the programme now: branch-and-cut again, to the end
            found = _prove_optimum(run, data, table, ws, verbose, stats, run.incumbent and run.incumbent[0])
    if isinstance(found, SolveResult):
        return found
    assert found is not None
    if not listing:
        return run.finish(optimum=found.opt, bound=max(found.dual, found.opt), gap=0.0, status="optimal",
                          complete=False, networks=[Network(found.opt, data.parents(found.choice))], stats=stats,
                          message="optimal network found; other optimal networks (ties) were not listed")
    if forests is not None:
        return _enumerate_forests(run, data, found, forests, max_networks, stats)
    if branchings is not None:
        return _enumerate_branchings(run, data, found, branchings, classes, max_networks, stats)
    if dp is None and run.budget is not None:   # still racing: phase 2 by branch-and-cut within the budget
        done = _enumerate(run, data, found, max_networks, classes, verbose, stats)
        if done is not None:
            return done
        run.proven = found
        if _handover_fits(run, data, stats, "phase2"):
            dp = _dp_takes_over(run, data, True, stats, "phase2")
    run.budget = None
    if dp is not None:
        if dp.best_containing is not None:      # bound mode has no filter: peeling sees every family
            data, found = _credible_families(data, found, dp, epsilon, stats["dp"])
        if settings.DP_ENUMERATION and not needs_rows(data):
            done = _enumerate_by_peeling(run, data, found, dp, max_networks, classes, stats)
            if done is not None:
                return done
    if run.jobs > 1:
        return _enumerate_split(run, data, found, max_networks, classes, verbose, stats)
    result = _enumerate(run, data, found, max_networks, classes, verbose, stats)
    assert result is not None                   # no budget: branch-and-cut always returns a result
    return result


def _dp_stopped(run: _Run, data: _Data, stopped: DPStopped, max_networks: int,
                stats: dict[str, Any]) -> SolveResult:
    """The result when the time limit or a signal stopped the programme: OPT proven if branch-and-cut had
    proven it or the programme's forward pass was over (then the credible networks found so far: the
    optimum, and what branch-and-cut's phase 2 had listed), else the best DAG known and an upper bound."""
    status, words = _early_stop("userinterrupt" if stopped.interrupted else "timelimit", run.sig)
    where = f"{words} in the dynamic programme ({stopped.done:.0%} of its passes done)"
    found = run.proven
    rows = needs_rows(data)     # knowledge the table cannot say: the programme's OPT is only a bound
    if found is None and stopped.result is not None and not rows:
        found = _optimum_of(data, stopped.result, stats)
    if found is None:
        stats["phase1"].update(method="dynamic programming", seconds=stats["dp"]["seconds"])
        # the sink heuristic knows nothing of such knowledge: no DAG rather than one that breaks it
        fallback = (None if rows else _sink_dag(data, np.zeros(data.K)), data.offset)
        choice, dual = run.incumbent or fallback
        if stopped.incumbent is not None and not rows:     # bound mode stopped while peeling: its best DAG, F32(V)
            peeled, upper = stopped.incumbent
            if peeled is not None and (choice is None or data.exact(peeled) > data.exact(choice)):
                choice = peeled
            dual = min(dual, upper)
        return _unproven(run, data, stats, status, f"{where}, phase 1", choice, dual)
    classes = run.enumerated == "mecs"
    got = run.collected or _Collected.of(data, found.opt, run.epsilon, classes)
    optimal = tuple(sorted(found.choice))
    # OPT's DAG becomes its class's DAG unless a better one (ties: a smaller choice) is held
    got.credible.add_rows(np.array(optimal), np.array([data.exact(optimal)]))
    stats.setdefault("phase2", {}).setdefault("method", "dynamic programming")
    return _collected_result(run, data, found, got, (status, where), max_networks, classes, stats)


def _unproven(run: _Run, data: _Data, stats: dict[str, Any], status: str, where: str,
              choice: tuple[int, ...] | None, dual: float) -> SolveResult:
    """The result of a phase 1 stopped before OPT was proven: the best DAG known (``choice``, if any), the
    upper bound ``dual`` and the gap; ``where`` opens the message (why and where it stopped)."""
    if choice is None:
        return run.finish(optimum=None, bound=dual, gap=math.inf, status=status, complete=False, networks=[],
                          stats=stats, message=f"{where} before any DAG was found (upper bound {dual:.6f}); "
                                               "optimality not proven")
    opt = data.exact(choice)
    gap = abs(dual - opt) / max(abs(opt), 1e-12)
    return run.finish(optimum=opt, bound=dual, gap=gap, status=status, complete=False,
                      networks=[Network(opt, data.parents(choice))], stats=stats,
                      message=f"{where}: best DAG {opt:.6f}, upper bound {dual:.6f}, gap {gap:.3g}; "
                              "optimality not proven")


def _no_dag(run: _Run, stats: dict[str, Any]) -> SolveResult:
    return run.finish(optimum=None, bound=-math.inf, gap=math.inf, status="infeasible", complete=False,
                      networks=[], stats=stats, message="the score table admits no DAG")


def _dp_fits(data: _Data, run: _Run, before: float = 0.0) -> bool:
    """Whether the programme fits: twice its estimated time left after ``before`` seconds (the time limit
    stops it, but a programme stopped before its filter lists nothing past OPT), its tables in half the free
    memory. In bound mode once its estimate: there it is generous enough alone (wdbc BF 20, 31 variables:
    863 s estimated on 2 threads, 493 s measured), peeling follows at once, and a programme stopped keeps
    what branch-and-cut had proven and listed."""
    rem = run.remaining()
    room = (1 if bound_mode(data.n) else 2) * _dp_estimate(data)
    return (rem is None or rem >= before + room) and _dp_memory(data)[0]


def _dp_memory(data: _Data) -> tuple[bool, int, int | None]:
    """(whether the programme's planned tables fit in half the free memory now, their bytes, the free bytes)."""
    free = free_memory()
    need = plan_tables(data).bytes(data.n)
    return free is None or need <= free / 2, need, free


def _handover_fits(run: _Run, data: _Data, stats: dict[str, Any], phase: str) -> bool:
    """Whether the programme may take over at the end of the race's budget in ``phase``: its tables must still
    fit in half the free memory, as when the race began (:func:`_dp_fits`) — branch-and-cut's listing may have
    taken the room since, and the programme would then meet the out-of-memory killer. When they do not, the
    race ends without it (``run.budget`` None, so branch-and-cut runs that phase again, to its end or the
    limits), the raced statistics move to ``stats[phase + "_raced"]`` and ``stats["dp_handover_refused"]``
    says why."""
    fits, need, free = _dp_memory(data)
    if not fits:
        run.budget = None
        stats[phase + "_raced"] = stats.pop(phase)
        stats[phase] = _new_stats()
        stats["dp_handover_refused"] = {"phase": phase, "bytes": need, "free_bytes": free}
    return fits


def _dp_estimate(data: _Data) -> float:
    """The programme's estimated seconds with its planned tables, the scans of the sets outside them
    included (:func:`bnilp.ilp.dp.plan_tables`)."""
    return plan_tables(data).seconds(data.n)


def _race_budget(data: _Data, run: _Run) -> float | None:
    """When branch-and-cut must hand over to the programme (a ``time.perf_counter`` time), or None when
    they do not race: above ``DP_MAX_VARIABLES`` and up to ``DP_RACE_MAX_VARIABLES`` variables, without
    knowledge rows, where the programme fits after the budget of ``DP_RACE_BUDGET_FACTOR`` × its estimated
    time. The budget covers both phases of branch-and-cut."""
    if (settings.DP_MAX_VARIABLES == 0 or not settings.DP_MAX_VARIABLES < data.n <= settings.DP_RACE_MAX_VARIABLES
            or needs_rows(data) or not _dp_sums_trusted(data) or not _bound_mode_resolves(data)):
        return None
    budget = settings.DP_RACE_BUDGET_FACTOR * _dp_estimate(data)
    return time.perf_counter() + budget if _dp_fits(data, run, budget) else None


def _dp_takes_over(run: _Run, data: _Data, containing: bool, stats: dict[str, Any], phase: str) -> DPResult:
    """The race's budget ran out in ``phase``: its branch-and-cut statistics move to
    ``stats[phase + "_branch_and_cut"]`` and the programme runs."""
    run.budget = None
    stats[phase + "_branch_and_cut"] = stats.pop(phase)
    stats[phase] = _new_stats()
    if run.proven is not None:
        known = run.proven.choice
    else:
        known = run.incumbent[0] if run.incumbent is not None else None
    return _dynamic_programme(run, data, containing, stats, None if known is None else data.exact(known))


def _dp_applies(data: _Data, run: _Run) -> bool:
    """Whether the dynamic programme runs first (never when ``DP_MAX_VARIABLES`` is 0, which turns every use
    of it off): up to ``DP_MAX_VARIABLES`` always; up to
    ``DP_LARGE_TABLE_MAX_VARIABLES`` on tables with at least ``DP_LARGE_TABLE_FAMILIES`` parent sets, when
    the time limit leaves room for it (stopped by the limit, it leaves the credible set unlisted) and its
    tables fit in half the free memory."""
    if not (_dp_sums_trusted(data) and _bound_mode_resolves(data)):
        return False
    if 0 < data.n <= settings.DP_MAX_VARIABLES:
        return True
    return (settings.DP_MAX_VARIABLES > 0 and data.n <= settings.DP_LARGE_TABLE_MAX_VARIABLES
            and data.K >= settings.DP_LARGE_TABLE_FAMILIES and _dp_fits(data, run))


def _bound_mode_resolves(data: _Data) -> bool:
    """Whether float32 can tell the networks apart where the programme would run in bound mode: its slack
    n·2^−23·Σ_v max_Π |s(v, Π)| (an upper bound on n·2^−23·max|F32|, :func:`bnilp.ilp.dp.solve_dp`) at most
    :data:`~bnilp.ilp.settings.DP_BOUND_MAX_SLACK` nats; always where it runs in exact mode."""
    if not bound_mode(data.n) or data.K == 0 or not data._finite:
        return True
    return data.n * 2.0 ** -23 * _score_magnitude(data) <= settings.DP_BOUND_MAX_SLACK


def _score_magnitude(data: _Data) -> float:
    """M = Σ_v max_Π |s(v, Π)|: no partial sum of one family per variable exceeds it."""
    return float(np.maximum.reduceat(np.abs(data.score), data.start[:-1][np.diff(data.start) > 0]).sum())


def _dp_sums_trusted(data: _Data) -> bool:
    """Whether the programme's float sums of n local scores (added in an order of its own, not fsum) are
    exact enough: their worst rounding, about n·2^-52·M with M = Σ_v max_Π |s(v, Π)| (no partial sum exceeds M),
    must stay within a tenth of the tie tolerance 1e-9·|OPT|, where |OPT| is bounded below by |Σ_v best(v)|
    when that upper bound of OPT is negative, by the empty graph's score when that lower bound is positive (and
    a DAG of the table), else by 0. Scores of both signs
    that cancel (totals near 0 from terms near 1e15) fail it, and branch-and-cut — exact sums on shifted
    objectives — solves those instead (the programme picked a non-optimal DAG and peeled credible ones away)."""
    if data.K == 0 or not data._finite:
        return True
    magnitude = _score_magnitude(data)
    empty = np.flatnonzero(data.family_sizes() == 0)            # each variable's family with no parents
    if data.offset < 0:
        lo = -data.offset
    elif len(empty) == data.n and (e := math.fsum(data.score[empty].tolist())) > 0:
        lo = e
    else:
        lo = 0.0
    return data.n * 2.3e-16 * magnitude <= 1e-10 * max(1.0, lo)


def _dynamic_programme(run: _Run, data: _Data, containing: bool, stats: dict[str, Any],
                       floor: float | None = None) -> DPResult:
    """OPT and (for phase 2) the best DAG score through each family by dynamic programming
    (:mod:`bnilp.ilp.dp`; in bound mode, past ``DP_EXACT_MAX_VARIABLES``, OPT only, ``floor`` the score of
    a DAG already known); its time and memory go to ``stats["dp"]``. The time limit and signals stop it
    (:class:`DPStopped`, with ``stats["dp"]["stopped"]`` the share of its passes done)."""
    t0 = time.perf_counter()
    plan = plan_tables(data)
    stats["dp"] = {"bytes": plan.bytes(data.n), "table_entries": plan.entries,
                   "scan_steps_estimate": plan.scan_steps, "seconds_estimate": _dp_estimate(data),
                   "mode": "bound (float32 F, no filter)" if bound_mode(data.n) else "exact"}
    try:
        with run.sig.catching_interrupts():
            dp = solve_dp(data, containing=containing, stop=run.dp_should_stop, floor=floor,
                          progress=lambda share: run.report("dynamic programme", 0, done=share))
    except DPStopped as stopped:
        stats["dp"].update(seconds=time.perf_counter() - t0, stopped=stopped.done)
        if stopped.result is not None:
            stats["dp"]["optimum"] = stopped.result.opt
        raise
    stats["dp"].update(seconds=time.perf_counter() - t0, optimum=dp.opt)
    return dp


def _optimum_of(data: _Data, dp: DPResult, stats: dict[str, Any]) -> _Optimum:
    """Phase 1's result from the DP: OPT is the fsum of the DP's optimal choice; the bound is proven."""
    stats["phase1"].update(method="dynamic programming", seconds=stats["dp"]["seconds"], nodes=0, lps=0,
                           lp_iterations=0, n_families=data.K, n_variables=data.n)
    opt = data.exact(dp.choice)
    return _Optimum(opt, math.fsum(data.obj[k] for k in dp.choice), max(opt, dp.opt), dp.choice, [])


def _credible_families(data: _Data, found: _Optimum, dp: DPResult, epsilon: float,
                       stats: dict[str, Any]) -> tuple[_Data, _Optimum]:
    """Phase 2's families: those in at least one DAG that phase 2 could keep, i.e. with
    best(v, W) ≥ OPT − ε − tie tolerance (:mod:`bnilp.ilp.dp`), less a margin for the DP's float sums.
    Every credible DAG uses only kept families, so the credible set is unchanged."""
    assert dp.best_containing is not None
    opt = found.opt         # not dp.opt: with knowledge rows the DP's optimum is only an upper bound
    keep = dp.best_containing >= opt - epsilon - _tie_tol(opt) - _dp_margin(opt)
    keep[list(found.choice)] = True
    sub, new_index = data.restricted(keep)
    choice = tuple(int(new_index[k]) for k in found.choice)
    stats.update(families=data.K, families_kept=sub.K)
    return sub, _Optimum(found.opt, math.fsum(sub.obj[k] for k in choice), found.dual, choice, found.clusters)


def _optimum_in_bands(run: _Run, data: _Data, table: ScoreTable, dp: DPResult, verbose: bool,
                      stats: dict[str, Any]) -> _Optimum | SolveResult | None:
    """Phase 1 under knowledge rows where the programme has run: branch-and-cut on the families of a band first.

    With b(f) the programme's best DAG score through family f (no knowledge: an upper bound on every DAG of
    D(K) holding f) and a level L, every DAG of D(K) scoring ≥ L holds only families with b(f) ≥ L. So
    branch-and-cut on those families alone (the band) finds OPT_K when its own optimum reaches L. Otherwise:
    no DAG of D(K) in the band (infeasible) — widen it fourfold, and by one family at least; its optimum below
    L — that DAG of D(K) scores OPT_K or less, so the band down to its score holds OPT_K: one more round, final.
    The first band is :data:`~bnilp.ilp.settings.KNOWLEDGE_BAND_NATS` below the programme's OPT; a band past
    :data:`~bnilp.ilp.settings.KNOWLEDGE_BAND_MAX_SHARE` of the table is the whole table. A round stopped by
    the time limit or a signal reports the band's best DAG and the upper bound max(its bound, L), at most the
    programme's OPT.
    ``stats["phase1"]["bands"]`` lists each round (level, families, outcome); seconds and nodes are summed."""
    stats1 = stats["phase1"]
    rounds: list[dict[str, Any]] = []
    level = dp.opt - settings.KNOWLEDGE_BAND_NATS
    final = False                           # the band holds a DAG of D(K) scoring its level: it holds OPT_K
    while True:
        keep = dp.best_containing >= level - _tie_tol(level) - _dp_margin(level)
        whole = int(keep.sum()) > settings.KNOWLEDGE_BAND_MAX_SHARE * data.K
        band, rows = (data, np.arange(data.K)) if whole else (data.restricted(keep)[0], np.flatnonzero(keep))
        got = _prove_optimum(run, band, table, None, verbose, stats, band=None if whole else level,
                             ceiling=dp.opt + _dp_margin(dp.opt))
        rounds.append({"level": None if whole else level, "families": band.K, "seconds": stats1.get("seconds", 0.0),
                       "nodes": stats1.get("nodes", 0)})
        if got is None:                     # no DAG of D(K) in the band: wider, by one family at least
            rounds[-1]["outcome"] = "no DAG"
            level = min(dp.opt - 4 * (dp.opt - level), float(dp.best_containing[~keep].max()))
            continue
        if isinstance(got, SolveResult) or whole or final or got.opt >= level:
            rounds[-1]["outcome"] = "stopped" if isinstance(got, SolveResult) else "optimal"
            break
        rounds[-1]["outcome"] = "below the level"
        level, final = got.opt, True
    stats1.update(bands=rounds, seconds=math.fsum(r["seconds"] for r in rounds),
                  nodes=sum(r["nodes"] for r in rounds), n_families=data.K)
    if isinstance(got, SolveResult) or whole:
        return got
    choice = tuple(int(rows[k]) for k in got.choice)
    return _Optimum(got.opt, math.fsum(data.obj[k] for k in choice), got.dual, choice, got.clusters)


def _sink_timing() -> Any:
    """SCIP's timing mask for the sink heuristic (:data:`settings.SINK_HEUR_TIMING`)."""
    if settings.SINK_HEUR_TIMING not in settings.SINK_HEUR_TIMINGS:
        raise ValueError(f"SINK_HEUR_TIMING must be one of {settings.SINK_HEUR_TIMINGS}")
    if settings.SINK_HEUR_TIMING == "duringlploop":
        return SCIP_HEURTIMING.AFTERLPNODE | SCIP_HEURTIMING.DURINGLPLOOP
    return SCIP_HEURTIMING.AFTERLPNODE


def _prove_optimum(run: _Run, data: _Data, table: ScoreTable, ws: Parents | None, verbose: bool,
                   stats: dict[str, Any], known: tuple[int, ...] | None = None,
                   band: float | None = None, ceiling: float | None = None) -> _Optimum | SolveResult | None:
    """Phase 1: branch-and-cut to OPT from the warm start, ``known`` (a choice of families: the best DAG of a
    phase 1 run before) and the greedy sink DAG. Returns what it proved, or the final result when it could not
    (infeasible, or stopped by a limit or a signal), or None when the race's budget (:attr:`_Run.budget`) ran
    out first. ``band``: ``data`` is a band of the table (:func:`_optimum_in_bands`) whose left-out families are
    in no DAG scoring ``band`` or more — infeasible is then None, and a stop reports the bound max(dual, band);
    ``ceiling``: an upper bound known besides SCIP's (the programme's OPT), the bound reported at most that."""
    stats1 = stats["phase1"]
    stats1["method"] = "branch-and-cut"
    run.report("optimize", 0, force=True)

    def tick1() -> None:
        run.report("optimize", 0)

    model, xvars, hdlr = _build(data, stats1, False, verbose, tick=tick1)
    model.includeHeur(_SinkHeur(hdlr, stats1, tick1), "sinkfind",
                      "sink-finding LP rounding", "S", priority=settings.SINK_HEUR_PRIORITY,
                      freq=settings.SINK_HEUR_FREQ, freqofs=0, maxdepth=-1,
                      timingmask=_sink_timing())
    starts = []
    if ws is not None:
        starts.append(tuple(data.start[i] + [ps for ps, _ in table.sorted_family(v)].index(ws[v])
                            for i, v in enumerate(data.names)))
    greedy = _sink_dag(data, np.zeros(data.K))
    starts += [c for c in (known, greedy) if c is not None]
    for choice in starts:
        sol = model.createSol()
        for k in choice:
            model.setSolVal(sol, xvars[k], 1.0)
        model.addSol(sol)
    if run.budget_spent():
        return None
    status1 = _optimize(model, run, stats1)
    stats1.update(solutions_found=model.getNSolsFound(), n_families=data.K, n_variables=data.n)
    # Σ_i best_i is always an upper bound (SCIP reports its infinity before the first LP).
    dual = min(model.getDualbound(), 0.0) + data.offset if status1 != "infeasible" else -math.inf
    best_choice: tuple[int, ...] | None = None
    if model.getNSols():
        _, best_choice = _choice(data, np.array([model.getSolVal(model.getBestSol(), v) for v in xvars]))
    if status1 == "optimal" and best_choice is None:
        raise RuntimeError("SCIP reported optimal but its best solution is not a parent choice")
    if status1 == "infeasible":
        if band is not None:
            return None
        return run.finish(optimum=None, bound=-math.inf, gap=math.inf, status="infeasible", complete=False,
                          networks=[], stats=stats, message="the score table admits no DAG")
    if band is not None:
        dual = max(dual, band)
    if ceiling is not None:
        dual = min(dual, ceiling)
    if run.budget_stop(status1):
        run.incumbent = (best_choice, dual)
        model.freeTransform()                   # SCIP's tree and LP go back before the programme's tables come
        return_freed_memory()                   # (the model lives on in a cycle with its plugins until collected)
        return None                             # the race's budget, not the time limit: the programme goes on
    if status1 != "optimal":
        status, why = _early_stop(status1, run.sig)
        return _unproven(run, data, stats, status, f"{why} in phase 1", best_choice, dual)
    assert best_choice is not None
    return _Optimum(data.exact(best_choice), math.fsum(data.obj[k] for k in best_choice), dual, best_choice,
                    list(hdlr.clusters.values()))


def _forests(data: _Data, listing: bool, classes: bool) -> ForestEdges | None:
    """The candidate edges when the table's classes are forests scored by their edges
    (:mod:`bnilp.ilp.forests`; at most one parent a family, each arrow's reverse held and scored alike, no
    knowledge rows), for phase 1 and class enumeration (:data:`~bnilp.ilp.settings.FOREST_ENUMERATION`); DAG
    enumeration keeps its own phases. The orientations of a forest may differ by rounding only: n times the
    largest difference stays within half the tie tolerance of the empty network's score."""
    if not settings.FOREST_ENUMERATION or (listing and not classes) or needs_rows(data):
        return None
    return forest_edges(data, 0.5 * _tie_tol(data.offset) / max(1, data.n))


def _forest_optimum(data: _Data, forests: ForestEdges, stats: dict[str, Any]) -> _Optimum:
    """Phase 1 on a forest table: the heaviest forest (Kruskal, exact for the graphic matroid) is OPT's class."""
    t0 = time.perf_counter()
    _, chosen = heaviest_forest(forests, data.n)
    choice = tuple(int(k) for k in representative(forests, chosen, data.n))
    opt = data.exact(choice)
    stats["phase1"].update(method="forests", seconds=time.perf_counter() - t0, nodes=0, lps=0, lp_iterations=0,
                           n_families=data.K, n_variables=data.n, forest_edges=len(forests.w))
    return _Optimum(opt, math.fsum(data.obj[k] for k in choice), opt, choice, [])


def _branchings(data: _Data, classes: bool) -> BranchingArcs | None:
    """The arcs when every family has at most one parent and the forests do not apply (arrows held one way only,
    required adjacencies; DAG enumeration; :mod:`bnilp.ilp.branchings`,
    :data:`~bnilp.ilp.settings.BRANCHING_ENUMERATION`) — phase 1 and the listing of DAGs or classes, where the
    programme does not run; None with knowledge the arcs cannot say (ancestors, independences, dependences:
    branch-and-cut's rows) and, for classes, where an arrow and its reverse score apart by more than rounding (not
    score-equivalent: the forests' tolerance)."""
    if not settings.BRANCHING_ENUMERATION:
        return None
    k = getattr(data, "knowledge", None)
    if k is not None and (k.required_ancestors or k.forbidden_ancestors or k.independent or k.dependent):
        return None
    arcs = branching_arcs(data, _index_pairs(data, k.required_adjacent) if k is not None else None)
    if arcs is None or (classes and arcs.asymmetry > 0.5 * _tie_tol(data.offset) / max(1, data.n)):
        return None
    return arcs


def _branching_optimum(run: _Run, data: _Data, arcs: BranchingArcs, stats: dict[str, Any]) -> _Optimum | SolveResult:
    """Phase 1 on a one-parent table: the maximum spanning arborescence is OPT's DAG."""
    t0 = time.perf_counter()
    best = best_branching(arcs)
    stats["phase1"].update(method="branchings", seconds=time.perf_counter() - t0, nodes=0, lps=0, lp_iterations=0,
                           n_families=data.K, n_variables=data.n, arcs=len(arcs.tail))
    if best is None:
        return _no_dag(run, stats)
    choice = tuple(int(k) for k in best[1])
    opt = data.exact(choice)
    return _Optimum(opt, math.fsum(data.obj[k] for k in choice), opt, choice, [])


def _enumerate_branchings(run: _Run, data: _Data, found: _Optimum, arcs: BranchingArcs, classes: bool,
                          max_networks: int, stats: dict[str, Any]) -> SolveResult:
    """Phase 2 on a one-parent table: the credible DAGs, or one DAG per admitted class, heaviest first
    (:class:`~bnilp.ilp.branchings.BranchingLister`; a float margin below OPT − ε − tol, the exact fsum of each
    DAG deciding), as the forests (:func:`_listed_best_first`)."""
    opt = found.opt
    got = _Collected(threshold=opt - run.epsilon - _tie_tol(opt), best_first=True)
    # a DAG's weight is exact; a class's is any of its rootings', so only classes allow for the rounding between
    # an arrow and its reverse (a review: a DAG listing of MVP scores, asymmetric by 39 nats, floored 1,162 nats
    # low, listed 150,001 DAGs for 2 credible ones)
    floor = got.threshold - arcs.base_score - _dp_margin(opt) - (data.n * arcs.asymmetry if classes else 0.0)
    stats2: dict[str, Any] = {"method": "branchings", "arcs": len(arcs.tail)}
    stats["phase2"] = stats2
    lister = BranchingLister(arcs, classes, floor)
    t0 = time.perf_counter()

    def next_row() -> np.ndarray | None:
        nxt = lister.next_solution()
        return None if nxt is None else nxt[1]

    stopped = _listed_best_first(run, data, got, next_row, lambda: lister.done, max_networks, classes, stats2)
    stats2.update(seconds=time.perf_counter() - t0, parts=lister.parts, arborescences=lister.solved,
                  collected=len(got.credible),
                  **{"classes_found" if classes else "networks_found": len(got.credible)})
    return _collected_result(run, data, found, got, stopped, max_networks, classes, stats)


def _enumerate_forests(run: _Run, data: _Data, found: _Optimum, forests: ForestEdges, max_networks: int,
                       stats: dict[str, Any]) -> SolveResult:
    """Phase 2 on a forest table: the credible classes are the forests weighing at least OPT − ε − tol less the
    empty network's score, listed heaviest first (:class:`~bnilp.ilp.forests.ForestLister`; a float margin below
    it, the exact fsum of a representative deciding), one representative DAG each (:func:`_listed_best_first`)."""
    opt = found.opt
    got = _Collected(threshold=opt - run.epsilon - _tie_tol(opt), best_first=True)
    floor = got.threshold - math.fsum(data.score[forests.empty]) - _dp_margin(opt) - data.n * forests.asymmetry
    stats2: dict[str, Any] = {"method": "forests", "forest_edges": len(forests.w)}
    stats["phase2"] = stats2
    lister = ForestLister(forests, data.n, floor)
    t0 = time.perf_counter()

    def next_row() -> np.ndarray | None:
        nxt = lister.next_forest()
        return None if nxt is None else representative(forests, nxt[1], data.n)

    stopped = _listed_best_first(run, data, got, next_row, lambda: lister.done, max_networks, True, stats2)
    n_rows = len(got.credible)
    stats2.update(seconds=time.perf_counter() - t0, forests=n_rows, parts=lister.parts, collected=n_rows,
                  classes_found=n_rows)
    return _collected_result(run, data, found, got, stopped, max_networks, True, stats)


def _listed_best_first(run: _Run, data: _Data, got: _Collected, next_row: Callable[[], np.ndarray | None],
                       done: Callable[[], bool], max_networks: int, classes: bool,
                       stats2: dict[str, Any]) -> tuple[str, str] | None:
    """Phase 2's loop over a lister that gives the credible DAGs or classes heaviest first (the forests, the
    branchings): ``next_row`` the next one's DAG as family indices (None when none is left), ``done`` whether the
    list is complete. Stopped by the cap (one past it: the list is then the best ``max_networks``), a signal, the
    clock or the memory guard — the reason returned, None when complete or capped; what was listed goes into
    ``got.credible`` with its exact fsum scores."""
    watch = _MemoryWatch.of(data, classes, max_networks)
    rows: list[np.ndarray] = []
    stopped = None
    run.report("enumerate", 0, force=True)
    try:
        with run.sig.catching_interrupts():
            while not done():
                row = next_row()
                if row is None:
                    break
                rows.append(row)
                if run.capped(len(rows), max_networks):     # one more than the cap: the best max_networks are known
                    got.limit_hit = True
                    break
                watch.tally(rows[-1][None, :])
                if done():                              # complete: no clock, signal or guard can make it less
                    break
                if run.sig.received:                    # (each listed one is looked at: compiled, milliseconds)
                    stopped = _early_stop("userinterrupt", run.sig)
                    break
                rem = run.remaining()
                if rem is not None and rem <= 0:
                    stopped = _early_stop("timelimit", run.sig)
                    break
                if watch.short(len(rows)):              # (it looks at the free memory every few seconds)
                    got.memory_hit = True
                    stopped = _memory_stop(watch, stats2)
                    break
                run.report("enumerate", len(rows))
    except KeyboardInterrupt:                   # SIGINT (SIGTERM sets run.sig.received, seen at the next one)
        stopped = _early_stop("userinterrupt", run.sig)
    table = np.array(rows, dtype=np.int64).reshape(len(rows), data.n)
    scores = data.exact_rows(table)
    if got.limit_hit and np.count_nonzero(scores >= got.threshold) <= max_networks:
        got.limit_hit = False                   # the one past the cap was within the float margin, not credible
    got.credible = {tuple(r): float(sc) for r, sc in zip(table.tolist(), scores.tolist(), strict=True)}
    return stopped


def _enumerate_by_peeling(run: _Run, data: _Data, found: _Optimum, dp: DPResult, max_networks: int,
                          classes: bool, stats: dict[str, Any]) -> SolveResult | None:
    """Phase 2 without branch-and-cut: every DAG with s ≥ OPT − ε − tol by canonical sink peeling under
    the DP bound (:class:`bnilp.ilp.dp.Peeler`), on the kept families. With ``classes``, one DAG (the
    best) per Markov equivalence class (:class:`~bnilp.ilp.classbest.BestPerClass`). Class enumeration by peeling lists
    every DAG of every credible class; once more than :data:`~bnilp.ilp.settings.DP_ENUMERATION_MAX_DAGS`
    DAGs are listed and the classes average more than ``DP_ENUMERATION_DAGS_PER_CLASS`` DAGs, this
    returns None and class enumeration by branch-and-cut, which never lists a class's members, takes over."""
    assert dp.forward is not None
    opt = found.opt
    stats2: dict[str, Any] = {"method": "peeling", "dags_listed": 0}
    stats["phase2"] = stats2
    got = _Collected(threshold=opt - run.epsilon - _tie_tol(opt))
    peeler = Peeler(data, dp.forward, got.threshold - _dp_margin(opt))
    best_of_class = BestPerClass(data.n)
    optimal = tuple(sorted(found.choice))       # one family per variable, in variable order
    if classes:                                 # listed first even if a limit stops the peeling early
        first = np.array([optimal])
        best_of_class.add(data.class_words(first), np.array([data.exact(optimal)]), first)
    watch = _MemoryWatch.of(data, classes, max_networks)
    if not classes:
        got.credible[optimal] = data.exact(optimal)
        watch.tally(np.array([optimal]))
    t0 = time.perf_counter()
    run.report("enumerate", 0, force=True)
    try:
        with paused_gc(), run.sig.catching_interrupts():    # millions of live tuples, no garbage among them
            stopped = _peel_all(run, data, peeler, got, best_of_class, max_networks, classes, stats2, watch)
    except KeyboardInterrupt:                   # SIGINT (SIGTERM sets run.sig.received, seen between chunks)
        stopped = _early_stop("userinterrupt", run.sig)
    if stopped == "gave up":
        stats2.update(seconds=time.perf_counter() - t0, classes_seen=len(best_of_class),
                      gave_up="classes too large for peeling: branch-and-cut takes over")
        stats["phase2_peeling"] = stats.pop("phase2")
        return None
    if classes:
        scores, choices = best_of_class.ranked()
        del best_of_class
        # the classes that may be listed fixed before the cap splits them from the tail, as branch-and-cut does
        scores, choices = _canonical_head(data, scores, choices, max_networks, _tie_tol(opt), got.threshold)
        got.canonical = True
        got.limit_hit = len(scores) > max_networks and stopped is None     # an early stop is the cause then
        if len(scores) > max_networks:
            got.tail = ClassTail(scores[max_networks:].copy(), choices[max_networks:].copy(),
                                 data.sets, data.child_names)
            if got.limit_hit and peeler.done:
                got.of_total = len(scores)
                got.of_dags = stats2["dags_listed"]
        got.credible = {tuple(c): s for s, c in zip(scores[:max_networks].tolist(),
                                                     choices[:max_networks].tolist(), strict=True)}
        stats2["classes_found"] = len(scores)
    elif len(got.credible) > max_networks:
        stats2["networks_found"] = len(got.credible)
        if peeler.done and stopped is None:             # every credible DAG peeled: the best K of all of them
            got.of_total = len(got.credible)
        got.credible = dict(sorted(got.credible.items(), key=lambda cs: (-cs[1], cs[0]))[:max_networks])
    stats2.update(seconds=time.perf_counter() - t0, steps=peeler.steps, collected=stats2["dags_listed"])
    return _collected_result(run, data, found, got, stopped, max_networks, classes, stats)


def _peel_all(run: _Run, data: _Data, peeler: Peeler, got: _Collected,
              best_of_class: BestPerClass, max_networks: int, classes: bool,
              stats2: dict[str, Any], watch: _MemoryWatch) -> Any:
    """The peeling loop of :func:`_enumerate_by_peeling`: DAGs into ``got.credible`` (or the best per
    class into ``best_of_class``) until done, the cap, a signal, the clock or the memory guard (``watch``:
    the report will hold at most ``max_networks`` of the classes found, the rest go to the compact tail);
    returns None (done or capped: ``got.limit_hit``), (status, words) for an early stop, or "gave up"."""
    while not peeler.done:
        rows = peeler.next_chunk()
        scores = data.exact_rows(rows)
        keep = scores >= got.threshold
        rows, scores = rows[keep], scores[keep]
        stats2["dags_listed"] += len(rows)
        if classes:
            best_of_class.add(data.class_words(rows), scores, rows)
        else:
            got.credible.update((tuple(row.tolist()), float(s)) for row, s in zip(rows, scores, strict=True))
            watch.tally(rows)       # (best_of_class is tallied by the guard itself)
        if not classes and len(got.credible) > max_networks:      # one more than the cap: a set of exactly
            got.limit_hit = True                                  # max_networks is peeled to its end
            return None
        if peeler.done:             # complete: no clock, signal or guard can make it less (it once read "time limit")
            break
        if (classes and stats2["dags_listed"] > settings.DP_ENUMERATION_MAX_DAGS
                and stats2["dags_listed"] > settings.DP_ENUMERATION_DAGS_PER_CLASS * len(best_of_class)):
            return "gave up"
        if run.sig.received:
            return _early_stop("userinterrupt", run.sig)
        rem = run.remaining()
        if rem is not None and rem <= 0:
            return _early_stop("timelimit", run.sig)
        found = len(best_of_class) if classes else len(got.credible)
        if watch.short(found, best_of_class if classes else None):
            got.memory_hit = True
            return _memory_stop(watch, stats2)
        run.report("enumerate", found)
    return None


def _memory_stop(watch: _MemoryWatch, stats2: dict[str, Any]) -> tuple[str, str]:
    """Phase 2's stop by the memory guard: ``stats2["memory_stop"]`` and (status, words) for the message."""
    assert watch.seen is not None
    free, need = watch.seen
    stats2["memory_stop"] = {"free_bytes": free, "needed_bytes": need}
    return ("memory_limit", f"free memory low ({free / 2**30:.2f} GiB free, {need / 2**30:.2f} GiB "
                            "kept for the report of what was found)")


def _enumerate(run: _Run, data: _Data, found: _Optimum, max_networks: int, classes: bool, verbose: bool,
               stats: dict[str, Any]) -> SolveResult | None:
    """Phase 2: one branch-and-cut under the objective limit OPT − ε − tol that records every integral
    acyclic point and excludes it (or its class) by a no-good, until nothing credible is left. None when
    the race's budget (:attr:`_Run.budget`) ran out first."""
    epsilon = run.epsilon
    stats2 = _new_stats()
    stats2["method"] = "branch-and-cut"
    stats["phase2"] = stats2
    got = _Collected.of(data, found.opt, epsilon, classes)
    watch = _MemoryWatch.of(data, classes, max_networks)

    def tick() -> None:
        if not got.memory_hit and watch.short(len(got.credible), got.credible):
            got.memory_hit = True
            model2.interruptSolve()
        run.report("enumerate", len(got.credible))

    def on_record(choice: tuple[int, ...]) -> None:
        s = data.exact(choice)
        if s >= got.threshold:
            got.credible.add_rows(np.array(choice), np.array([s]))
            if run.capped(len(got.credible), max_networks):
                got.limit_hit = True
                model2.interruptSolve()
        tick()

    run.report("enumerate", 0, force=True)
    model2, hdlr2 = _phase2_model(data, found, epsilon, stats2, verbose, on_record, tick, classes)
    rem = run.remaining()
    stopped = None          # (status, words) when phase 2 ended before proving the set complete
    if run.sig.received:
        stopped = _early_stop("userinterrupt", run.sig)
    elif run.budget_spent():
        return None
    elif rem is not None and rem <= 0:
        stopped = _early_stop("timelimit", run.sig)
    else:
        status2 = _optimize(model2, run, stats2)
        stats2.update(collected=hdlr2.n_recorded)
        model2.freeTransform()      # SCIP's tree (about 20 KB a class found) back to the system for the report
        return_freed_memory()       # or for the dynamic programme, when the race hands over to it below
        if not got.limit_hit and run.budget_stop(status2):
            run.collected = got
            return None
        if got.memory_hit and not got.limit_hit and not run.sig.received and status2 != "infeasible":
            stopped = _memory_stop(watch, stats2)
        elif not got.limit_hit and status2 != "infeasible":
            stopped = _early_stop(status2, run.sig)
    return _collected_result(run, data, found, got, stopped, max_networks, classes, stats)


def _enumerate_split(run: _Run, data: _Data, found: _Optimum, max_networks: int, classes: bool, verbose: bool,
                     stats: dict[str, Any]) -> SolveResult:
    """Phase 2 on ``run.jobs`` processes: branch-and-cut here for
    :data:`~bnilp.ilp.settings.PHASE2_SERIAL_SECONDS` (a small set ends there, no worker started; its statistics
    go to ``stats["phase2_serial"]``), then the cubes of :mod:`bnilp.ilp.cubes` list the rest, what was found
    here kept (a class or DAG they find again is not added twice). A time limit that leaves less than
    :data:`~bnilp.ilp.settings.PHASE2_CUBES_MIN_SECONDS` after the serial start keeps phase 2 here to the limit
    (``stats["phase2"]["serial_reason"]``): the workers would take most of what is left to start."""
    from bnilp.ilp import cubes  # here: cubes imports this module

    serial_reason = None
    if not may_start_processes():
        serial_reason = "this process is a daemon (a multiprocessing pool's worker): it may start no worker processes"
    elif run.deadline is not None and (run.deadline - time.perf_counter()
                                       < settings.PHASE2_SERIAL_SECONDS + settings.PHASE2_CUBES_MIN_SECONDS):
        serial_reason = ("the time limit left too little time to start worker processes "
                         f"(less than {settings.PHASE2_SERIAL_SECONDS:g} s + {settings.PHASE2_CUBES_MIN_SECONDS:g} s)")
    if serial_reason is not None:
        result = _enumerate(run, data, found, max_networks, classes, verbose, stats)     # no budget: to the end
        assert result is not None
        result.stats["phase2"]["serial_reason"] = serial_reason
        return result
    # what a race's branch-and-cut collected before its budget ran out indexes the families of the table before
    # the programme's filter (_credible_families): the serial start collects afresh
    run.collected = None
    run.budget = time.perf_counter() + settings.PHASE2_SERIAL_SECONDS
    done = _enumerate(run, data, found, max_networks, classes, verbose, stats)
    run.budget = None
    if done is not None:
        return done
    got = run.collected or _Collected.of(data, found.opt, run.epsilon, classes)
    run.collected = None
    stats["phase2_serial"] = stats.pop("phase2")
    stats2 = stats["phase2"] = _new_stats()
    watch = _MemoryWatch.of(data, classes, max_networks)
    with run.sig.catching_interrupts():
        stopped = cubes.enumerate_in_cubes(run, data, found, got, classes, run.jobs, max_networks, watch, stats2)
    if got.memory_hit and not got.limit_hit and not run.sig.received:
        stopped = _memory_stop(watch, stats2)
    return _collected_result(run, data, found, got, stopped, max_networks, classes, stats)


def _phase2_model(data: _Data, found: _Optimum, epsilon: float, stats2: dict[str, Any], verbose: bool,
                  on_record: Callable[[tuple[int, ...]], None], tick: Callable[[], None], classes: bool,
                  fixings: list[tuple[np.ndarray, int]] | None = None) -> tuple[Any, Any]:
    """Phase 2's model and its acyclicity handler: phase 1's cluster cuts, the objective limit OPT − ε − tol
    (tol = max(1e-5·max(1, |shifted OPT| + ε), 2·:func:`_tie_tol`): SCIP's sums are on the shifted objective,
    and the set keeps float noise of up to the tie tolerance, which grows with |OPT|), no presolving or
    heuristics, :data:`~bnilp.ilp.settings.PHASE2_PARAMS`; ``fixings`` restrict it to a cube
    (:mod:`bnilp.ilp.cubes`)."""
    model2, _, hdlr2 = _build(data, stats2, True, verbose, on_record, found.clusters, tick=tick, classes=classes,
                              fixings=fixings)
    tol = max(1e-5 * max(1.0, abs(found.opt_shift) + epsilon), 2 * _tie_tol(found.opt))
    hdlr2.threshold = found.opt - epsilon - _tie_tol(found.opt)     # below it a point is recorded as no class
    if data.score_equivalent:                       # past this below it, the whole class is (score equivalence)
        hdlr2.class_margin = 2 * _tie_tol(found.opt)
    slack = _use_symmetry(data, model2, hdlr2, hdlr2.threshold, stats2)
    model2.setObjlimit(found.opt_shift - epsilon - tol - slack)
    model2.setPresolve(SCIP_PARAMSETTING.OFF)
    model2.setHeuristics(SCIP_PARAMSETTING.OFF)
    for name, value in settings.PHASE2_PARAMS.items():
        model2.setParam(name, value)
    return model2, hdlr2


def _use_symmetry(data: _Data, model2: Any, hdlr2: Any, threshold: float, stats2: dict[str, Any]) -> float:
    """Phase 2 with the table's symmetries (:mod:`bnilp.ilp.symmetry`) where they apply: class enumeration with
    the indicator rows and lazy no-goods, :data:`~bnilp.ilp.settings.SYMMETRY`, and no knowledge rows (an
    image of a DAG of the table may break a required adjacency or ancestry). The lex-leader rows go into
    ``model2``, the symmetry to the handler for the images; ``stats2["symmetry"]`` names the transposed pairs
    and counts the rows. Returns the slack to take off the objective limit (:attr:`TableSymmetry.slack`; 0
    without symmetry)."""
    if not (settings.SYMMETRY and hdlr2.classes and hdlr2.indicator_vars and settings.NOGOODS == "lazy"
            and not needs_rows(data)):
        return 0.0
    sym = symmetry.of(data)
    if not sym.pairs:
        return 0.0
    rows = symmetry.add_lex_rows(model2, hdlr2.indicator_vars, sym, hdlr2.indicator_index[0])
    hdlr2.symmetry, hdlr2.threshold = sym, threshold
    stats2["symmetry"] = {"pairs": [[data.names[u], data.names[v]] for u, v in sym.pairs], "lex_rows": rows,
                          "slack": sym.slack}
    return sym.slack


def _phase2_words(stats2: dict[str, Any]) -> str:
    """How phase 2 was listing, for a message: by peeling, SCIP's status, or the programme still filtering."""
    method = stats2.get("method")
    if method == "peeling":
        return "by peeling"
    if method in ("forests", "branchings"):
        return method
    if method == "dynamic programming":
        return "the programme had not filtered the parent sets yet"
    if "memory_stop" in stats2:
        return "branch-and-cut"
    return f"SCIP: {stats2.get('scip_status', 'not started')}"


def _keep_past_cap(got: _Collected, scores: np.ndarray, rows: np.ndarray, max_networks: int, data: _Data,
                   done: bool) -> None:
    """The classes of ``scores``, ``rows`` (best first) past the cap into ``got.tail``, compact; when phase 2 was
    ``done``, the list was complete, so the cap is what cuts it (``got.limit_hit``, ``got.of_total``)."""
    got.tail = ClassTail(scores[max_networks:].copy(), rows[max_networks:].astype(np.int32),
                         data.sets, data.child_names)
    if done:
        got.limit_hit = True
        got.of_total = len(scores)


def _ranked_credible(credible: dict[tuple[int, ...], float] | BestPerClass, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Phase 2's credible choices best first (−score, then the choice) as (scores, rows of family indices)."""
    if isinstance(credible, BestPerClass):
        return credible.ranked()
    rows = np.array(list(credible), dtype=np.int32).reshape(len(credible), n)
    return ranked(np.fromiter(credible.values(), dtype=float, count=len(credible)), rows)


def _canonical_head(data: _Data, scores: np.ndarray, rows: np.ndarray, max_networks: int,
                    tol: float, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """The classes that may be listed — the best ``max_networks`` and every one tied with the last of them
    within ``tol`` — represented by the DAG their class fixes (:func:`canonical_representatives`, about 30 µs
    a class at 57 variables; never by one below both the DAG found and ``threshold``), re-ranked; the rest
    (counted past the cap, never listed) as they are."""
    head = len(scores)
    if head > max_networks:
        head = int(np.count_nonzero(scores >= scores[max_networks - 1] - tol))
    # a table only assumed score-equivalent (no record says): its members may differ by what its check allows
    within = None if data.score_equivalent is not None else \
        max(EQUIVALENCE_SLACK, rounding_slack_of(data.score[np.isfinite(data.score)]))
    s, r = canonical_representatives(data, scores[:head], rows[:head], tol, threshold, within)
    if head == len(scores):
        return s, r
    return np.concatenate([s, scores[head:]]), np.concatenate([r, rows[head:]])


def _collected_result(run: _Run, data: _Data, found: _Optimum, got: _Collected, stopped: tuple[str, str] | None,
                      max_networks: int, classes: bool, stats: dict[str, Any]) -> SolveResult:
    """The result of phase 2 from what it collected: the credible choices best first, with the status
    that the network cap (``got.limit_hit``) or an early stop (``stopped``: status, words) gives."""
    epsilon = run.epsilon
    opt = found.opt
    stats2 = stats["phase2"]
    scores, rows = _ranked_credible(got.credible, data.n)
    got.credible = {}                   # the ranked arrays hold them now
    if len(scores) and scores[0] > opt:     # SCIP's tolerance may have picked a DAG a hair below the true OPT
        opt = float(scores[0])
        got.threshold = opt - epsilon - _tie_tol(opt)
    if classes and not got.canonical:
        scores, rows = _canonical_head(data, scores, rows, max_networks, _tie_tol(opt), got.threshold)
    if classes and len(scores) and scores[-1] < got.threshold:
        # a class recorded by a member that OPT's raise left below the threshold: judged by its best member
        scores, rows = best_members_below(data, scores, rows, got.threshold)
    keep = scores >= got.threshold      # best first, but past a re-represented head only up to float noise
    scores, rows = scores[keep], rows[keep]
    if len(scores) and opt - _tie_tol(opt) <= scores[0] != opt:
        # OPT's class listed by its fixed DAG, a rounding above or below the DAG found (the families of two members
        # sum to the same score but not to the same float): OPT is the listed score, so its class has ln BF 0
        # (a review: 2.27e-13, BF 1.00000000000023, under knowledge)
        opt = float(scores[0])
    if not len(scores):
        scores, rows = np.array([data.exact(found.choice)]), np.array([found.choice], dtype=np.int32)
    # branch-and-cut counted past the cap (a capped listing may hold a few more, sent as the cap stopped it)
    if classes and got.tail is None and not got.limit_hit and len(scores) > max_networks:
        _keep_past_cap(got, scores, rows, max_networks, data, stopped is None)
        stats2["classes_found"] = len(scores)
    networks = [Network(s, data.parents(tuple(c))) for s, c in zip(scores[:max_networks].tolist(),
                                                                   rows[:max_networks].tolist(), strict=True)]
    n_found = len(networks)
    bound = max(found.dual, opt)
    unit = "classes" if classes else "networks"
    if got.limit_hit and got.of_total is not None:
        return run.finish(optimum=opt, bound=bound, gap=0.0, status="network_limit", complete=False,
                          networks=networks, stats=stats, unlisted=got.tail,
                          message=f"network limit reached: the best {n_found} of {got.of_total} credible {unit}"
                                  + (f", which hold {got.of_dags} DAGs" if got.of_dags is not None else ""))
    if got.limit_hit:
        seen = max(len(scores), stats2.get("networks_found", 0))
        # listed best first (the forests: classes), the one past the cap scoring as the last kept: which tied
        # classes are kept is the listing's order (a review: the forests' keys moved by a last bit changed them)
        tie = got.best_first and len(scores) > n_found and scores[n_found] >= scores[n_found - 1] - _tie_tol(opt)
        if got.best_first:
            stats2["tie_at_cap"] = bool(tie)
        return run.finish(optimum=opt, bound=bound, gap=0.0, status="network_limit", complete=False,
                          networks=networks, stats=stats,
                          message=f"network limit reached: more than the cap of {max_networks} credible {unit}, "
                                  + (f"the best {n_found} of the {seen} found kept" if seen > n_found
                                     else f"{n_found} kept")
                                  + (f" (there are more; listed best first, these are the top {n_found})"
                                     if got.best_first else
                                     f" (there may be more; the list is not the top {n_found})")
                                  + (f"; the next {'class' if classes else 'network'} scores the same as the "
                                     "last kept, so which of the tied ones are kept is the listing's order, not the "
                                     "data's, and so are the posteriors over them" if tie else ""))
    if stopped is not None:
        n_seen = stats2.get("classes_found", n_found)      # peeling's classes, more than the cap may keep
        found_words = (f"only {n_found} {unit} within epsilon were found" if n_seen <= n_found else
                       f"only {n_seen} {unit} within epsilon were found, the best {n_found} of them kept")
        return run.finish(optimum=opt, bound=bound, gap=0.0, status=stopped[0], complete=False,
                          networks=networks, stats=stats, unlisted=got.tail,
                          message=f"{stopped[1]} while listing credible networks ("
                                  + _phase2_words(stats2) + f"): OPT is proven, but {found_words} (incomplete)")
    return run.finish(optimum=opt, bound=bound, gap=0.0, status="optimal", complete=True,
                      networks=networks, stats=stats)
