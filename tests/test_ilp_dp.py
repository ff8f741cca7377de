"""Dynamic programming in the search (bnilp.ilp.dp): OPT, the best DAG through each family, and the
exact family filter of phase 2 — against brute force (n ≤ 5), the oracle DP (n ≤ 14) and the search
without it."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest

from bnilp import ilp
from bnilp.ilp import solve
from bnilp.ilp.dp import DPStopped, Peeler, solve_dp
from bnilp.ilp.families import _Data, _fsum_rows
from bnilp.knowledge import Knowledge, restrict_table
from bnilp.mec import mec_key
from tests.conftest import slow_after
from tests.oracles import brute_force_credible, brute_force_networks, dp_optimum, satisfies_knowledge
from tests.test_ilp import EPSILONS, as_set, check_result, random_table


def _choice_rows(data: _Data, networks) -> np.ndarray:
    """Each network (a parent map) as its row of family indices of ``data``, one column per variable."""
    index = {(data.names[data.child[k]], data.sets[k]): k for k in range(data.K)}
    return np.array([[index[v, p[v]] for v in data.names] for p in networks])


def _brute_best_through(table, data: _Data) -> np.ndarray:
    """For each family of ``data``: the best score of a DAG of the table that uses it (−inf if none)."""
    best = np.full(data.K, -math.inf)
    index = {(data.names[data.child[k]], data.sets[k]): k for k in range(data.K)}
    for s, parents in brute_force_networks(table):
        for v, ps in parents.items():
            k = index[v, ps]
            best[k] = max(best[k], s)
    return best


@pytest.mark.parametrize("n,seed", [(n, s) for n in (1, 2, 3, 4, 5) for s in range(4)])
def test_best_dag_through_each_family_equals_brute_force(n, seed):
    """best(v, W) = s(v, W) + max_{W ⊆ S ⊆ V∖{v}} F(S) + R(S ∪ {v}) is the score of the best DAG with
    that family — every family, including those in no DAG at all (−inf)."""
    table = random_table(n, 500 * n + seed, keep=0.5, ties=seed == 3, pruned=seed == 2)
    data = _Data(table)
    dp = solve_dp(data, containing=True)
    expected = _brute_best_through(table, data)
    assert np.all(np.isneginf(dp.best_containing) == np.isneginf(expected))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(dp.best_containing[finite], expected[finite], rtol=0, atol=1e-9)
    assert dp.opt == pytest.approx(brute_force_networks(table)[0][0], abs=1e-9)


@pytest.mark.parametrize("n,seed", [(n, s) for n in (8, 11, 14) for s in range(2)])
def test_dp_optimum_and_its_dag_match_the_oracle(n, seed):
    table = random_table(n, 31 * n + seed, keep=0.05, max_size=3, pruned=seed == 1)
    dp = solve_dp(_Data(table))
    data = _Data(table)
    parents = data.parents(dp.choice)
    assert set(parents) == set(table.variables)
    assert table.network_score(parents) == pytest.approx(dp_optimum(table), abs=1e-9)
    assert dp.opt == pytest.approx(dp_optimum(table), abs=1e-9)


@pytest.mark.parametrize("n,seed", [(n, s) for n in (4, 5) for s in range(5)])
def test_the_filter_keeps_exactly_the_families_of_credible_dags(monkeypatch, n, seed):
    """Phase 2 sees a family iff some DAG with s ≥ OPT − ε uses it: it never removes one that a credible
    DAG needs, and keeps nothing else (random scores leave no family within the float margin) — the families
    phase 2 receives are compared as sets, not only counted."""
    from bnilp.ilp import search

    filtered = search._credible_families
    seen: list[set] = []

    def recorded(*args, **kwargs):
        sub, found = filtered(*args, **kwargs)
        seen.append({(sub.names[int(sub.child[k])], sub.sets[k]) for k in range(sub.K)})
        return sub, found

    monkeypatch.setattr(search, "_credible_families", recorded)
    table = random_table(n, 900 * n + seed, keep=0.6)
    for eps in EPSILONS:
        _, credible = brute_force_credible(table, eps)
        used = {(v, ps) for _, parents in credible for v, ps in parents.items()}
        seen.clear()
        res = solve(table, eps)
        assert res.complete and len(seen) == 1 and seen[0] == used
        assert res.stats["dp"]["families_kept"] == len(used)
        assert res.stats["dp"]["families"] == table.n_parent_sets()


def test_the_programme_reports_its_plan_in_the_stats(monkeypatch):
    """stats.dp names the planned tables: their entries, the scans expected per pass, the estimated seconds
    (what the race and the time-limit checks assumed) and the bytes — the plan's own figures."""
    from bnilp.ilp.dp import plan_tables

    monkeypatch.setattr(ilp.settings, "DP_TABLE_MAX_ENTRIES", 24)
    monkeypatch.setattr(ilp.settings, "DP_TABLE_GROWN_MAX_ENTRIES", 24)
    table = random_table(6, 4711, keep=0.6, max_size=3)
    res = solve(table, 1.0)
    plan = plan_tables(_Data(table))
    dp = res.stats["dp"]
    assert dp["table_entries"] == plan.entries <= 24
    assert dp["scan_steps_estimate"] == plan.scan_steps > 0
    assert dp["seconds_estimate"] == pytest.approx(plan.seconds(6)) and dp["bytes"] == plan.bytes(6)


@pytest.mark.parametrize("n,seed", [(7, 1), (8, 2), (9, 3)])
@pytest.mark.parametrize("unit", ["dags", "mecs"])
def test_search_with_and_without_dp_lists_the_same_credible_set(monkeypatch, n, seed, unit):
    """Beyond brute force: the DP route (OPT by DP, phase 2 on the kept families) and branch-and-cut
    alone agree on OPT and on every credible DAG (or class)."""
    table = random_table(n, seed, keep=0.12, max_size=3, pruned=True)
    for eps in (0.0, math.log(20), math.log(150)):
        with_dp = solve(table, eps, enumerate_by=unit)
        monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
        without = solve(table, eps, enumerate_by=unit)
        monkeypatch.undo()
        assert "dp" in with_dp.stats and "dp" not in without.stats
        assert with_dp.stats["phase1"]["method"] == "dynamic programming"
        assert with_dp.complete and without.complete
        assert with_dp.optimum == pytest.approx(without.optimum, abs=1e-9)
        check_result(table, with_dp, eps)
        if unit == "dags":
            assert as_set(x.parents for x in with_dp.networks) == as_set(x.parents for x in without.networks)
        else:
            assert {mec_key(x.parents) for x in with_dp.networks} == {mec_key(x.parents) for x in without.networks}


def test_knowledge_the_table_cannot_say_keeps_branch_and_cut_for_the_optimum():
    """A required adjacency is a row, not a family filter: the DP over the table is then only an upper
    bound, so OPT comes from branch-and-cut; the filter (valid for any lower OPT) still runs."""
    table = random_table(5, 4242, keep=0.7)
    k = Knowledge(required_adjacent=(("V0", "V4"),), required_ancestors=(("V3", "V1"),))
    restricted = restrict_table(table, k)
    for eps in EPSILONS:
        res = solve(restricted, eps)
        nets = [(s, p) for s, p in brute_force_networks(table) if satisfies_knowledge(p, k)]
        opt = nets[0][0]
        expected = [p for s, p in nets if s >= opt - eps - 1e-9 * max(1.0, abs(opt))]
        assert res.stats["phase1"]["method"] == "branch-and-cut"
        assert "families_kept" in res.stats["dp"]
        assert res.optimum == pytest.approx(opt, abs=1e-9)
        assert as_set(x.parents for x in res.networks) == as_set(expected)


def test_optimum_only_needs_no_branch_and_cut():
    table = random_table(12, 5, keep=0.06, max_size=3)
    res = solve(table, 0.0, enumerate_ties=False)
    assert res.status == "optimal" and len(res.networks) == 1
    assert res.optimum == pytest.approx(dp_optimum(table), abs=1e-9)
    assert res.stats["phase1"]["method"] == "dynamic programming" and "phase2" not in res.stats
    assert "families_kept" not in res.stats["dp"]


def test_more_variables_than_every_dp_limit_use_branch_and_cut(monkeypatch):
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 4)
    monkeypatch.setattr(ilp.settings, "DP_RACE_MAX_VARIABLES", 4)
    table = random_table(5, 77, keep=0.5)
    res = solve(table, math.log(3))
    assert "dp" not in res.stats and res.stats["phase1"]["method"] == "branch-and-cut"
    assert res.stats["phase2"]["method"] == "branch-and-cut"
    opt, expected = brute_force_credible(table, math.log(3))
    assert as_set(x.parents for x in res.networks) == as_set(p for _, p in expected)


@pytest.mark.parametrize("n,seed", slow_after([(n, s) for n in (1, 2, 3, 4, 5) for s in range(6)], 26))
def test_peeling_lists_every_credible_dag_once_even_when_resumed_at_every_step(n, seed):
    """Canonical sink peeling under the DP bound meets each DAG with s ≥ T exactly once; stopping and
    resuming after every few family trials and every 3 DAGs changes nothing."""
    table = random_table(n, 70 * n + seed, keep=0.6, ties=seed % 3 == 0)
    data = _Data(table)
    dp = solve_dp(data, containing=True)
    for eps in (*EPSILONS, 1e6):
        opt, expected = brute_force_credible(table, eps)
        threshold = opt - eps - 1e-9 * max(1.0, abs(opt))
        peeler = Peeler(data, dp.forward, threshold - 1e-7 * max(1.0, abs(opt)), chunk=3)
        listed = []
        while not peeler.done:
            for row in peeler.next_chunk(max_steps=5):
                choice = tuple(sorted(int(k) for k in row))
                if data.exact(choice) >= threshold:
                    listed.append(tuple(sorted(data.parents(choice).items())))
        assert len(listed) == len(set(listed))
        assert set(listed) == as_set(p for _, p in expected)


