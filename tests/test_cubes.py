"""Phase 2 split into cubes by adjacency on several processes (:mod:`bnilp.ilp.cubes`)."""

from __future__ import annotations

import itertools
import math
import os

import numpy as np
import pytest

from bnilp import ilp
from bnilp.ilp import cubes, solve
from bnilp.ilp.classbest import choice_table
from bnilp.ilp.families import _Data
from bnilp.mec import mec_key
from tests.conftest import slow_after
from tests.oracles import brute_force_credible, brute_force_networks
from tests.test_ilp import as_set, check_result, random_table


def _choice_of(data: _Data, parents) -> tuple[int, ...]:
    return tuple(int(data.start[i]) + data.sets[data.start[i]:data.start[i + 1]].index(frozenset(parents[v]))
                 for i, v in enumerate(data.names))


def _adjacent(parents, u: str, v: str) -> bool:
    return u in parents[v] or v in parents[u]


@pytest.mark.slow       # 5–9 s: the quick suite is at its 15-minute bound
def test_cubes_partition_every_dag_and_every_class():
    """Each DAG of the table satisfies exactly one cube's rows, and Markov equivalent DAGs the same one — for
    the 2^k sign vectors over k pairs and for the uneven leaves of a tree (a cube split while running)."""
    for seed in range(6):
        table = random_table(5, 700 + seed, keep=0.6)
        data = _Data(table)
        every = brute_force_networks(table)
        pairs = [(0, 1), (1, 3), (2, 4), (0, 2), (3, 4)]
        deep = [((0, 1), 1), ((1, 3), 1), ((2, 4), 1)]
        tree = [[((0, 1), 0)], [((0, 1), 1), ((1, 3), 0)], deep[:2] + [((2, 4), 0)],
                deep + [((0, 2), 0)], deep + [((0, 2), 1)]]
        for split in (cubes.uniform_cubes(pairs[:3]), tree):
            fixings = cubes.cube_fixings(data, split)
            cube_of_class: dict = {}
            for _, parents in every:
                x = np.zeros(data.K)
                x[list(_choice_of(data, parents))] = 1
                hits = [c for c, rows in enumerate(fixings) if all(x[f].sum() == value for f, value in rows)]
                assert len(hits) == 1
                assert all(value == int(_adjacent(parents, data.names[u], data.names[v]))
                           for (u, v), value in split[hits[0]])
                assert cube_of_class.setdefault(mec_key(parents), hits[0]) == hits[0]


@pytest.mark.slow       # 5–9 s: the quick suite is at its 15-minute bound
def test_split_pairs_never_drop_a_side_that_holds_a_credible_dag():
    """A pair is split on only when both its sides may hold a credible DAG, and the cost bound behind that
    never rules out a side that does (brute force: the DAGs with s ≥ OPT − ε on each side of every pair)."""
    for seed in range(8):
        table = random_table(5, 800 + seed, keep=0.5, ties=seed % 2 == 1)
        data = _Data(table)
        for eps in (0.0, math.log(3), math.log(150)):
            opt, credible = brute_force_credible(table, eps)
            budget = data.offset - opt + eps
            chosen = set(cubes.split_pairs(data, budget, 10 ** 6))
            for u, v in itertools.combinations(range(data.n), 2):
                sides = {_adjacent(p, data.names[u], data.names[v]) for _, p in credible}
                if sides == {True, False}:
                    assert (u, v) in chosen
            assert cubes.split_pairs(data, budget, 2) == cubes.split_pairs(data, budget, 10 ** 6)[:2]


@pytest.fixture
def split_at_once(monkeypatch):
    """Branch-and-cut in both phases, phase 2 split into cubes at once (no serial start)."""
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    monkeypatch.setattr(ilp.settings, "PHASE2_SERIAL_SECONDS", 0.0)


@pytest.mark.slow       # 5–9 s: the quick suite is at its 15-minute bound
def test_cubes_on_two_processes_list_exactly_the_credible_dags_and_classes(split_at_once):
    """jobs=2 lists the brute-force credible set: every DAG once (DAG mode), one DAG of every class (class
    mode); the workers run with the coordinator's settings (here: no dynamic programme)."""
    table = random_table(5, 901, keep=0.6)
    eps = math.log(150)
    opt, expected = brute_force_credible(table, eps)
    dags = solve(table, eps, jobs=2)
    assert dags.complete and dags.status == "optimal"
    assert dags.stats["phase2"]["method"] == "branch-and-cut in cubes"
    assert dags.stats["phase2"]["cubes"] >= 8
    check_result(table, dags, eps)
    assert as_set(n.parents for n in dags.networks) == as_set(p for _, p in expected)
    classes = solve(table, eps, jobs=2, enumerate_by="mecs")
    keys = [mec_key(n.parents) for n in classes.networks]
    assert classes.complete and len(keys) == len(set(keys))
    assert set(keys) == {mec_key(p) for _, p in expected}
    assert sum(c["found"] for c in classes.stats["phase2"]["per_cube"]) == len(keys)


@pytest.mark.slow       # 5–9 s: the quick suite is at its 15-minute bound
def test_cubes_stop_at_the_network_cap(split_at_once):
    table = random_table(5, 902, keep=0.7)
    res = solve(table, 1e6, jobs=2, max_networks=4)
    assert res.status == "network_limit" and not res.complete and len(res.networks) == 4
    check_result(table, res, 1e6)
    classes = solve(table, 1e6, jobs=2, max_networks=4, enumerate_by="mecs")
    assert classes.status == "network_limit" and len(classes.networks) == 4 and classes.unlisted is None
    assert "there may be more" in classes.message       # classes sent as the cap stopped the cubes count for nothing