def _peel_everything(data: _Data, forward: np.ndarray, threshold: float, orphans: bool) -> tuple[set, int]:
    peeler = Peeler(data, forward, threshold)
    if not orphans:                                   # every vertex may have every child: the rule never fires
        peeler.child_of[:] = (1 << data.n) - 1
    rows = set()
    while not peeler.done:
        rows.update(tuple(int(k) for k in row) for row in peeler.next_chunk())
    return rows, peeler.steps


@pytest.mark.parametrize("n,seed", [(3, 0), (3, 1), (3, 2), (3, 3), (3, 4), (4, 0), (4, 1), (4, 2), (4, 4), (4, 5),
                                    (5, 0), (5, 1), (5, 2), (5, 3), (5, 4), (6, 1), (6, 2), (6, 4), (6, 8), (6, 9)])
def test_a_branch_with_a_vertex_no_family_can_give_a_child_is_dropped_and_no_dag_with_it(n, seed):
    """Peeling marks the vertices above a peeled sink, not its parents, as non-sinks of what is left: each
    must keep a child among the vertices still to peel. Where no family of those vertices contains it the
    branch is dead and is dropped; on random tables with few families the DAGs listed are the same with and
    without the rule, the rule never costs steps, and it saves some at one ε at least (the cases: the first
    five seeds of 0–9 per n on which it fires; with keep 0.3 it fired on 7 of 20 and the rest proved nothing)."""
    table = random_table(n, 90 * n + seed, keep=0.15)
    data = _Data(table)
    dp = solve_dp(data, containing=True)
    saved = False
    for eps in (0.0, 3.0, 1e6):
        threshold = dp.opt - eps - 1e-6
        with_rule, steps = _peel_everything(data, dp.forward, threshold, True)
        without, steps_without = _peel_everything(data, dp.forward, threshold, False)
        assert with_rule == without and steps <= steps_without
        saved = saved or steps < steps_without
    assert saved, "the rule never fired"


def test_peeling_a_star_no_longer_walks_the_dead_branches_of_its_leaves():
    """A star (leaves whose only parent may be the centre, which no family gives a parent) at its widest
    threshold: 2^L DAGs, which peeling reached through about 2·3^L family trials, most of them in branches
    where a leaf had to keep a child no family gives it; now about 9·2^L."""
    from bnilp.scorefile import ScoreTable

    L = 12
    leaves = [f"l{i}" for i in range(L)]
    families = {"c": {frozenset(): 0.0}, **{v: {frozenset(): 0.0, frozenset({"c"}): 1.0} for v in leaves}}
    data = _Data(ScoreTable([*leaves, "c"], families))
    dp = solve_dp(data, containing=True)
    with_rule, steps = _peel_everything(data, dp.forward, dp.opt - L - 0.5, True)
    without, steps_without = _peel_everything(data, dp.forward, dp.opt - L - 0.5, False)
    assert len(with_rule) == 2 ** L and with_rule == without
    assert steps_without > 2 * 3 ** L > 20 * steps


def test_classes_by_peeling_hand_over_to_branch_and_cut_beyond_the_dag_budget(monkeypatch):
    table = random_table(6, 11, keep=0.5, max_size=3)
    eps = math.log(150)
    peeled = solve(table, eps, enumerate_by="mecs")
    _one_dag_chunks(monkeypatch)        # the budget is looked at between chunks: a finished peeling is kept
    monkeypatch.setattr(ilp.settings, "DP_ENUMERATION_MAX_DAGS", 2)
    monkeypatch.setattr(ilp.settings, "DP_ENUMERATION_DAGS_PER_CLASS", 0)
    handed = solve(table, eps, enumerate_by="mecs")
    assert peeled.stats["phase2"]["method"] == "peeling" and peeled.stats["phase2"]["dags_listed"] > 2
    assert handed.stats["phase2_peeling"]["gave_up"] and handed.stats["phase2"]["method"] == "branch-and-cut"
    assert peeled.complete and handed.complete
    assert {mec_key(x.parents) for x in peeled.networks} == {mec_key(x.parents) for x in handed.networks}
    assert len(peeled.networks) > 2


def test_peeling_reports_the_network_cap_and_the_time_limit():
    table = random_table(5, 13, keep=1.0)          # 29,281 DAGs at ε = 10⁶
    capped = solve(table, 1e6, max_networks=100)
    assert capped.status == "network_limit" and not capped.complete and len(capped.networks) == 100
    assert "not the top" in capped.message
    opt, _ = brute_force_credible(table, 0.0)
    timed = solve(table, 1e6, time_limit=0.0)
    assert timed.status == "time_limit" and not timed.complete and "by peeling" in timed.message
    assert timed.optimum == pytest.approx(opt, abs=1e-9) and 0 < len(timed.networks) < 29281
    check_result(table, timed, 1e6)
    whole = solve(table, 1e6)
    assert whole.complete and len(whole.networks) == 29281


@pytest.mark.parametrize("seed", range(4))
def test_class_keys_are_equal_exactly_for_markov_equivalent_dags(seed):
    """The keys of class enumeration by peeling (adjacency and co-parent masks, compiled; the packed
    matrices used past 62 variables) against bnilp.mec.mec_key (skeleton and v-structures as sets), on
    every DAG of a random 5-variable table."""
    table = random_table(5, 60 + seed, keep=0.7)
    data = _Data(table)
    nets = [p for _, p in brute_force_networks(table)][:3000]
    rows = _choice_rows(data, nets)
    reference = [mec_key(p) for p in nets]
    group_of_ref: dict = {}
    want = [group_of_ref.setdefault(r, len(group_of_ref)) for r in reference]
    for words in (data.class_words(rows), data._class_words_packed(rows)):      # n > 62: packed
        keys = [r.tobytes() for r in words]
        group_of_key: dict = {}
        assert [group_of_key.setdefault(k, len(group_of_key)) for k in keys] == want


def _a_machine_short_of_memory(monkeypatch, unit: str, per_network: tuple) -> tuple:
    """A 5-variable table of 29,281 DAGs at ε = 10⁶ on a stand-in machine: 64 GiB free, no floor, the guard
    looking at every chance and reserving ``per_network`` (base, per variable, per edge, at most) for the report
    of each network (class) recorded. Returns (table, ε, OPT, the credible DAGs or class keys)."""
    from bnilp.ilp import search, settings
    table = random_table(5, 13, keep=1.0)
    eps = 1e6
    opt, expected = brute_force_credible(table, eps)
    want = {mec_key(p) for _, p in expected} if unit == "mecs" else as_set(p for _, p in expected)
    monkeypatch.setattr(settings, "ENUMERATION_MEMORY_CHECK_SECONDS", 0.0)
    monkeypatch.setattr(settings, "ENUMERATION_MEMORY_FLOOR_SHARE", 0.0)
    monkeypatch.setattr(settings, "ENUMERATION_MEMORY_FLOOR_BYTES", 0)
    monkeypatch.setattr(settings, "ENUMERATION_REPORT_BYTES", {"dags": per_network, "mecs": per_network})
    monkeypatch.setattr(search, "free_memory", lambda: 64 * (1 << 30))
    return table, eps, opt, want


@pytest.mark.parametrize("path", ["peeling", "branch-and-cut"])
@pytest.mark.parametrize("unit", ["dags", "mecs"])
def test_the_memory_guard_reserves_for_the_edges_of_what_was_recorded(monkeypatch, unit, path):
    """The report's memory grows with each network's (class's) variables and edges: the guard reserves
    base + per variable·n + per edge·(their mean edges) for each recorded, the edges tallied from the rows
    recorded (a flat 30 KB a class stopped 6-variable sets about five times early; 20 KB a DAG was short of the
    28 KB a 56-variable DAG takes). Stand-in: 64 GiB free, no floor, 1 GiB an edge and nothing else, so the
    guard stops once the networks recorded hold more than 64 edges in all — by peeling after its first chunk
    (every network it kept was tallied: exactly their edges), by branch-and-cut at the network that crossed 64."""
    from bnilp.ilp import settings
    gib = 1 << 30
    table, eps, _, want = _a_machine_short_of_memory(monkeypatch, unit, (0, 0, gib, None))
    if path == "branch-and-cut":
        monkeypatch.setattr(settings, "DP_MAX_VARIABLES", 0)
    res = solve(table, eps, enumerate_by=unit)
    assert res.stats["phase2"]["method"] == path
    assert res.status == "memory_limit" and not res.complete and res.optimum_proven
    got = [mec_key(x.parents) for x in res.networks] if unit == "mecs" else as_set(x.parents for x in res.networks)
    assert set(got) <= want and len(set(got)) == len(got) < len(want)
    edges = [sum(map(len, x.parents.values())) for x in res.networks]
    needed = res.stats["phase2"]["memory_stop"]["needed_bytes"]
    assert needed % gib == 0 and needed > 64 * gib
    if path == "peeling":
        assert needed == gib * sum(edges)
    else:
        assert needed <= gib * min(sum(edges), 64 + max(edges))


def test_the_memory_guard_caps_a_class_only_where_its_report_is_compiled(monkeypatch):
    """A class's report was taken to need at most 30 KB up to 62 variables, measured where it is counted on
    compiled masks; under background knowledge each class is counted in Python and keeps its admitted DAGs'
    count, shares and PDAG as well (hailfinder500 at palim 1 in five tiers: 50 KB a class, so the guard would
    have let the report outgrow the memory it watched). Stand-in: 1 GiB an edge, at most 1 GiB a class — the
    cap holds without knowledge (each class reserves at most 1 GiB) and not with it (each reserves its edges)."""
    gib = 1 << 30
    table, eps, _, want = _a_machine_short_of_memory(monkeypatch, "mecs", (0, 0, gib, gib))
    known = Knowledge(forbidden=(("V0", "V1"),))
    for k, capped in ((None, True), (known, False)):
        res = solve(table if k is None else restrict_table(table, k), eps, enumerate_by="mecs")
        assert res.stats["phase2"]["method"] == "peeling"
        assert res.status == "memory_limit" and not res.complete and res.optimum_proven
        got = [mec_key(x.parents) for x in res.networks]
        assert len(set(got)) == len(got) and (k is not None or set(got) <= want)
        edges = [sum(map(len, x.parents.values())) for x in res.networks]
        needed = res.stats["phase2"]["memory_stop"]["needed_bytes"]
        assert needed == (gib * sum(min(e, 1) for e in edges) if capped else gib * sum(edges))
        assert needed > 64 * gib


@pytest.mark.parametrize("unit", ["dags", "mecs"])
def test_peeling_stops_when_the_free_memory_would_not_hold_the_report(monkeypatch, unit):
    """Phase 2 by peeling is watched like branch-and-cut's: once the free memory falls below the floor plus
    what the report of the networks (classes) found so far will need, it stops between two chunks with status
    ``memory_limit`` — incomplete, OPT proven, every network kept credible and unique. Stand-in for a machine
    running short: 64 GiB free, 10 GiB needed per network and no floor, so the seventh is one too many; the
    first chunk (4,096 DAGs of 29,281) already holds more than seven."""
    gib = 1 << 30
    table, eps, opt, want = _a_machine_short_of_memory(monkeypatch, unit, (10 * gib, 0, 0, None))
    res = solve(table, eps, enumerate_by=unit)
    assert res.stats["phase2"]["method"] == "peeling"
    assert res.status == "memory_limit" and not res.complete and res.optimum_proven
    assert res.optimum == pytest.approx(opt, abs=1e-9)
    got = [mec_key(x.parents) for x in res.networks] if unit == "mecs" else as_set(x.parents for x in res.networks)
    assert 7 <= len(got) < len(want) and set(got) <= want and len(set(got)) == len(got)
    stop = res.stats["phase2"]["memory_stop"]
    assert stop["free_bytes"] == 64 * gib < stop["needed_bytes"]
    assert "free memory low" in res.message and "by peeling" in res.message and "incomplete" in res.message


def test_an_early_stop_of_peeling_past_the_class_cap_names_its_cause_and_what_was_kept():
    """Peeling finds classes in no order of score, so a stop (here the clock) with more classes found than the
    cap keeps the best of those found: the status is the stop's, not the cap's, and the message says both."""
    table = random_table(5, 13, keep=1.0)
    res = solve(table, 1e6, enumerate_by="mecs", max_networks=5, time_limit=0.0)
    found = res.stats["phase2"]["classes_found"]
    assert res.status == "time_limit" and not res.complete and len(res.networks) == 5 < found
    assert f"only {found} classes within epsilon were found, the best 5 of them kept" in res.message


def test_a_class_cap_after_complete_peeling_keeps_the_best_classes_and_says_how_many():
    table = random_table(5, 8, keep=0.9)
    eps = 1e6
    whole = solve(table, eps, enumerate_by="mecs")
    capped = solve(table, eps, enumerate_by="mecs", max_networks=10)
    assert whole.complete and capped.status == "network_limit" and not capped.complete
    every_dag = solve(table, eps, enumerate_by="dags")
    assert f"the best 10 of {len(whole.networks)} credible classes, which hold {len(every_dag.networks)} DAGs" \
        in capped.message
    assert capped.stats["phase2"]["dags_listed"] == len(every_dag.networks)
    assert [x.score for x in capped.networks] == [x.score for x in whole.networks[:10]]


def test_large_tables_use_the_programme_beyond_its_small_limit_when_time_and_memory_allow(monkeypatch):
    """Above DP_MAX_VARIABLES the programme runs only on tables with many parent sets, and only when the time
    limit leaves twice its estimated time; the result is the same either way."""
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 4)
    monkeypatch.setattr(ilp.settings, "DP_LARGE_TABLE_MAX_VARIABLES", 6)
    monkeypatch.setattr(ilp.settings, "DP_RACE_MAX_VARIABLES", 0)
    table = random_table(6, 3, keep=0.5, max_size=3)
    eps = math.log(20)
    monkeypatch.setattr(ilp.settings, "DP_LARGE_TABLE_FAMILIES", table.n_parent_sets() + 1)
    small = solve(table, eps)
    monkeypatch.setattr(ilp.settings, "DP_LARGE_TABLE_FAMILIES", table.n_parent_sets())
    large = solve(table, eps)
    monkeypatch.setattr("bnilp.ilp.search._dp_estimate", lambda data: 1e6)
    hurried = solve(table, eps, time_limit=3600)
    assert "dp" not in small.stats and large.stats["phase1"]["method"] == "dynamic programming"
    assert "dp" not in hurried.stats
    assert as_set(x.parents for x in small.networks) == as_set(x.parents for x in large.networks) \
        == as_set(x.parents for x in hurried.networks)


def _spend_the_budget_after_phase_1(monkeypatch) -> None:
    """Branch-and-cut's phase 1 runs; the race's budget ends as soon as it returns."""
    from bnilp.ilp import search

    prove = search._prove_optimum

    def prove_then_spend(run, *args):
        found = prove(run, *args)
        run.budget = time.perf_counter()
        return found

    monkeypatch.setattr(search, "_prove_optimum", prove_then_spend)


def _race(monkeypatch, budget_seconds: float) -> None:
    """Race branch-and-cut against the programme on 7 variables (DP_MAX_VARIABLES 4), with a fixed budget."""
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 4)
    monkeypatch.setattr(ilp.settings, "DP_RACE_MAX_VARIABLES", 7)
    monkeypatch.setattr("bnilp.ilp.search._dp_estimate", lambda data: budget_seconds)


@pytest.mark.parametrize("unit", ["dags", "mecs"])
def test_a_race_that_branch_and_cut_wins_never_runs_the_programme(monkeypatch, unit):
    _race(monkeypatch, 600.0)
    table = random_table(7, 11, keep=0.12, max_size=3, pruned=True)
    res = solve(table, math.log(20), enumerate_by=unit)
    assert "dp" not in res.stats and res.stats["phase1"]["method"] == "branch-and-cut"
    assert res.complete and res.stats["phase2"]["method"] == "branch-and-cut"
    check_result(table, res, math.log(20))


@pytest.mark.parametrize("unit", ["dags", "mecs"])
def test_when_the_race_budget_runs_out_in_phase_1_the_programme_proves_opt_and_peels(monkeypatch, unit):
    """A spent budget (here: spent before it starts) is not the time limit: the result is complete, and
    the same credible set as branch-and-cut alone gives."""
    table = random_table(7, 12, keep=0.12, max_size=3, pruned=True)
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    alone = solve(table, math.log(20), enumerate_by=unit)
    monkeypatch.undo()
    _race(monkeypatch, -1.0)
    res = solve(table, math.log(20), enumerate_by=unit)
    assert res.status == "optimal" and res.complete
    assert res.stats["phase1"]["method"] == "dynamic programming" and "phase1_branch_and_cut" in res.stats
    assert res.stats["phase2"]["method"] == "peeling"
    assert res.optimum == pytest.approx(alone.optimum, abs=1e-9)
    check_result(table, res, math.log(20))
    key = (lambda p: frozenset(p.items())) if unit == "dags" else mec_key
    assert {key(x.parents) for x in res.networks} == {key(x.parents) for x in alone.networks}


def test_when_the_race_budget_runs_out_in_phase_2_the_programme_takes_over_the_listing(monkeypatch):
    """Phase 1 proved OPT by branch-and-cut within the budget; phase 2 ran out of it: the programme's
    filter and peeling list the credible set, complete, and branch-and-cut's phase 2 is kept in the stats."""

    _race(monkeypatch, 600.0)
    _spend_the_budget_after_phase_1(monkeypatch)
    table = random_table(7, 13, keep=0.12, max_size=3, pruned=True)
    eps = math.log(150)
    res = solve(table, eps)
    assert res.status == "optimal" and res.complete
    assert res.stats["phase1"]["method"] == "branch-and-cut"
    assert "phase2_branch_and_cut" in res.stats and res.stats["phase2"]["method"] == "peeling"
    check_result(table, res, eps)


def _no_room_after_phase_1(monkeypatch) -> None:
    """The programme's tables fit when the race begins, not once branch-and-cut's phase 1 has returned (its
    listing took the memory): every later look at the programme's room says it does not fit."""
    from bnilp.ilp import search

    prove, memory = search._prove_optimum, search._dp_memory
    after = []

    def prove_then_fill(*args):
        found = prove(*args)
        after.append(True)
        return found

    monkeypatch.setattr(search, "_prove_optimum", prove_then_fill)
    monkeypatch.setattr(search, "_dp_memory", lambda data: (False, memory(data)[1], 1) if after else memory(data))


@pytest.mark.parametrize("unit", ["dags", "mecs"])
@pytest.mark.parametrize("phase", ["phase1", "phase2"])
def test_a_handover_without_room_for_the_programme_leaves_branch_and_cut_to_finish(monkeypatch, unit, phase):
    """At the race's end the programme takes over only if its tables still fit in half the free memory (else
    the out-of-memory killer would end the run without a word): without room, branch-and-cut runs the phase
    again without a budget — the same complete credible set as branch-and-cut alone, and the stats say why."""
    table = random_table(7, 12, keep=0.12, max_size=3, pruned=True)
    eps = math.log(20)
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    alone = solve(table, eps, enumerate_by=unit)
    monkeypatch.undo()
    if phase == "phase1":
        _race(monkeypatch, -1.0)                    # spent before branch-and-cut starts
    else:
        _race(monkeypatch, 600.0)
        _spend_the_budget_after_phase_1(monkeypatch)
    _no_room_after_phase_1(monkeypatch)
    res = solve(table, eps, enumerate_by=unit)
    assert res.status == "optimal" and res.complete
    assert "dp" not in res.stats and res.stats["dp_handover_refused"]["phase"] == phase
    assert res.stats["dp_handover_refused"]["free_bytes"] == 1 and phase + "_raced" in res.stats
    assert res.stats["phase1"]["method"] == res.stats["phase2"]["method"] == "branch-and-cut"
    assert res.optimum == pytest.approx(alone.optimum, abs=1e-9)
    check_result(table, res, eps)
    key = (lambda p: frozenset(p.items())) if unit == "dags" else mec_key
    assert {key(x.parents) for x in res.networks} == {key(x.parents) for x in alone.networks}