@pytest.mark.parametrize("jobs", slow_after([1, 2], 1))
def test_a_cap_equal_to_the_credible_set_is_no_limit_and_one_below_it_is(split_at_once, jobs):
    """Branch-and-cut, serial and in cubes, stops only when it has found more than ``max_networks``: a cap equal
    to the brute-force credible count (DAGs, then classes) lists the whole set, status optimal, complete; a cap
    one below it is network_limit with that many listed, all of them credible."""
    table = random_table(5, 901, keep=0.6)
    eps = math.log(150)
    opt, expected = brute_force_credible(table, eps)
    n_dags, n_classes = len(expected), len({mec_key(p) for _, p in expected})
    assert n_dags >= n_classes > 2
    for by, total in (("dags", n_dags), ("mecs", n_classes)):
        whole = solve(table, eps, jobs=jobs, max_networks=total, enumerate_by=by)
        assert whole.status == "optimal" and whole.complete and len(whole.networks) == total, by
        capped = solve(table, eps, jobs=jobs, max_networks=total - 1, enumerate_by=by)
        assert capped.status == "network_limit" and not capped.complete and len(capped.networks) == total - 1
        assert f"more than the cap of {total - 1}" in capped.message
        assert f"of the {total - 1} found" not in capped.message
        check_result(table, capped, eps)


def test_cubes_counting_past_the_cap_keep_every_credible_class(split_at_once):
    """count_past_cap on two processes: the cubes list on past the cap of 4 classes; the best 4 are the
    networks and the rest the compact tail, together one DAG of every brute-force credible class."""
    table = random_table(5, 901, keep=0.6)
    eps = math.log(150)
    _, expected = brute_force_credible(table, eps)
    classes = {mec_key(p) for _, p in expected}
    res = solve(table, eps, jobs=2, enumerate_by="mecs", max_networks=4, count_past_cap=True)
    assert res.stats["phase2"]["method"] == "branch-and-cut in cubes" and len(classes) > 4
    assert res.status == "network_limit" and len(res.networks) == 4 and res.unlisted is not None
    assert f"the best 4 of {len(classes)} credible classes" in res.message
    found = [n.parents for n in res.networks] + [p for _, p in res.unlisted.items(0, len(res.unlisted))]
    assert len(found) == len(classes) and {mec_key(p) for p in found} == classes
    scores = [n.score for n in res.networks] + res.unlisted.scores.tolist()
    assert scores == sorted(scores, reverse=True)


def test_a_set_listed_within_the_serial_start_starts_no_worker(monkeypatch):
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    table = random_table(5, 903, keep=0.6)
    res = solve(table, math.log(20), jobs=2)
    assert res.complete and "phase2_serial" not in res.stats
    assert res.stats["phase2"].get("method") != "branch-and-cut in cubes"
    assert as_set(n.parents for n in res.networks) == as_set(n.parents for n in solve(table, math.log(20)).networks)


def test_classes_found_before_the_split_are_not_added_again():
    """A class the serial start found is not added again when a cube finds another DAG of it: the coordinator's
    compact table (words computed again from the held row) keeps one DAG per class, the better one."""
    table = random_table(3, 904, keep=1.0)
    data = _Data(table)
    a, b, c = data.names
    chain = _choice_of(data, {a: set(), b: {a}, c: {b}})
    reversed_chain = _choice_of(data, {a: {b}, b: {c}, c: set()})      # a ← b ← c: the same class
    collider = _choice_of(data, {a: set(), b: {a, c}, c: set()})
    seen = choice_table(data, True)
    assert seen.key == "class" and seen.add_rows(np.array([chain]), [0.0]).tolist() == [True]
    assert seen.add_rows(np.array([reversed_chain, collider, collider]), [1.0, 0.0, 0.0]).tolist() == [False, True,
                                                                                                     False]
    assert [tuple(r) for r in seen.ranked()[1].tolist()] == [reversed_chain, collider]     # the better DAG kept
    dags = choice_table(data, False)
    assert dags.add_rows(np.array([chain]), [0.0]).tolist() == [True]
    assert dags.add_rows(np.array([reversed_chain, chain]), [0.0, 0.0]).tolist() == [True, False]


def test_the_optimum_is_not_added_again_in_another_dag_of_its_class():
    """When the programme is stopped after the race, OPT's DAG joins what branch-and-cut listed unless a DAG
    of its class is there already (class mode: the collection's table compares class words); with DAGs, unless
    that DAG is there."""
    from bnilp.ilp import search

    table = random_table(3, 904, keep=1.0)
    data = _Data(table)
    a, b, c = data.names
    chain = _choice_of(data, {a: set(), b: {a}, c: {b}})
    reversed_chain = _choice_of(data, {a: {b}, b: {c}, c: set()})
    collider = _choice_of(data, {a: set(), b: {a, c}, c: set()})
    for classes, want in ((True, 2), (False, 3)):
        got = search._Collected.of(data, 0.0, 1.0, classes)
        assert got.threshold < -1.0
        got.credible.add_rows(np.array([collider, chain]), np.zeros(2))
        got.credible.add_rows(np.array(reversed_chain), np.zeros(1))          # as the optimum joins
        assert len(got.credible) == want


def test_a_daemon_process_keeps_phase_2_here_and_says_why(monkeypatch):
    """In a ``multiprocessing.Pool`` worker (a daemon) loky may start no worker processes ("daemonic processes are
    not allowed to have children"): phase 2 stays on this process to its end, lists the same set, and says why."""
    from bnilp.ilp import search

    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    monkeypatch.setattr(ilp.settings, "PHASE2_SERIAL_SECONDS", 0.0)
    monkeypatch.setattr(ilp.settings, "PHASE2_CUBES_MIN_SECONDS", 0.0)
    table = random_table(5, 904, keep=0.6)
    want = as_set(n.parents for n in solve(table, math.log(20)).networks)
    monkeypatch.setattr(search, "may_start_processes", lambda: False)
    here = solve(table, math.log(20), jobs=2)
    assert here.complete and as_set(n.parents for n in here.networks) == want
    assert "daemon" in here.stats["phase2"]["serial_reason"] and "phase2_serial" not in here.stats


def test_a_time_limit_too_close_for_the_workers_keeps_phase_2_on_this_process(monkeypatch):
    """``--jobs 2 --time-limit 4`` with the split 2 s in ended at 7–10 s and listed fewer DAGs than one process
    (a review): the workers took the seconds left to start, every cube was handed out past the limit, and the run
    waited for them. A limit that leaves less than PHASE2_CUBES_MIN_SECONDS after the serial start now keeps phase
    2 here to the limit, and says why; with time enough the cubes run as before."""
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    monkeypatch.setattr(ilp.settings, "PHASE2_SERIAL_SECONDS", 0.0)
    table = random_table(5, 904, keep=0.6)
    want = as_set(n.parents for n in solve(table, math.log(20)).networks)
    monkeypatch.setattr(ilp.settings, "PHASE2_CUBES_MIN_SECONDS", 10_000.0)
    close = solve(table, math.log(20), jobs=2, time_limit=600)
    assert close.complete and as_set(n.parents for n in close.networks) == want
    assert "worker processes" in close.stats["phase2"]["serial_reason"] and "phase2_serial" not in close.stats
    assert close.stats["phase2"].get("method") != "branch-and-cut in cubes"
    monkeypatch.setattr(ilp.settings, "PHASE2_CUBES_MIN_SECONDS", 0.0)
    ample = solve(table, math.log(20), jobs=2, time_limit=600)
    assert ample.complete and as_set(n.parents for n in ample.networks) == want
    assert ample.stats["phase2"]["method"] == "branch-and-cut in cubes" and "serial_reason" not in ample.stats["phase2"]


def test_no_cube_is_handed_out_past_the_time_limit():
    """The coordinator's loop past the run's deadline hands out no cube (each would only start a worker to
    return at once) and stops: the cubes left have no status, so the list is a time limit's, not complete."""
    import queue
    import threading
    import time

    from bnilp.ilp import search

    data = _Data(random_table(4, 906, keep=0.6))
    run = search._Run(0.0, "dags", None, search._Signals(), time.perf_counter() - 2, time.perf_counter() - 1)
    got = search._Collected(threshold=-math.inf, credible=choice_table(data, False))
    inbox = cubes._Inbox(queue.Queue())
    state, stop = cubes.CubeRun(rows=[[], []], todo=cubes.deque([0, 1])), threading.Event()

    def submit(i):
        raise AssertionError(f"cube {i} handed out past the time limit")

    cubes._gather(run, submit, 2, inbox, stop, state, got, 10, search._MemoryWatch.of(data, False, 10 ** 6), data, None)
    inbox.close()
    assert stop.is_set() and not state.statuses and list(state.todo) == [0, 1] and not state.lost


def test_a_cube_stops_at_its_deadline_and_when_told(monkeypatch, tmp_path):
    """A cube run in this process (the worker's own function): past its deadline it ends with SCIP's time
    limit, and it does not start once the coordinator has said stop."""
    import pickle
    import queue
    import threading

    from bnilp.ilp import search

    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    table = random_table(5, 905, keep=0.6)
    data = _Data(table)
    res = solve(table, 0.0, enumerate_ties=False)
    best = _choice_of(data, res.networks[0].parents)
    found = search._Optimum(data.exact(best), math.fsum(data.obj[k] for k in best), res.bound, best, [])
    path = tmp_path / "problem.pkl"
    path.write_bytes(pickle.dumps((data, found, math.log(20), False)))
    out: queue.Queue = queue.Queue()
    stop = threading.Event()
    monkeypatch.setattr(cubes, "_WORKER", {})
    cubes._worker_init(str(path), cubes._settings_snapshot(), out, stop)
    import signal
    signal.signal(signal.SIGINT, signal.default_int_handler)
    fixings = cubes.cube_fixings(data, cubes.uniform_cubes([(0, 1)]))
    late = cubes._run_cube(0, fixings[0], deadline=0.0)
    assert late["status"] == "timelimit" and late["sent"] == 0
    whole = [cubes._run_cube(i, f, deadline=None) for i, f in enumerate(fixings)]
    assert all(r["status"] in cubes._CUBE_DONE for r in whole)
    got = [c for _ in range(out.qsize()) for c, _ in out.get()[2]]
    assert sum(r["sent"] for r in whole) == len(got) == len(solve(table, math.log(20)).networks)
    stop.set()
    assert cubes._run_cube(1, fixings[1], deadline=None)["status"] == "skipped"