def _offset_table(n: int, offset: float):
    """A random table (parent sets of up to two of the others, scores within 15 nats of each other) with every
    score shifted by ``offset``: the same networks' order, |OPT| ≈ n·|offset|."""
    import itertools
    import random

    from bnilp.scorefile import ScoreTable

    rng = random.Random(1)
    names = [f"V{i}" for i in range(n)]
    families = {}
    for v in names:
        others = [u for u in names if u != v]
        families[v] = {frozenset(ps): offset - 5 * (1 + k) * rng.random() - 0.5 * k
                       for k in range(3) for ps in itertools.combinations(others, k) if not k or rng.random() <= 0.4}
    return ScoreTable(names, families)


def test_peeling_s_float_slack_is_tied_to_the_proven_rounding_not_to_the_scores_size(monkeypatch):
    """The programme runs only where its float sums are within 1e-10·|OPT|, so its filter and peeling need no
    more slack than that: at |OPT| ≈ 7e7 a slack of 1e-7·|OPT| (7 nats) made peeling list every DAG within 7 nats
    of a 4-DAG credible set at ε = 0 (it did not end in 15 s); now the same set as branch-and-cut's, at once."""
    table = _offset_table(14, -5e6)
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    alone = solve(table, 0.0)
    monkeypatch.undo()
    res = solve(table, 0.0, time_limit=60)
    assert res.stats["phase2"]["method"] == "peeling" and res.status == "optimal" and res.complete
    assert as_set(x.parents for x in res.networks) == as_set(x.parents for x in alone.networks)
    assert res.stats["phase2"]["dags_listed"] < 100


def test_bound_mode_is_left_to_branch_and_cut_where_float32_cannot_tell_the_networks_apart(monkeypatch):
    """Bound mode's slack n·2^−23·Σ max|s| is 117 nats at |OPT| ≈ 7e7: its peeling would have to go through every
    DAG within it (it did not prove OPT in 20 s). There the race does not start and branch-and-cut proves OPT
    alone; on the same table unshifted (slack 1e-4) the race hands over to bound mode as before."""
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 3)
    monkeypatch.setattr(ilp.settings, "DP_EXACT_MAX_VARIABLES", 3)
    monkeypatch.setattr(ilp.settings, "DP_RACE_MAX_VARIABLES", 14)
    monkeypatch.setattr("bnilp.ilp.search._dp_estimate", lambda data: -1.0)    # the budget spent at once
    far = solve(_offset_table(14, -5e6), 0.0, time_limit=60)
    assert "dp" not in far.stats and far.stats["phase1"]["method"] == "branch-and-cut"
    assert far.status == "optimal" and far.complete
    near = solve(_offset_table(14, 0.0), 0.0, time_limit=60)
    assert near.stats["dp"]["mode"].startswith("bound") and near.status == "optimal" and near.complete
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    alone = solve(_offset_table(14, 0.0), 0.0)
    assert as_set(x.parents for x in near.networks) == as_set(x.parents for x in alone.networks)


def test_the_race_needs_room_for_the_programme_after_its_budget(monkeypatch):
    """No race when the time limit cannot hold the budget and twice the programme's estimate after it, nor
    when knowledge needs rows (the programme could not prove OPT): branch-and-cut alone, as before."""
    _race(monkeypatch, 5.0)
    monkeypatch.setattr("bnilp.ilp.settings.BRANCHING_ENUMERATION", False)     # (its table: one parent a variable)
    table = random_table(7, 14, keep=0.12, max_size=3, pruned=True)
    hurried = solve(table, math.log(3), time_limit=14.0)
    assert "dp" not in hurried.stats and "phase1_branch_and_cut" not in hurried.stats
    k = Knowledge(required_adjacent=(("V4", "V5"),))      # one the table can meet (V4 | {V5}): a feasible search
    monkeypatch.setattr("bnilp.ilp.search._dp_estimate", lambda data: -1.0)
    rows = solve(restrict_table(table, k), math.log(3))
    assert "phase1_branch_and_cut" not in rows.stats and rows.stats["phase1"]["method"] == "branch-and-cut"
    assert hurried.complete and rows.complete and rows.status == "optimal"
    assert all("V5" in n.parents["V4"] or "V4" in n.parents["V5"] for n in rows.networks)


def test_the_gathered_index_of_a_subset_is_its_bits_inside_the_candidate_parents_packed_in_order():
    """bps_v is stored over the subsets of D_v: the index of S is S ∩ D_v with the bits outside D_v
    squeezed out (a pext), for masks that cross byte boundaries, up to 30 variables."""
    from bnilp.ilp.dp import _gather, _gather_tables

    rng = np.random.default_rng(5)
    for n in (3, 9, 17, 30):
        cmask = rng.integers(0, 1 << n, size=n, dtype=np.int64) & ~(np.int64(1) << np.arange(n))
        cmask[0] = (1 << n) - 2                         # every other variable: the shift
        gather = _gather_tables(n, cmask)
        for _ in range(200):
            v = int(rng.integers(n))
            s = int(rng.integers(0, 1 << n))
            bits = [j for j in range(n) if cmask[v] >> j & 1]
            expected = sum(1 << i for i, j in enumerate(bits) if s >> j & 1)
            assert _gather(gather, v, np.int64(s)) == expected


@pytest.mark.parametrize("n,seed", slow_after([(n, s) for n in (3, 4, 5) for s in range(4)], 9))
@pytest.mark.parametrize("per_child", [1, 2, 4])
def test_tables_over_fewer_parents_keep_opt_exact_and_the_filter_sound(monkeypatch, n, seed, per_child):
    """With the table budget too small for 2^|C_v| entries, bps_v is indexed by the parents most frequent
    in v's sets and the other sets are scanned: OPT and the credible set stay exact, the best DAG through
    a family inside D_v stays exact, and through one outside it is an upper bound (the filter keeps more)."""
    from bnilp.ilp.dp import plan_tables

    monkeypatch.setattr(ilp.settings, "DP_TABLE_MAX_ENTRIES", n * per_child)
    monkeypatch.setattr(ilp.settings, "DP_TABLE_GROWN_MAX_ENTRIES", n * per_child)
    table = random_table(n, 900 * n + seed, keep=0.6, ties=seed == 3)
    data = _Data(table)
    dmask = plan_tables(data).dmask
    assert sum(1 << int(d).bit_count() for d in dmask) <= n * per_child
    dp = solve_dp(data, containing=True)
    expected = _brute_best_through(table, data)
    assert dp.opt == pytest.approx(brute_force_networks(table)[0][0], abs=1e-9)
    inside = np.array([data.pmask[k] & ~dmask[data.child[k]] == 0 for k in range(data.K)])
    finite = np.isfinite(expected)
    np.testing.assert_allclose(dp.best_containing[finite & inside], expected[finite & inside], rtol=0, atol=1e-9)
    assert np.all(dp.best_containing[finite] >= expected[finite] - 1e-9)
    for eps in (0.0, 2.0):
        res = solve(table, eps)
        _, credible = brute_force_credible(table, eps)
        assert res.complete and as_set(x.parents for x in res.networks) == as_set(p for _, p in credible)


def _exact_scans_per_pass(data: _Data, dmask: np.ndarray) -> int:
    """Oracle for :func:`bnilp.ilp.dp.scan_steps`: at every S ⊆ V∖{v}, for every v, the families with a
    parent outside D_v that a look-up examines — best first, those scoring above v's best family inside D_v
    that fits in S, up to the first that fits in S — counted by enumerating the subsets."""
    total = 0
    for v in range(data.n):
        fams = range(int(data.start[v]), int(data.start[v + 1]))
        for s in range(1 << data.n):
            if s >> v & 1:
                continue
            inside = [data.score[k] for k in fams if data.pmask[k] & ~int(dmask[v]) == 0 and data.pmask[k] & ~s == 0]
            best = max(inside, default=-math.inf)
            for k in fams:
                if data.pmask[k] & ~int(dmask[v]) == 0:
                    continue
                if data.score[k] <= best:
                    break
                total += 1
                if data.pmask[k] & ~s == 0:
                    break
    return total


@pytest.mark.parametrize("n,seed", [(5, 0), (7, 1), (8, 2)])
def test_the_scan_estimate_converges_to_the_scans_a_pass_makes(n, seed):
    """scan_steps(data, D) estimates Σ_v Σ_{S ⊆ V∖v} (families scanned at S) from sampled subsets: with
    D_v = C_v it is exactly 0; with D_v reduced it is within a few per cent of the exhaustive count once
    enough subsets are drawn, and the same for the same seed."""
    from bnilp.ilp.dp import candidate_masks, scan_steps, table_masks

    table = random_table(n, 1300 * n + seed, keep=0.5, max_size=3)
    data = _Data(table)
    assert scan_steps(data, candidate_masks(data)) == 0.0
    dmask = table_masks(data, max_entries=n * 2)
    exact = _exact_scans_per_pass(data, dmask)
    assert exact > 0
    estimate = scan_steps(data, dmask, samples=200_000)
    assert estimate == pytest.approx(exact, rel=0.05)
    assert scan_steps(data, dmask, samples=500, seed=3) == scan_steps(data, dmask, samples=500, seed=3)


def test_tables_grow_past_their_budget_where_the_scans_would_cost_more(monkeypatch):
    """With DP_TABLE_MAX_ENTRIES too small for the candidate parents, plan_tables doubles the budget up to
    DP_TABLE_GROWN_MAX_ENTRIES and keeps the plan of least estimated time (tables against scans); with no
    memory to spare it keeps the budget's plan. Whatever the plan, OPT is the same and the best DAG through
    a family is exact inside the tables and an upper bound outside them (full tables: the exact values)."""
    from bnilp.ilp import dp as dpmod

    n, budget = 10, 40
    table = random_table(n, 4242, keep=0.5, max_size=3)
    exact = solve_dp(_Data(table), containing=True)                       # every C_v fits the default budget
    monkeypatch.setattr(ilp.settings, "DP_TABLE_MAX_ENTRIES", budget)
    monkeypatch.setattr(ilp.settings, "DP_TABLE_GROWN_MAX_ENTRIES", 2 ** 20)
    grown_data = _Data(table)
    grown = dpmod.plan_tables(grown_data)
    candidates = [dpmod.TablePlan.of(grown_data, dpmod.table_masks(grown_data, budget << j)) for j in range(16)]
    assert grown.entries > budget
    assert grown.seconds(n) == min(c.seconds(n) for c in candidates)
    assert dpmod.plan_tables(grown_data) is grown                          # planned once per data
    monkeypatch.setattr(dpmod, "free_memory", lambda: 1)
    small_data = _Data(table)
    small = dpmod.plan_tables(small_data)
    assert small.entries <= budget and small.scan_steps > grown.scan_steps
    child = np.asarray(small_data.child)
    pmask = np.asarray(small_data.pmask, dtype=np.int64)
    for data, plan in ((grown_data, grown), (small_data, small)):
        dp = solve_dp(data, containing=True)
        assert dp.opt == exact.opt
        inside = (pmask & ~plan.dmask[child]) == 0
        np.testing.assert_array_equal(dp.best_containing[inside], exact.best_containing[inside])
        assert np.all(dp.best_containing >= exact.best_containing)