@pytest.mark.slow     # 4.5-8 s: the quick suite keeps under the README's ~15 minutes
def test_gathering_notices_a_dead_worker_and_records_that_never_arrive(monkeypatch):
    """The coordinator's loop: a cube whose worker died (BrokenProcessPool) stops the others and marks the
    run broken; a cube that reports more records than arrive marks them lost after the settling time (the
    caller then calls the list interrupted, never complete); otherwise every record arrives and counts."""
    import queue
    import threading
    import time
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    from bnilp.ilp import search

    monkeypatch.setattr(cubes, "_SETTLE_SECONDS", 3.0)    # the lost case waits it out; a loaded machine needs it
    data = _Data(random_table(4, 906, keep=0.6))
    choice = tuple(int(data.start[i]) for i in range(data.n))

    def gather(result, batches):
        run = search._Run(0.0, "dags", None, search._Signals(), time.perf_counter(), None)
        got = search._Collected(threshold=-math.inf, credible=choice_table(data, False))
        found_q: queue.Queue = queue.Queue()
        for batch in batches:
            found_q.put(("found", 0, batch))
        inbox = cubes._Inbox(found_q)
        fut: Future = Future()
        if isinstance(result, BaseException):
            fut.set_exception(result)
        else:
            fut.set_result(result)
        state, stop = cubes.CubeRun(rows=[[]], todo=cubes.deque([0])), threading.Event()
        watch = search._MemoryWatch.of(data, False, 10 ** 6)
        cubes._gather(run, lambda i: fut, 2, inbox, stop, state, got, 10, watch, data, None)
        inbox.close()
        assert not inbox.thread.is_alive()
        return state, stop, got

    state, stop, _ = gather(BrokenProcessPool("died"), [])
    assert state.broken and stop.is_set()
    state, stop, got = gather({"status": "infeasible", "stats": {}, "sent": 2}, [[(choice, -1.0)]])
    assert state.lost and not stop.is_set() and got.credible.ranked()[1].tolist() == [list(choice)]
    state, _, got = gather({"status": "infeasible", "stats": {}, "sent": 1}, [[(choice, -1.0)]])
    assert not state.lost and not state.broken
    scores, rows = got.credible.ranked()
    assert [(s, tuple(r)) for s, r in zip(scores.tolist(), rows.tolist(), strict=True)] == [(-1.0, choice)]


def test_a_worker_killed_in_the_middle_of_a_message_does_not_hold_the_coordinator():
    """The workers' queue is read by the inbox's own thread: when a worker dies between two pieces of a large
    batch that read never ends (the coordinator holds a write end, so no end of file comes). Read on the main
    loop it hung the run for ever; now the loop goes on, sees the broken pool and ends the run as broken."""
    import threading
    import time
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    from bnilp.ilp import search

    data = _Data(random_table(4, 906, keep=0.6))
    never = threading.Event()

    class HalfSent:                          # a read that waits for the rest of a message that never comes
        def get(self, timeout=None):
            never.wait()
            return ("found", 0, [])

    inbox = cubes._Inbox(HalfSent())
    fut: Future = Future()
    fut.set_exception(BrokenProcessPool("a worker died"))
    run = search._Run(0.0, "dags", None, search._Signals(), time.perf_counter(), None)
    got = search._Collected(threshold=-math.inf, credible=choice_table(data, False))
    state, stop = cubes.CubeRun(rows=[[]], todo=cubes.deque([0])), threading.Event()
    gather = threading.Thread(target=cubes._gather, daemon=True,
                              args=(run, lambda i: fut, 2, inbox, stop, state, got, 10,
                                    search._MemoryWatch.of(data, False, 10 ** 6), data, None))
    gather.start()
    gather.join(timeout=60)        # a loop that reads the pipe itself would hang here: fail, don't hang
    hung = gather.is_alive()
    never.set()
    assert not hung, "the coordinator's loop waited for the rest of a message a dead worker never sends"
    inbox.close()
    assert state.broken and stop.is_set() and inbox.thread.daemon


@pytest.mark.slow       # 5–9 s: the quick suite is at its 15-minute bound
def test_cubes_keep_background_knowledge_and_its_rows(split_at_once):
    """With knowledge that needs rows (a required adjacency, a forbidden ancestry) the cubes list the same DAGs
    and classes, with the same counts, as one process."""
    from bnilp.knowledge import Knowledge
    from bnilp.pipeline import solve_table

    table = random_table(5, 907, keep=0.7)
    table.meta["score_equivalent"] = True   # assumed: random scores, counted as classes (the equivalence check off)
    a, b, c = table.variables[:3]
    k = Knowledge(required_adjacent=[(a, b)], forbidden_ancestors=[(c, a)])
    for unit in ("dags", "mecs"):
        one = solve_table(table, epsilon=math.log(150), knowledge=k, enumerate_by=unit)
        two = solve_table(table, epsilon=math.log(150), knowledge=k, enumerate_by=unit, jobs=2)
        assert two.solution.stats["phase2"]["method"] == "branch-and-cut in cubes"
        assert two.complete and one.complete
        assert two.report["n_networks"] == one.report["n_networks"] and two.report["n_mecs"] == one.report["n_mecs"]
        nets1, nets2 = one.solution.networks, two.solution.networks
        if unit == "dags":
            assert as_set(n.parents for n in nets2) == as_set(n.parents for n in nets1)
        assert {mec_key(n.parents) for n in nets2} == {mec_key(n.parents) for n in nets1}


def test_balanced_pairs_split_the_sample_evenly_and_pass_over_pairs_that_add_nothing():
    """The first pair chosen leaves the smaller largest side of the sample than any other pair; a pair whose
    adjacency equals one chosen already (as twins' would) is never chosen while another splits further; a
    sample smaller than 2^k keeps the given order."""
    table = random_table(5, 908, keep=0.7)
    data = _Data(table)
    opt, credible = brute_force_credible(table, math.log(1e4))
    sample = [_choice_of(data, p) for _, p in credible]
    pairs = list(itertools.combinations(range(data.n), 2))
    adj = {p: [_adjacent(q, data.names[p[0]], data.names[p[1]]) for _, q in credible] for p in pairs}
    chosen = cubes.balanced_pairs(data, pairs, sample, 2)
    assert len(chosen) == 2 and set(chosen) <= set(pairs)

    def largest(ps):
        cells = [tuple(adj[p][s] for p in ps) for s in range(len(sample))]
        return max(cells.count(c) for c in set(cells))

    assert largest(chosen[:1]) == min(largest([p]) for p in pairs)
    assert adj[chosen[1]] != adj[chosen[0]] or all(adj[p] == adj[chosen[0]] for p in pairs)
    assert cubes.balanced_pairs(data, pairs, sample[:3], 2) == pairs[:2]


def test_cubes_are_handed_out_cheapest_rows_first():
    """cube_order is a permutation of the cubes along which the cost of their rows never falls — per pair, the
    least loss (best − score, summed over the pair's two variables) of its adjacency (u's family holding v, or
    v's holding u) or of keeping it apart (neither), here from the families themselves."""
    table = random_table(5, 908, keep=0.7)
    data = _Data(table)
    split = cubes.uniform_cubes(cubes.split_pairs(data, math.inf, 3))
    assert len(split) == 8

    def fams(u):
        block = range(int(data.start[u]), int(data.start[u + 1]))
        best = max(data.obj[k] for k in block)
        return [(data.sets[k], best - data.obj[k]) for k in block]

    def cost(cube):
        total = 0.0
        for (u, v), value in cube:
            nu, nv = data.names[u], data.names[v]
            if value:
                total += min([loss for ps, loss in fams(u) if nv in ps] + [loss for ps, loss in fams(v) if nu in ps])
            else:
                total += (min(loss for ps, loss in fams(u) if nv not in ps)
                          + min(loss for ps, loss in fams(v) if nu not in ps))
        return total

    order = cubes.cube_order(data, split)
    assert sorted(order) == list(range(len(split)))
    # the coordinator computes pair_costs once and hands it to both: the same pairs and order
    costs_once = cubes.pair_costs(data)
    assert cubes.cube_order(data, split, costs_once) == order
    assert cubes.split_pairs(data, math.inf, 3, costs=costs_once) == cubes.split_pairs(data, math.inf, 3)
    costs = [cost(split[i]) for i in order]
    assert len(set(np.round(costs, 9))) > 1
    assert all(costs[j] <= costs[j + 1] + 1e-9 for j in range(len(order) - 1))