@pytest.mark.parametrize("n,seed", [(9, 0), (11, 1), (12, 2)])
def test_the_blocked_passes_give_the_same_programme_whatever_the_block(monkeypatch, n, seed):
    """F, its sinks' DAG, and the best DAG through each family do not depend on how the subsets are
    blocked (1 bit: nearly every sink is a high one; n bits: one block) nor on the slices between two looks
    at the clock (CHECK_BITS 4: a few blocks a slice; 0: one block)."""
    table = random_table(n, 77 * n + seed, keep=0.1, max_size=3, ties=seed == 2)
    data = _Data(table)
    one = solve_dp(data, containing=True, block_bits=n)
    for bits, check in ((1, 22), (3, 22), (n - 2, 22), (2, 4), (3, 0)):
        monkeypatch.setattr("bnilp.ilp.dp.CHECK_BITS", check)
        other = solve_dp(data, containing=True, block_bits=bits, stop=lambda: False)
        np.testing.assert_array_equal(other.forward, one.forward)
        np.testing.assert_array_equal(other.best_containing, one.best_containing)
        assert other.choice == one.choice and other.opt == one.opt


def _stop_at(look: int):
    """A ``stop`` for the programme that says yes at its ``look``-th look, and after."""
    looks = []

    def stop() -> bool:
        looks.append(1)
        return len(looks) >= look
    return stop


def test_a_stopped_programme_says_how_far_it_got_and_keeps_opt_once_the_forward_pass_is_done(monkeypatch):
    """``stop`` is asked between slices (here after each): stopped in the forward pass nothing is known;
    stopped later, OPT and its DAG are those of the whole run, the filter is missing. A programme smaller
    than CHECK_STEPS never asks (one thread here: with more, the filter asks once per round of children)."""
    monkeypatch.setattr("bnilp.ilp.dp.CHECK_BITS", 0)
    monkeypatch.setattr("bnilp.ilp.dp.CHECK_STEPS", 0)
    table = random_table(9, 5, keep=0.2, max_size=3)
    data = _Data(table)
    whole = solve_dp(data, containing=True, block_bits=3, threads=1)
    n_checks = []
    solve_dp(data, containing=True, block_bits=3, threads=1, stop=lambda: n_checks.append(1) and False)
    # 9 tables; 64 forward slices, the last one's look once OPT is known; 64 backward, the last one's look
    # with the first child's; 9 children, none after the last (the filter is then done)
    assert len(n_checks) == 9 + 64 + 63 + 8
    shares = []
    for after in (5, 9 + 30, 9 + 64, 9 + 64 + 10, 9 + 64 + 63 + 3):
        with pytest.raises(DPStopped) as stopped:
            solve_dp(data, containing=True, block_bits=3, threads=1, stop=_stop_at(after))
        shares.append(stopped.value.done)
        assert not stopped.value.interrupted
        if after < 9 + 64:
            assert stopped.value.result is None
        else:
            part = stopped.value.result
            assert part.opt == whole.opt and part.choice == whole.choice and part.best_containing is None
    assert shares == sorted(shares) and shares[0] == 0.0 and 0 < shares[-1] < 1
    monkeypatch.setattr("bnilp.ilp.dp.CHECK_STEPS", 1 << 26)
    assert solve_dp(data, containing=True, block_bits=3, threads=1, stop=lambda: True).opt == whole.opt


@pytest.mark.parametrize("seed", range(3))
def test_compiled_row_sums_are_math_fsum_bit_for_bit(seed):
    """Peeling scores its DAGs with a compiled exact sum; it must round exactly as math.fsum (which decides
    the threshold and the best DAG of a class everywhere else): random scores of very different magnitudes,
    cancellations, and CPython's own half-even cases across partials."""
    rng = np.random.default_rng(seed)
    special = [2.0 ** 53, -0.5, -2.0 ** -54, 1.0, 2.0 ** -100, 2.0 ** 53 + 10.0, 2.0 ** 53 - 4.0, 0.5,
               2.0 ** -54, 1e16, -1e16, 1e-16, 0.1, 0.2, 0.3, 2.0 ** -1074, 0.0, 1.0 + 2.0 ** -52]
    pools = [-rng.random(400) * 1e4, rng.normal(size=400) * 10.0 ** rng.integers(-20, 20, size=400),
             np.round(-rng.random(400) * 1e4, 2), np.array(special * 20)]
    for score in pools:
        for n in (1, 2, 3, 7, 23, 40):
            rows = rng.integers(0, len(score), size=(300, n))
            want = np.array([math.fsum(score[r]) for r in rows])
            assert (_fsum_rows(score, rows).view(np.int64) == want.view(np.int64)).all()
    for terms, total in [([2.0 ** 53, -0.5, -2.0 ** -54], 2.0 ** 53 - 1.0),
                         ([2.0 ** 53, 1.0, 2.0 ** -100], 2.0 ** 53 + 2.0),
                         ([2.0 ** 53 + 10.0, 1.0, 2.0 ** -100], 2.0 ** 53 + 12.0),
                         ([2.0 ** 53 - 4.0, 0.5, 2.0 ** -54], 2.0 ** 53 - 3.0)]:
        assert _fsum_rows(np.array(terms), np.arange(len(terms))[None, :])[0] == total == math.fsum(terms)


def test_best_per_class_folds_chunks_like_one_dag_at_a_time():
    """The compiled fold of peeling's class enumeration (a hash table on the class words) keeps, per class,
    the DAG a one-at-a-time scan keeps (highest fsum score, ties to the smallest choice), whatever the
    chunking and through every growth of its table, says which DAG opened each class, and ranks the classes
    best first — on every DAG of a random table, with tied scores forced in (every score rounded to a coarse
    grid); the packed words of more than 62 variables group the same way, and so does the table that holds no
    words (``key="class"``: a held DAG's words computed again from its row)."""
    from bnilp.ilp.classbest import BestPerClass

    table = random_table(5, 77, keep=0.8)
    data = _Data(table)
    data.score = np.round(data.score, 0)                    # many exact ties inside and across classes
    nets = brute_force_networks(table)
    order = np.random.default_rng(0).permutation(len(nets))
    rows = _choice_rows(data, [nets[m][1] for m in order])
    scores = data.exact_rows(rows)
    # the class words group the DAGs exactly as the reference class key does (CPDAG, Chickering 1995)
    keys = [r.tobytes() for r in data.class_words(rows)]
    mec = [mec_key(nets[m][1]) for m in order]
    assert len(set(keys)) == len(set(mec)) == len(set(zip(keys, mec, strict=True)))
    want: dict = {}
    for key, row, sc in zip((r.tobytes() for r in data.class_words(rows)), rows, scores, strict=True):
        choice = tuple(row.tolist())
        if key not in want or (-sc, choice) < (-want[key][0], want[key][1]):
            want[key] = (float(sc), choice)
    ranked = sorted(want.values(), key=lambda sc: (-sc[0], sc[1]))
    assert len(ranked) > 100 and len({s for s, _ in ranked}) < len(ranked)     # ties across classes too
    words, packed = data.class_words(rows), data._class_words_packed(rows)
    for key, w in (("words", words), ("words", packed), ("class", words)):
        for chunk in (1, 7, 500, len(rows)):
            fold = BestPerClass(data.n, capacity=16, key=key, pmask=data.pmask64())
            fresh = []
            for lo in range(0, len(rows), chunk):
                fresh += fold.add(w[lo:lo + chunk], scores[lo:lo + chunk], rows[lo:lo + chunk]).tolist()
            assert len(fold) == len(want) == sum(fresh)
            firsts = {}                                     # each class is new at its first DAG, and only there
            for m, wm in enumerate(words):
                firsts.setdefault(wm.tobytes(), m)
            assert [m for m, f in enumerate(fresh) if f] == sorted(firsts.values())
            s, r = fold.ranked()
            assert [(float(a), tuple(b)) for a, b in zip(s.tolist(), r.tolist(), strict=True)] == ranked
    every = BestPerClass(data.n, capacity=16, key="row")    # each DAG its own class
    assert every.add(None, scores, rows).all() and not every.add(None, scores[:9], rows[:9]).any()
    s, r = every.ranked()
    every_dag = ((float(a), tuple(b)) for a, b in zip(scores.tolist(), rows.tolist(), strict=True))
    assert [(float(a), tuple(b)) for a, b in zip(s.tolist(), r.tolist(), strict=True)] == sorted(
        every_dag, key=lambda sc: (-sc[0], sc[1]))


def test_best_per_class_tells_a_hash_match_of_another_class_apart():
    """On a hash match the table compares the classes themselves (:func:`_same`): a DAG of another class is
    not taken for the held one — whether the table holds its words or computes them again from the held row —
    and a DAG of the held class is. (A 64-bit hash collision cannot be forced through the compiled fold, so
    the comparison is called directly on the rows it would see.)"""
    from bnilp.ilp.classbest import _as_int64_words, _same

    table = random_table(5, 78, keep=0.8)
    data = _Data(table)
    nets = brute_force_networks(table)
    rows = _choice_rows(data, [p for _, p in nets])
    mec = [mec_key(p) for _, p in nets]
    words = _as_int64_words(data.class_words(rows))
    held = 0
    same = next(m for m in range(1, len(nets)) if mec[m] == mec[held])
    other = next(m for m in range(1, len(nets)) if mec[m] != mec[held])
    best_r = rows[[held]].astype(np.int32)
    scratch = [np.empty(data.n, dtype=np.int64) for _ in range(3)]
    for keys, pmask in ((words[[held]], np.zeros(0, dtype=np.int64)),             # key="words"
                        (np.zeros((1, 0), dtype=np.int64), data.pmask64())):       # key="class"
        assert _same(words, same, rows, keys, best_r, 0, pmask, *scratch)
        assert not _same(words, other, rows, keys, best_r, 0, pmask, *scratch)