def test_cubes_after_a_serial_start_add_only_what_it_did_not_find(monkeypatch):
    """The split after a serial start (here: its first classes given) lists every credible class once: the
    start's are kept, the cubes' own add the rest, none twice."""
    from bnilp.ilp import search

    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    table = random_table(5, 909, keep=0.7)
    eps = math.log(1e3)
    full = solve(table, eps, enumerate_by="mecs")
    data = _Data(table)
    choices = [_choice_of(data, n.parents) for n in full.networks]
    best = choices[0]
    found = search._Optimum(data.exact(best), math.fsum(data.obj[k] for k in best), full.bound, best, [])
    got = search._Collected.of(data, found.opt, eps, True)
    start = choices[: len(choices) // 2]
    got.credible.add_rows(np.array(start), np.array([data.exact(c) for c in start]))
    run = search._Run(eps, "mecs", None, search._Signals(), 0.0, None, jobs=2)
    stats2 = {"cuts": {}}
    watch = search._MemoryWatch.of(data, True, 10 ** 6)
    stopped = cubes.enumerate_in_cubes(run, data, found, got, True, 2, 10 ** 6, watch, stats2)
    assert stopped is None and stats2["cubes"] >= 2
    keys = [mec_key(data.parents(tuple(c))) for c in got.credible.ranked()[1].tolist()]
    assert len(keys) == len(set(keys)) == len(choices)
    assert set(keys) == {mec_key(n.parents) for n in full.networks}


def test_a_running_cube_split_keeps_to_its_side_and_the_new_cube_lists_the_other(monkeypatch, tmp_path):
    """A split request on the board, taken on by a running cube (the worker's own function, in this process):
    the cube reports the split, records nothing on the side it gave up after taking it on, and with the new
    cube (its rows plus the other side) lists exactly the brute-force credible DAGs, or classes."""
    import pickle
    import queue
    import signal
    import threading

    from bnilp.ilp import search

    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    table = random_table(5, 911, keep=0.7)
    data = _Data(table)
    eps = math.log(1e3)
    opt, credible = brute_force_credible(table, eps)
    best = _choice_of(data, credible[0][1])
    found = search._Optimum(data.exact(best), math.fsum(data.obj[k] for k in best), opt, best, [])
    pairs = cubes.split_pairs(data, data.offset - opt + eps)
    sides = {pair: {_adjacent(p, data.names[pair[0]], data.names[pair[1]]) for _, p in credible} for pair in pairs}
    pair = next(p for p in pairs if sides[p] == {True, False})
    for classes in (False, True):
        path = tmp_path / f"problem{classes}.pkl"
        path.write_bytes(pickle.dumps((data, found, eps, classes)))
        out: queue.Queue = queue.Queue()
        monkeypatch.setattr(cubes, "_WORKER", {})
        cubes._worker_init(str(path), cubes._settings_snapshot(), out, threading.Event())
        signal.signal(signal.SIGINT, signal.default_int_handler)
        board = cubes._Board(np.zeros(8, dtype=np.int64), data.n, pairs)
        cubes._WORKER["board"] = board.array
        for kept in (0, 1):
            board.array[:] = 0
            board.ask(0, pair, kept)
            first = cubes._run_cube(0, [], deadline=None)
            assert first["splits"] == [(pair, kept)] and first["status"] in cubes._CUBE_DONE
            messages = [out.get() for _ in range(out.qsize())]
            at = next(m for m, msg in enumerate(messages) if msg[0] == "split")
            assert messages[at] == ("split", 0, pair, kept)
            after = [c for msg in messages[at + 1:] for c, _ in msg[2]]
            assert all(_adjacent(data.parents(c), data.names[pair[0]], data.names[pair[1]]) == bool(kept)
                       for c in after)
            rows = cubes.cube_fixings(data, [[(pair, 1 - kept)]])[0]
            second = cubes._run_cube(1, rows, deadline=None)
            assert second["splits"] == [] and second["status"] in cubes._CUBE_DONE
            listed = [c for msg in messages + [out.get() for _ in range(out.qsize())] if msg[0] == "found"
                      for c, _ in msg[2]]
            if classes:
                assert {mec_key(data.parents(c)) for c in listed} == {mec_key(p) for _, p in credible}
            else:
                assert {_choice_of(data, data.parents(c)) for c in listed} == \
                    {_choice_of(data, p) for _, p in credible}


@pytest.mark.slow   # 23 s on this 2-core machine: keeps the README test command well under 15 minutes
def test_cubes_split_while_running_list_the_same_set(split_at_once, monkeypatch):
    """With every idle moment used to split a running cube (no wait, polling every 10 ms), two processes list
    exactly the brute-force credible DAGs and classes on five variables and what one process lists on seven,
    and some cube was split."""
    monkeypatch.setattr(ilp.settings, "PHASE2_STEAL_SECONDS", 0.0)
    monkeypatch.setattr(cubes, "_POLL_SECONDS", 0.01)
    splits = 0
    for seed in range(3):
        table = random_table(5, 920 + seed, keep=0.8)
        eps = math.log(1e4)
        _, credible = brute_force_credible(table, eps)
        for unit in ("dags", "mecs"):
            res = solve(table, eps, enumerate_by=unit, jobs=2)
            assert res.complete and res.stats["phase2"]["method"] == "branch-and-cut in cubes"
            splits += res.stats["phase2"]["splits"]
            if unit == "dags":
                assert as_set(n.parents for n in res.networks) == as_set(p for _, p in credible)
            else:
                assert {mec_key(n.parents) for n in res.networks} == {mec_key(p) for _, p in credible}
    table = random_table(7, 930, keep=0.5)
    for unit in ("dags", "mecs"):
        one = solve(table, math.log(20), enumerate_by=unit)
        two = solve(table, math.log(20), enumerate_by=unit, jobs=2)
        assert two.complete and one.complete
        splits += two.stats["phase2"]["splits"]
        assert {mec_key(n.parents) for n in two.networks} == {mec_key(n.parents) for n in one.networks}
        assert len(two.networks) == len(one.networks)
    assert splits > 0

def test_the_cubes_never_take_over_a_race_s_collection_indexed_before_the_filter(monkeypatch):
    """A race whose budget ran out in phase 2 leaves what its branch-and-cut had collected, indexed by the
    families of the table before the programme's filter renumbers them; when peeling does not list the set
    and phase 2 goes to the cubes, their serial start collects afresh — the result is the brute-force credible
    set, not the race's rows read in the new numbering."""
    from bnilp.ilp import search

    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 4)
    monkeypatch.setattr(ilp.settings, "DP_RACE_MAX_VARIABLES", 7)
    monkeypatch.setattr(search, "_dp_estimate", lambda data: 600.0)
    monkeypatch.setattr(ilp.settings, "DP_ENUMERATION", False)
    monkeypatch.setattr(ilp.settings, "PHASE2_SERIAL_SECONDS", 0.0)
    enumerate_ = search._enumerate
    raced = []

    def budget_out_in_the_race(run, data, found, max_networks, classes, verbose, stats):
        if run.budget is None or raced:
            return enumerate_(run, data, found, max_networks, classes, verbose, stats)
        raced.append(data)                  # the race's phase 2: OPT's DAG collected, then the budget ends
        stats["phase2"] = search._new_stats()
        got = search._Collected.of(data, found.opt, run.epsilon, classes)
        got.credible.add_rows(np.array(found.choice), np.array([data.exact(found.choice)]))
        run.collected = got
        return None

    monkeypatch.setattr(search, "_enumerate", budget_out_in_the_race)
    table = random_table(7, 908, keep=0.3, max_size=3, pruned=True)
    eps = math.log(3)
    _, expected = brute_force_credible(table, eps)
    res = solve(table, eps, jobs=2, enumerate_by="mecs")
    assert raced and "phase2_branch_and_cut" in res.stats and res.stats["phase1"]["method"] == "branch-and-cut"
    assert res.stats["phase2"]["method"] == "branch-and-cut in cubes"
    assert res.stats["dp"]["families_kept"] < raced[0].K         # the filter renumbered the families
    assert res.complete and res.status == "optimal"
    check_result(table, res, eps)
    keys = [mec_key(n.parents) for n in res.networks]
    assert len(keys) == len(set(keys)) and set(keys) == {mec_key(p) for _, p in expected}