def test_the_choice_table_past_62_variables_groups_by_packed_words():
    """Past :data:`~bnilp.mec.MASK_MAX_VARIABLES` the table holds packed class words (``choice_table`` then
    ``add_rows``): on 70 variables, each with at most one parent (its neighbour on a line, either side), every
    DAG's class is its skeleton (no colliders) — the table keeps one DAG per skeleton, the best, as grouping
    by the reference class key does; the table without words refuses words of the wrong width."""
    import random

    from bnilp.ilp.classbest import BestPerClass, choice_table
    from bnilp.mec import MASK_MAX_VARIABLES
    from bnilp.scorefile import ScoreTable

    n = 70
    assert n > MASK_MAX_VARIABLES
    rng = random.Random(80)
    names = [f"V{i}" for i in range(n)]
    families = {v: {frozenset(): -rng.randint(0, 8) / 2} for v in names}
    for i, v in enumerate(names):
        for j in (i - 1, i + 1):
            if 0 <= j < n:
                families[v][frozenset({names[j]})] = -rng.randint(0, 8) / 2      # coarse: many ties
    data = _Data(ScoreTable(variables=names, families=families))
    nets = []
    while len(nets) < 400:
        parents = {v: frozenset() for v in names}
        for i in (1, 20, 40, 65):                       # up to four edges on the line, a free orientation each
            if rng.random() < 0.5:
                a, b = (names[i - 1], names[i]) if rng.random() < 0.5 else (names[i], names[i - 1])
                parents[b] = frozenset({a})
        nets.append(parents)
    rows = _choice_rows(data, nets)
    scores = data.exact_rows(rows)
    table = choice_table(data, classes=True, capacity=16)
    assert table.key == "words"
    for lo in range(0, len(rows), 64):
        table.add_rows(rows[lo:lo + 64], scores[lo:lo + 64])
    want: dict = {}
    for p, row, sc in zip(nets, rows.tolist(), scores.tolist(), strict=True):
        key = mec_key(p)
        if key not in want or (-sc, row) < (-want[key][0], want[key][1]):
            want[key] = (sc, row)
    got_s, got_r = table.ranked()
    assert len(table) == len(want) < len(rows)
    assert sorted(zip(got_s.tolist(), got_r.tolist(), strict=True)) == sorted(want.values())
    small = BestPerClass(5, key="class", pmask=np.zeros(4, dtype=np.int64))
    with pytest.raises(ValueError, match="2·n = 10"):
        small.add(np.zeros((1, 6), dtype=np.int64), np.zeros(1), np.zeros((1, 5), dtype=np.int64))


def test_an_interrupt_while_the_table_grows_leaves_it_whole(monkeypatch):
    """The cubes' coordinator keeps folding its workers' last batches after a KeyboardInterrupt, so one that
    lands while the table grows must leave the table as it was: the same classes, the same best DAGs, and
    folds after it as on a table never interrupted."""
    from bnilp.ilp import classbest

    table = random_table(5, 79, keep=0.8)
    data = _Data(table)
    rows = _choice_rows(data, [p for _, p in brute_force_networks(table)])
    scores = data.exact_rows(rows)
    clean = classbest.choice_table(data, classes=True, capacity=16)
    table_ = classbest.choice_table(data, classes=True, capacity=16)
    clean.add_rows(rows[:10], scores[:10])
    table_.add_rows(rows[:10], scores[:10])
    before = table_.ranked()

    def interrupted(*_):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(classbest, "_rehash", interrupted)
        with pytest.raises(KeyboardInterrupt):
            table_.add_rows(rows[10:], scores[10:])
    after = table_.ranked()
    assert len(table_) == len(before[0]) and all((a == b).all() for a, b in zip(before, after, strict=True))
    assert (clean.add_rows(rows[10:], scores[10:]) == table_.add_rows(rows[10:], scores[10:])).all()
    assert len(clean) == len(table_) and all((a == b).all() for a, b in zip(clean.ranked(), table_.ranked(),
                                                                             strict=True))


def _looks_every_step(monkeypatch) -> None:
    """The programme asks its ``stop`` after every slice and child (one block of 2^14 subsets at n ≤ 14)."""
    monkeypatch.setattr("bnilp.ilp.dp.CHECK_BITS", 0)
    monkeypatch.setattr("bnilp.ilp.dp.CHECK_STEPS", 0)


@pytest.mark.parametrize("unit", ["dags", "mecs"])
def test_the_time_limit_stops_the_programme_before_opt_with_the_best_dag_known(monkeypatch, unit):
    """A time limit reached in the programme's first pass: OPT not proven, the sink heuristic's DAG and the
    sum of the best scores as bound, status time_limit — not a programme that runs past the limit."""
    _looks_every_step(monkeypatch)
    table = random_table(7, 21, keep=0.3, max_size=3)
    res = solve(table, math.log(20), time_limit=0.0, enumerate_by=unit)
    opt = dp_optimum(table)
    assert res.status == "time_limit" and not res.complete and res.gap >= 0
    assert "in the dynamic programme (0% of its passes done), phase 1" in res.message
    assert "optimality not proven" in res.message and res.stats["dp"]["stopped"] == 0.0
    assert len(res.networks) == 1 and res.optimum <= opt + 1e-9 <= res.bound + 2e-9
    assert res.stats["phase1"]["method"] == "dynamic programming"
    check_result(table, res, math.log(20))


@pytest.mark.parametrize("stop_by,status", [("clock", "time_limit"), ("sigint", "interrupted")])
def test_a_programme_stopped_after_its_forward_pass_returns_the_proven_optimum(monkeypatch, stop_by, status):
    """Stopped between the forward pass and the filter (the clock, or SIGINT): OPT is proven and returned,
    the credible set is not listed (complete False)."""
    from bnilp.ilp import search

    _looks_every_step(monkeypatch)
    table = random_table(7, 22, keep=0.3, max_size=3)
    eps = math.log(20)
    whole = solve(table, eps)
    stop = _stop_at(7 + 1)                  # 7 tables, then the look once OPT is known

    def should_stop(run) -> bool:
        hit = stop()
        if hit and stop_by == "sigint":
            raise KeyboardInterrupt
        return hit

    monkeypatch.setattr(search._Run, "dp_should_stop", should_stop)
    res = solve(table, eps)
    assert res.status == status and not res.complete and res.optimum == whole.optimum
    assert res.networks[0].score == whole.optimum and len(res.networks) == 1
    assert "OPT is proven" in res.message and "the programme had not filtered the parent sets yet" in res.message
    assert 0 < res.stats["dp"]["stopped"] < 1 and res.stats["phase2"]["method"] == "dynamic programming"
    check_result(table, res, eps)


def test_a_programme_stopped_after_the_race_keeps_what_branch_and_cut_proved(monkeypatch):
    """Branch-and-cut proved OPT, its budget ran out in phase 2, and the time limit stops the programme in
    its first pass: the result keeps branch-and-cut's OPT."""
    from bnilp.ilp import search

    _race(monkeypatch, 600.0)
    _looks_every_step(monkeypatch)
    _spend_the_budget_after_phase_1(monkeypatch)
    monkeypatch.setattr(search._Run, "dp_should_stop", lambda run: True)
    table = random_table(7, 13, keep=0.12, max_size=3, pruned=True)
    eps = math.log(150)
    res = solve(table, eps)
    assert res.status == "time_limit" and not res.complete and res.optimum == pytest.approx(dp_optimum(table))
    assert res.stats["phase1"]["method"] == "branch-and-cut" and "phase2_branch_and_cut" in res.stats
    assert res.stats["dp"]["stopped"] == 0.0 and "OPT is proven" in res.message
    check_result(table, res, eps)


def test_a_programme_stopped_under_knowledge_rows_claims_no_optimum(monkeypatch):
    """With knowledge the table cannot say (here a required adjacency and ancestor relation) the
    programme's F is only an upper bound: stopped even after its forward pass, OPT is not claimed, and no
    DAG that may break the knowledge is returned — only the bound."""
    from bnilp.ilp import search

    _looks_every_step(monkeypatch)
    table = random_table(5, 4242, keep=0.7)
    k = Knowledge(required_adjacent=(("V0", "V4"),), required_ancestors=(("V3", "V1"),))
    restricted = restrict_table(table, k)
    stop = _stop_at(5 + 1)                  # 5 tables, then the look once F is known
    monkeypatch.setattr(search._Run, "dp_should_stop", lambda run: stop())
    res = solve(restricted, math.log(20))
    opt = max(s for s, p in brute_force_networks(table) if satisfies_knowledge(p, k))
    assert res.status == "time_limit" and not res.complete and res.networks == [] and res.optimum is None
    assert res.bound >= opt - 1e-9 and "optimality not proven" in res.message


@pytest.mark.parametrize("n,seed", [(8, 0), (10, 1), (12, 2)])
def test_bound_mode_forward_is_float32_never_below_f_and_within_its_rounding(n, seed):
    """Bound mode keeps F in float32, each value rounded up: F ≤ F32 ≤ F + n·2^−23·max|F32| everywhere
    (−inf where no DAG exists), and OPT and its DAG are still exact (the best DAG peeled above the bound)."""
    table = random_table(n, 61 * n + seed, keep=0.1, max_size=3, ties=seed == 2)
    data = _Data(table)
    exact = solve_dp(data, bound=False)
    bound = solve_dp(data, bound=True)
    f, f32 = exact.forward, bound.forward
    assert f32.dtype == np.float32 and f.dtype == np.float64
    finite = np.isfinite(f)
    np.testing.assert_array_equal(np.isfinite(f32), finite)
    assert np.all(f32[finite].astype(np.float64) >= f[finite])
    delta = n * 2.0 ** -23 * np.abs(f32[finite]).max()
    assert np.all(f32[finite] - f[finite] <= delta)
    assert bound.best_containing is None
    assert bound.opt == data.exact(bound.choice) == pytest.approx(data.exact(exact.choice), abs=1e-9)
    assert data.exact(bound.choice) >= data.exact(exact.choice) - 1e-9 * abs(exact.opt)


def test_bound_mode_with_a_known_dag_as_floor_finds_the_same_optimum():
    """``floor`` (the score of a DAG already known, here the optimum itself or a worse one) only raises the
    peeling threshold for OPT: the optimum and its score are unchanged."""
    table = random_table(9, 404, keep=0.15, max_size=3)
    data = _Data(table)
    exact = solve_dp(data, bound=False)
    opt = data.exact(exact.choice)
    for floor in (opt, opt - 5.0, None):
        got = solve_dp(data, bound=True, floor=floor)
        assert got.opt == pytest.approx(opt, abs=1e-9) and data.exact(got.choice) == got.opt


@pytest.mark.parametrize("bound", [False, True])
def test_the_passes_give_the_same_programme_on_any_number_of_threads(monkeypatch, bound):
    """Layer by layer (a block of F needs only blocks with one high bit fewer, a block of R only blocks with
    one more), the slices split among threads, and the filter child by child: F, the sinks' DAG and the best
    DAG through each family are bit for bit those of one thread, with small blocks and slices too."""
    table = random_table(11, 909, keep=0.1, max_size=3)
    data = _Data(table)
    one = solve_dp(data, containing=True, block_bits=3, threads=1, bound=bound)
    assert (one.best_containing is None) == bound
    monkeypatch.setattr("bnilp.ilp.dp.CHECK_BITS", 5)
    for threads in (2, 3):
        other = solve_dp(data, containing=True, block_bits=3, threads=threads, bound=bound)
        np.testing.assert_array_equal(other.forward, one.forward)
        assert other.choice == one.choice and other.opt == one.opt
        if not bound:
            np.testing.assert_array_equal(other.best_containing, one.best_containing)


@pytest.mark.parametrize("n,seed", [(n, s) for n in (3, 4, 5) for s in range(4)])
@pytest.mark.parametrize("unit", ["dags", "mecs"])
def test_the_search_in_bound_mode_lists_the_brute_force_credible_set(monkeypatch, n, seed, unit):
    """With the programme in bound mode (DP_EXACT_MAX_VARIABLES 0: float32 F, no filter), OPT by peeling and
    phase 2 by peeling over every family give brute force's OPT and credible set, at every ε."""
    monkeypatch.setattr(ilp.settings, "DP_EXACT_MAX_VARIABLES", 0)
    table = random_table(n, 300 * n + seed, keep=0.6, ties=seed == 3, pruned=seed == 2)
    for eps in EPSILONS:
        res = solve(table, eps, enumerate_by=unit)
        opt, expected = brute_force_credible(table, eps)
        assert res.stats["dp"]["mode"].startswith("bound") and "families_kept" not in res.stats["dp"]
        assert res.stats["phase1"]["method"] == "dynamic programming" and res.complete
        check_result(table, res, eps)
        assert res.optimum == pytest.approx(opt, abs=1e-9)
        if unit == "dags":
            assert as_set(x.parents for x in res.networks) == as_set(p for _, p in expected)
        else:
            assert {mec_key(x.parents) for x in res.networks} == {mec_key(p) for _, p in expected}


def test_a_race_lost_in_phase_2_hands_over_to_the_programme_in_bound_mode(monkeypatch):
    """Past DP_EXACT_MAX_VARIABLES the race hands over to the programme in bound mode: the OPT that
    branch-and-cut proved is its floor, and peeling lists the whole credible set."""
    _race(monkeypatch, 600.0)
    _spend_the_budget_after_phase_1(monkeypatch)
    monkeypatch.setattr(ilp.settings, "DP_EXACT_MAX_VARIABLES", 6)
    table = random_table(7, 13, keep=0.12, max_size=3, pruned=True)
    eps = math.log(150)
    res = solve(table, eps)
    assert res.status == "optimal" and res.complete and res.stats["dp"]["mode"].startswith("bound")
    assert res.stats["phase1"]["method"] == "branch-and-cut" and res.stats["phase2"]["method"] == "peeling"
    check_result(table, res, eps)
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    alone = solve(table, eps)
    assert as_set(x.parents for x in res.networks) == as_set(x.parents for x in alone.networks)


def test_bound_mode_races_where_the_time_limit_leaves_room_for_its_estimate_once(monkeypatch):
    """The race needs the budget and twice the programme's estimate within the time limit, but in bound mode
    (past DP_EXACT_MAX_VARIABLES) once: with an estimate of 40 s (budget 20 s) and a 90 s limit, only bound mode
    races (it needs 60 s: a loaded machine's 30 s of start-up still leave it room; the table solves in a second)."""
    from bnilp.ilp import search

    _race(monkeypatch, 40.0)
    budgets = []
    race_budget = search._race_budget

    def recorded(data, run):
        budgets.append(race_budget(data, run))
        return budgets[-1]

    monkeypatch.setattr(search, "_race_budget", recorded)
    monkeypatch.setattr(ilp.settings, "BRANCHING_ENUMERATION", False)     # (its table: one parent a variable)
    table = random_table(7, 14, keep=0.12, max_size=3, pruned=True)
    exact = solve(table, math.log(3), time_limit=90.0)
    monkeypatch.setattr(ilp.settings, "DP_EXACT_MAX_VARIABLES", 6)
    bound = solve(table, math.log(3), time_limit=90.0)
    assert budgets[0] is None and budgets[1] is not None
    assert exact.complete and bound.complete
    assert as_set(x.parents for x in exact.networks) == as_set(x.parents for x in bound.networks)


def test_peeling_a_set_of_exactly_the_cap_is_complete_and_one_past_it_names_every_dag_found():
    """A star (a root with no parents, 12 leaves each taking it or not at equal score): exactly 2^12 = 4,096
    tied optimal DAGs, one peeling chunk's worth. A cap of 4,096 lists them all (optimal, complete: the chunk
    filling exactly once read as "there may be more"); a cap of 4,095 is network_limit, and its message counts
    the 4,096 found, not the 4,095 kept."""
    from bnilp.ilp import solve
    from bnilp.scorefile import ScoreTable

    names = ["R"] + [f"L{i}" for i in range(12)]
    families = {"R": {frozenset(): -1.0}} | {v: {frozenset(): -2.0, frozenset({"R"}): -2.0} for v in names[1:]}
    table = ScoreTable(variables=names, families=families)
    whole = solve(table, 0.0, max_networks=4096)
    assert whole.stats["phase2"]["method"] == "peeling"
    assert whole.status == "optimal" and whole.complete and len(whole.networks) == 4096
    capped = solve(table, 0.0, max_networks=4095)
    assert capped.status == "network_limit" and len(capped.networks) == 4095
    assert "the best 4095 of" in capped.message and "4096" in capped.message


def test_scores_that_cancel_are_left_to_branch_and_cut_not_the_programme_s_float_sums():
    """Local scores near ±1e15 whose totals are a few nats: the programme's float sums (not fsum) are off by
    ~0.1 there, which picked a non-optimal DAG and peeled credible ones away; such a table goes to
    branch-and-cut (exact sums), and OPT and the credible set equal brute force."""
    import itertools
    import math
    import random

    from bnilp.ilp import solve
    from bnilp.scorefile import ScoreTable
    from tests.oracles import brute_force_credible, brute_force_networks

    for seed in range(12):
        rng = random.Random(seed)
        names = [f"V{i}" for i in range(4)]
        coef, big = ([3, -1, -2, 0] if seed % 2 else [5, -4, 2, -3]), 10.0 ** rng.choice([13, 14, 15])
        families = {v: {frozenset(ps): big * coef[i] + rng.random()
                         for size in range(4) for ps in itertools.combinations([u for u in names if u != v], size)
                         if size == 0 or rng.random() < 0.5} for i, v in enumerate(names)}
        table = ScoreTable(variables=names, families=families)
        opt = brute_force_networks(table)[0][0]
        only = solve(table, 0.0, enumerate_ties=False)
        assert "dp" not in only.stats and only.optimum >= opt - 1e-9 * max(1.0, abs(opt))
        eps = 0.5
        _, want = brute_force_credible(table, eps)
        got = solve(table, eps)
        assert got.complete and len(got.networks) == len(want) and not math.isnan(got.optimum)


# -- a stop that lands at the end of a step keeps what the step found --------------------------------------


def _one_dag_chunks(monkeypatch, pause: float = 0.0) -> list[bool]:
    """Peel one DAG a chunk (``pause`` seconds each); returns the list of ``done`` after each chunk."""
    import bnilp.ilp.dp as dpmod
    import bnilp.ilp.search as searchmod

    log: list[bool] = []

    class OneAtATime(Peeler):
        def __init__(self, data, forward, threshold, chunk=4096):
            super().__init__(data, forward, threshold, chunk=1)

        def next_chunk(self):
            rows = super().next_chunk()
            time.sleep(pause)
            log.append(self.done)
            return rows

    monkeypatch.setattr(dpmod, "Peeler", OneAtATime)
    monkeypatch.setattr(searchmod, "Peeler", OneAtATime)
    return log


def test_bound_mode_keeps_the_optimum_its_peeling_found_when_the_stop_comes_with_its_last_chunk(monkeypatch):
    """Bound mode's OPT is the best DAG peeled above F32(V) − δ; a stop asked once the peeling is over used to
    throw it away (``DPStopped`` with no result)."""
    table = random_table(5, 11, keep=0.5)
    data = _Data(table)
    log = _one_dag_chunks(monkeypatch)
    got = solve_dp(data, bound=True, stop=lambda: bool(log) and log[-1])
    assert log[-1] and got.opt == pytest.approx(dp_optimum(table), abs=1e-9)