@pytest.mark.slow     # 30 s for the three
@pytest.mark.parametrize(("seed", "bf"), [(3, 20), (7, 150), (11, 1e3)])
def test_a_class_is_represented_by_the_same_dag_on_every_route(monkeypatch, seed, bf):
    """Class enumeration lists, for each class, a DAG fixed by the class (its CPDAG oriented along a maximum
    cardinality search) — not the one the search happened to meet — so peeling, serial branch-and-cut and
    cubes on two processes give the same networks, scores and order (BIC: score-equivalent; classes that tie
    are ordered by that DAG)."""
    from bnilp.data import from_dataframe
    from bnilp.parentsets import score_parent_sets
    from bnilp.scores import make_score
    from tests.conftest import random_discrete_frame

    frame = random_discrete_frame(seed, n=6, N=60)
    eps = math.log(bf)
    table = score_parent_sets(make_score("bic", from_dataframe(frame, discrete=list(frame.columns))), epsilon=eps)
    listings = {}
    peeled = solve(table, eps, enumerate_by="mecs")
    listings["peeling"] = peeled
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    listings["branch-and-cut"] = solve(table, eps, enumerate_by="mecs")
    monkeypatch.setattr(ilp.settings, "PHASE2_SERIAL_SECONDS", 0.0)
    listings["cubes"] = solve(table, eps, enumerate_by="mecs", jobs=2)
    assert listings["cubes"].stats["phase2"]["method"] == "branch-and-cut in cubes"
    assert peeled.stats["phase2"]["method"] == "peeling" and len(peeled.networks) > 3
    want = [(n.score, n.parents) for n in peeled.networks]
    for route, res in listings.items():
        assert res.complete and [(n.score, n.parents) for n in res.networks] == want, route
    capped = [solve(table, eps, enumerate_by="mecs", jobs=jobs, max_networks=3, count_past_cap=True)
              for jobs in (1, 2)]     # the best 3 listed, the rest counted: the same 3 DAGs, whatever the route
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 30)
    capped.append(solve(table, eps, enumerate_by="mecs", max_networks=3, count_past_cap=True))
    for res in capped:
        assert res.status == "network_limit" and [(n.score, n.parents) for n in res.networks] == want[:3]