def test_bound_mode_stopped_while_peeling_reports_its_best_dag_and_its_bound(monkeypatch):
    """Stopped after its first DAG, bound mode says which DAG it had and F32(V) (≥ OPT), and ``solve`` reports
    that DAG and bound under the time limit — not the sink heuristic's DAG and the sum of the best scores."""
    table = random_table(5, 17, keep=0.5)     # its best parent sets make a cycle: offset > F32(V) ≥ OPT
    data = _Data(table)
    upper = float(solve_dp(data, bound=True).forward[-1])
    log = _one_dag_chunks(monkeypatch)
    with pytest.raises(DPStopped) as stopped:
        solve_dp(data, bound=True, stop=lambda: len(log) == 1)
    assert not log[0] and stopped.value.result is None
    choice, bound = stopped.value.incumbent
    assert bound == upper >= dp_optimum(table) and len(choice) == data.n
    monkeypatch.setattr(ilp.settings, "DP_EXACT_MAX_VARIABLES", 0)
    _one_dag_chunks(monkeypatch, pause=0.3)
    res = solve(table, 0.0, time_limit=0.2)
    assert res.status == "time_limit" and not res.complete
    assert res.bound == pytest.approx(upper) and res.bound < data.offset
    assert res.optimum is not None and res.optimum <= upper


def test_bound_mode_stopped_before_its_peeling_found_a_dag_still_reports_its_bound(monkeypatch):
    """F32(V) is known once the forward pass is over: a stop after a first chunk that peeled no DAG (the
    chunks count steps, not DAGs) dropped it, and ``solve`` reported the sum of the best scores as the bound (a
    review: 95.99 against F32(V) 81.13 on 14 variables) — valid, but looser than what the programme knew."""
    import bnilp.ilp.dp as dpmod
    import bnilp.ilp.search as searchmod

    table = random_table(5, 17, keep=0.5)     # its best parent sets make a cycle: offset > F32(V) ≥ OPT
    data = _Data(table)
    upper = float(solve_dp(data, bound=True).forward[-1])

    class EmptyFirst(Peeler):
        def next_chunk(self):
            if not getattr(self, "started", False):
                self.started = True
                time.sleep(0.3)
                return np.zeros((0, self.n), dtype=np.int64)
            return super().next_chunk()

    monkeypatch.setattr(dpmod, "Peeler", EmptyFirst)
    monkeypatch.setattr(searchmod, "Peeler", EmptyFirst)
    with pytest.raises(DPStopped) as stopped:
        solve_dp(data, bound=True, stop=lambda: True)
    assert stopped.value.result is None and stopped.value.incumbent == (None, upper)
    monkeypatch.setattr(ilp.settings, "DP_EXACT_MAX_VARIABLES", 0)
    res = solve(table, 0.0, time_limit=0.2)
    assert res.status == "time_limit" and not res.complete
    assert res.bound == pytest.approx(upper) and res.bound < data.offset
    assert res.optimum is not None and res.optimum <= upper


def test_peeling_that_finishes_in_the_chunk_where_the_time_runs_out_is_complete(monkeypatch):
    """The clock is asked after a chunk: when that chunk ended the peeling the set is whole, and it used to be
    reported as a time limit (exit 3 on a complete set)."""
    table = random_table(5, 3, keep=0.5)
    full = solve(table, math.log(20))
    monkeypatch.setattr(Peeler, "next_chunk", _slow(Peeler.next_chunk, 0.3))
    res = solve(table, math.log(20), time_limit=0.2)
    assert res.status == "optimal" and res.complete
    assert as_set(x.parents for x in res.networks) == as_set(x.parents for x in full.networks)


def _slow(method, pause: float):
    def slowed(self, *args, **kwargs):
        rows = method(self, *args, **kwargs)
        time.sleep(pause)
        return rows
    return slowed


def test_the_filter_is_kept_when_the_stop_comes_after_its_last_batch(monkeypatch):
    """Exact mode asks ``stop`` between the filter's batches, not after the last one: a finished filter is the
    programme's result, whatever the clock says then (it used to raise ``DPStopped`` with the filter lost)."""
    import bnilp.ilp.dp as dpmod

    monkeypatch.setattr(dpmod, "CHECK_STEPS", 0)
    data = _Data(random_table(6, 4, keep=0.4))
    children: list[int] = []
    inner = dpmod._best_containing

    def counted(n, v, *args):
        inner(n, v, *args)
        children.append(v)

    monkeypatch.setattr(dpmod, "_best_containing", counted)
    got = solve_dp(data, containing=True, stop=lambda: len(children) == data.n, threads=1)
    assert len(children) == data.n and got.best_containing is not None



def test_the_programme_reports_the_share_of_its_passes_done(monkeypatch):
    """``solve_dp(progress=…)`` is given the share of the passes done each time the clock is asked — rising,
    within [0, 1] — and ``solve``'s progress callback gets it as the ``dynamic programme`` phase's ``done``
    (a log file printed nothing while the programme ran); the result is the one without it."""
    import bnilp.ilp.dp as dp_module
    from bnilp.cli.learn import _where

    monkeypatch.setattr(dp_module, "CHECK_STEPS", 1 << 6)
    table = random_table(9, 11, max_size=3)
    shares: list[float] = []
    got = solve_dp(_Data(table), containing=True, progress=shares.append)
    assert len(shares) > 3 and shares == sorted(shares) and 0.0 <= shares[0] and shares[-1] <= 1.0
    assert got.opt == solve_dp(_Data(table), containing=True).opt
    reports: list[dict] = []
    monkeypatch.setattr(ilp.search._Run, "report", lambda self, phase, networks, force=False, **extra:
                        reports.append({"phase": phase, "networks": networks, **extra}))
    solve(table, 0.0, enumerate_ties=False)
    programme = [r for r in reports if r["phase"] == "dynamic programme"]
    assert programme and all(0.0 <= r["done"] <= 1.0 for r in programme)
    assert _where(programme[-1]) == f"dynamic programme: {programme[-1]['done']:.0%} of its passes done"
    assert _where({"phase": "enumerate", "networks": 12}) == "enumerate: 12 networks"


def test_packed_class_words_past_62_variables_group_dags_by_skeleton_and_v_structures():
    """Past 62 variables the class words are packed bits: the skeleton's upper triangle and each child's parents
    that have a non-adjacent co-parent — n(n−1)/2 + n² bits. They held every unshielded triple (n³/2 bits, and an
    n³ temporary a DAG: 206 GiB for 1,024 classes at 1,200 variables, a review). On 70 variables with up to three
    parents each — colliders shielded and not, and the Markov equivalent reorientations of each DAG's class —
    equal words are exactly equal reference keys (skeleton and v-structures, ``mec_key``)."""
    from bnilp.mec import MASK_MAX_VARIABLES, dags_in_mec
    from bnilp.scorefile import ScoreTable

    rng = np.random.default_rng(62)
    n = 70
    assert n > MASK_MAX_VARIABLES
    names = [f"V{i}" for i in range(n)]
    nets = []
    for _ in range(40):
        order = rng.permutation(n)
        parents = {v: frozenset() for v in names}
        for pos in range(1, n):
            child = names[order[pos]]
            window = order[max(0, pos - 4):pos]         # near in the order: shielded and unshielded colliders
            k = int(rng.integers(0, min(3, len(window)) + 1))
            parents[child] = frozenset(names[j] for j in rng.choice(window, size=k, replace=False))
        members = list(itertools.islice(dags_in_mec(parents), 6))
        nets += [parents] + members
    families = {v: {} for v in names}
    for p in nets:
        for v in names:
            families[v][p[v]] = -float(len(p[v]))
    data = _Data(ScoreTable(variables=names, families=families))
    rows = _choice_rows(data, nets)
    words = data.class_words(rows)
    assert words.shape[1] == (n * (n - 1) // 2 + n * n + 7) // 8
    reference = [mec_key(p) for p in nets]
    by_key: dict = {}
    by_words: dict = {}
    assert [by_key.setdefault(r, len(by_key)) for r in reference] == \
        [by_words.setdefault(w.tobytes(), len(by_words)) for w in words]
    assert 40 <= len(by_key) < len(nets)                # classes of several members, and several classes


def test_the_pair_rows_are_built_for_exactly_the_pairs_whose_cluster_has_both_children():
    """The model's 2-cluster rows: every pair was tried (O(n²·K·n): 20 of 22 s to build 1,200 variables); now only
    the pairs each of which holds the other among its candidate parents, in the same order — the pairs the old
    test (:meth:`_Data.cluster_families` has both children) accepted."""
    from bnilp.ilp.model import _mutual_pairs

    for seed in range(12):
        data = _Data(random_table(int(3 + seed % 6), 500 + seed, keep=0.3 + 0.05 * seed))
        want = []
        pair = np.zeros(data.n, dtype=bool)
        for i in range(data.n):
            for j in range(i + 1, data.n):
                pair[:] = False
                pair[[i, j]] = True
                if len(set(data.child[data.cluster_families(pair)].tolist())) == 2:
                    want.append((i, j))
        assert _mutual_pairs(data) == want


def test_peeling_lists_a_dag_that_scores_exactly_the_threshold():
    """:class:`Peeler` lists every DAG with score ≥ its threshold: with integer scores (exact sums) and the
    threshold exactly OPT, the optimum is listed (a mutation test: ``<=`` for ``<`` in its family bound dropped it,
    and no test noticed, since the pipeline always passes a threshold below OPT − ε by a margin)."""
    from bnilp.scorefile import ScoreTable

    families = {"a": {frozenset(): -10.0, frozenset({"b"}): -8.0, frozenset({"c"}): -9.0},
                "b": {frozenset(): -10.0, frozenset({"a"}): -9.0},
                "c": {frozenset(): -4.0, frozenset({"a", "b"}): -3.0}}
    table = ScoreTable(["a", "b", "c"], families, {})
    data = _Data(table)
    opt, credible = brute_force_credible(table, 0.0)
    peeler = Peeler(data, solve_dp(data, containing=True).forward, opt)
    rows = []
    while not peeler.done:
        rows += [tuple(sorted(int(k) for k in r)) for r in peeler.next_chunk()]
    assert len(credible) == 1 and len(rows) == 1 and data.exact(rows[0]) == opt == -21.0