def _frame_with_twins(seed: int, n: int, twins: list[tuple[int, int]], N: int):
    """Random discrete columns V0..V{n−1}, each a noisy copy of an earlier one, then column b := column a for
    each (a, b) in ``twins``: identical columns, whose exchange gives tied classes."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    cols: dict[str, np.ndarray] = {}
    for j in range(n):
        r = int(rng.integers(2, 4))
        x = rng.integers(0, r, size=N)
        if j and rng.random() < 0.8:
            src = cols[f"V{int(rng.integers(0, j))}"]
            x = np.where(rng.random(N) < rng.uniform(0.3, 0.9), src % r, x)
        x[:r] = np.arange(r)
        cols[f"V{j}"] = x
    frame = pd.DataFrame(cols)
    for a, b in twins:
        frame[f"V{b}"] = frame[f"V{a}"].to_numpy()
    return frame


def _routes(monkeypatch, table, eps, **kw):
    """The pipeline's report with the programme (peeling in phase 2, or with knowledge rows its OPT) and by
    branch-and-cut alone (the programme off)."""
    from bnilp.pipeline import solve_table

    monkeypatch.setattr(ilp.settings, "FOREST_ENUMERATION", False)     # (a palim-1 table would take the forests)
    monkeypatch.setattr(ilp.settings, "BRANCHING_ENUMERATION", False)
    first = solve_table(table, epsilon=eps, **kw)
    with monkeypatch.context() as m:
        m.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
        cut = solve_table(table, epsilon=eps, **kw)
    assert "dp" in first.solution.stats and "dp" not in cut.solution.stats
    assert (first.solution.stats["phase2"]["method"] == "peeling") is (kw.get("knowledge") is None)
    return first, cut


def test_a_cap_inside_tied_classes_lists_the_same_class_on_every_route(monkeypatch):
    """Twin columns make tied classes; a cap falling inside the tie listed another class by peeling (which split
    its classes at the cap before fixing their representatives) than by branch-and-cut — and than peeling's own
    uncapped list. Now both list the first classes of the uncapped list."""
    from bnilp.data import from_dataframe
    from bnilp.parentsets import score_parent_sets
    from bnilp.scores import make_score

    frame = _frame_with_twins(0, 5, [(3, 0), (1, 2)], N=30)
    eps = math.log(20)
    table = score_parent_sets(make_score("bdeu", from_dataframe(frame, discrete=list(frame.columns))), epsilon=eps)
    whole, _ = _routes(monkeypatch, table, eps, enumerate_by="mecs")
    first = [(n["score"], n["parents"]) for n in whole.report["networks"]]
    assert first[0][0] == first[1][0]                  # the cap of 1 falls inside a tie
    for res in _routes(monkeypatch, table, eps, enumerate_by="mecs", max_networks=1, count_past_cap=True):
        assert res.solution.status == "network_limit"
        assert [(n["score"], n["parents"]) for n in res.report["networks"]] == first[:1]


def test_under_a_required_adjacency_a_class_is_listed_by_the_dag_it_fixes(monkeypatch):
    """A required adjacency holds in every member of a class (one skeleton), so it no longer keeps the DAG the
    route met: peeling and branch-and-cut list the same, fixed DAGs — those listed without the statement where
    the classes are the same. (Under ancestor knowledge a fixed DAG that breaks it is not used.)"""
    from bnilp.data import from_dataframe
    from bnilp.knowledge import Knowledge
    from bnilp.parentsets import score_parent_sets
    from bnilp.scores import make_score

    frame = _frame_with_twins(0, 4, [], N=30)
    eps = math.log(3)
    score = make_score("bic", from_dataframe(frame, discrete=list(frame.columns)))
    known = Knowledge(required_adjacent=[("V1", "V0")])
    listings = []
    for k in (known, None):
        table = score_parent_sets(score, epsilon=eps, knowledge=k)
        listings += [[(n["score"], n["parents"]) for n in res.report["networks"]]
                     for res in _routes(monkeypatch, table, eps, enumerate_by="mecs", knowledge=k)]
    assert len(listings[0]) == 2 and all(one == listings[0] for one in listings)


def test_dags_counted_past_a_listing_cap_count_every_class_found_and_say_when_a_bound(monkeypatch):
    """``list_dags`` with a cap: ``n_dags_counted`` counted the listed classes only (17 of 18). Peeling finds
    every class, so the count is brute force's; branch-and-cut stops past the cap, so its count is marked a
    lower bound (``n_dags_counted_exact`` false, "at least" in ``listed``)."""
    from bnilp.data import from_dataframe
    from bnilp.parentsets import score_parent_sets
    from bnilp.scores import make_score

    frame = _frame_with_twins(3, 4, [(1, 3)], N=30)
    eps = math.log(20)
    table = score_parent_sets(make_score("bdeu", from_dataframe(frame, discrete=list(frame.columns))), epsilon=eps)
    _, credible = brute_force_credible(table, eps)
    peeled, cut = _routes(monkeypatch, table, eps, enumerate_by="mecs", list_dags=True, max_networks=9)
    assert len(credible) > 9
    assert peeled.report["n_dags_counted"] == len(credible) and peeled.report["n_dags_counted_exact"] is True
    assert f"of the {len(credible)} DAGs counted" in peeled.report["listed"]
    assert cut.report["n_dags_counted_exact"] is False and cut.report["n_dags_counted"] <= len(credible)
    assert "of at least" in cut.report["listed"]


@pytest.mark.parametrize("statement", ["required", "tiers"])
def test_under_background_knowledge_the_classes_listed_are_the_same_dags_for_any_jobs(split_at_once, statement):
    """Where a class's fixed DAG points an arrow against the knowledge, the class stands for its least member
    the table and the knowledge admit — not for whichever one the serial search or a cube met first (tiers
    here: 4 of 52 classes were listed as different DAGs on one process and on two)."""
    from bnilp.data import from_dataframe
    from bnilp.knowledge import Knowledge
    from bnilp.parentsets import score_parent_sets
    from bnilp.pipeline import solve_table
    from bnilp.scores import make_score
    from tests.conftest import random_discrete_frame

    eps = math.log(150)
    frame = random_discrete_frame(3, n=6, N=60)
    score = make_score("bic", from_dataframe(frame, discrete=list(frame.columns)))
    known = (Knowledge(required=[("V2", "V1")]) if statement == "required" else
             Knowledge(tiers=[["V5", "V4"], ["V0", "V1", "V2", "V3"]]))
    table = score_parent_sets(score, epsilon=eps, knowledge=known)
    listed = [[(round(n["score"], 9), n["parents"]) for n in
               solve_table(table, epsilon=eps, knowledge=known, enumerate_by="mecs", jobs=jobs).report["networks"]]
              for jobs in (1, 2)]
    assert len(listed[0]) > 20 and listed[0] == listed[1]


@pytest.mark.slow       # 5–9 s, as the other runs of cubes
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="finds the workers in /proc")
def test_a_ctrl_c_as_the_cube_workers_start_neither_kills_one_nor_prints_its_traceback(split_at_once, capfd):
    """The workers ignore Ctrl-C once their initializer runs, after their imports (SCIP's among them, about a
    second): a terminal's Ctrl-C before then (it reaches the whole process group) killed a worker — the run
    "interrupted (a worker process of phase 2 died)" — or printed its ``KeyboardInterrupt`` traceback (a
    review: 2 of 7 runs interrupted at the start of the cubes). They now start with SIGINT ignored. Here only
    the workers get it, so the run goes on and lists the whole set."""
    from tests.trace_helpers import ctrl_c_to_each_new_child

    table = random_table(5, 901, keep=0.6)
    eps = math.log(150)
    with ctrl_c_to_each_new_child() as hit:
        res = solve(table, eps, jobs=2, enumerate_by="mecs")
    assert hit and res.status == "optimal" and res.complete, res.message
    assert res.stats["phase2"]["method"] == "branch-and-cut in cubes"
    check_result(table, res, eps)
    assert "KeyboardInterrupt" not in capfd.readouterr().err


@pytest.mark.parametrize("where", ["balanced_pairs", "_Inbox"])
def test_a_ctrl_c_while_the_cubes_are_prepared_stops_the_run_with_what_it_found(split_at_once, monkeypatch, where):
    """The first Ctrl-C reaches Python code as KeyboardInterrupt (the search's handler passes it on where no SCIP
    model is solving). While the split was computed (``balanced_pairs``) or the problem written and the pool
    started (here: the inbox), nothing caught it: the run ended with exit 130 and nothing written, OPT proven and
    thousands of classes found (a review, hailfinder500 BF 3 at 11.4 s). Now it stops like an interrupt anywhere
    else in the search: status ``interrupted``, what was found kept."""
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cubes, where, interrupted)
    table = random_table(5, 901, keep=0.6)
    res = solve(table, math.log(150), jobs=2, enumerate_by="mecs")
    assert res.status == "interrupted" and not res.complete and res.optimum_proven
    assert res.stats["phase2"]["method"] == "branch-and-cut in cubes"
    opt, _ = brute_force_credible(table, math.log(150))
    assert res.networks and res.networks[0].score == pytest.approx(opt)
    check_result(table, res, math.log(150))
