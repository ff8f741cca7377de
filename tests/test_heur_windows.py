"""Window search of the sink heuristic (bnilp.ilp.heur_windows) against brute force and the programme."""

from __future__ import annotations

import itertools
import math
import random
from types import SimpleNamespace

import numpy as np
import pytest

from bnilp import ilp
from bnilp.ilp import heur_sinks
from bnilp.ilp.families import _Data
from bnilp.ilp.heur_sinks import _SinkHeur
from bnilp.ilp.heur_windows import MAX_WINDOW, _block_dp, window_search, window_starts
from bnilp.ilp.model import _new_stats
from tests.oracles import dp_optimum, is_acyclic
from tests.test_heur_orders import _order_score, _parents, _random_dag_choice
from tests.test_ilp import random_table


def _prefix_mask(order: list[int]) -> np.uint64:
    return np.uint64(sum(1 << v for v in order))


@pytest.mark.parametrize("seed", range(30))
def test_a_window_is_the_best_reordering_of_its_block(seed):
    """For a random order and a window of 2–5 consecutive variables, the recursion's value plus the other
    variables' shares is the best order score over all k! re-orderings of the block (brute force), and the
    block order it returns attains it."""
    rng = random.Random(seed)
    n = 4 + seed % 4
    data = _Data(random_table(n, 900 + seed, keep=0.6))
    usable = np.array([rng.random() < 0.8 or not data.sets[k] for k in range(data.K)])
    key = np.where(usable, data.score, -np.inf)
    order = list(range(n))
    rng.shuffle(order)
    k = rng.randint(2, min(5, n))
    a = rng.randint(0, n - k)
    block = order[a:a + k]
    value, best_block = _block_dp(np.asarray(block, dtype=np.int64), _prefix_mask(order[:a]),
                                  np.asarray(data.start, dtype=np.int64), np.asarray(data.pmask, dtype=np.uint64),
                                  key)
    brute = max(_order_score(data, order[:a] + list(p) + order[a + k:], usable)
                for p in itertools.permutations(block))
    got = _order_score(data, order[:a] + [int(u) for u in best_block] + order[a + k:], usable)
    assert sorted(int(u) for u in best_block) == sorted(block)
    assert got == pytest.approx(brute, abs=1e-9)
    rest = _order_score(data, order, usable) - _block_share(data, order, a, k, usable)
    if math.isfinite(brute):
        assert value + rest == pytest.approx(brute, abs=1e-9)


def _block_share(data: _Data, order: list[int], a: int, k: int, usable: np.ndarray) -> float:
    """The block's members' share of the order's score (brute force)."""
    before = set(order[:a])
    total = 0.0
    for v in order[a:a + k]:
        total += max((data.score[f] for f in range(data.start[v], data.start[v + 1])
                      if usable[f] and set(np.flatnonzero(data.pbool[f]).tolist()) <= before), default=-math.inf)
        before.add(v)
    return total


@pytest.mark.parametrize("seed", range(30))
def test_window_search_returns_a_dag_never_worse_and_window_optimal(seed):
    """From a random DAG the search returns a DAG of usable families scoring at least as much; when it moved,
    the DAG is the best consistent with its final order, and no window of that order (the sweep's windows)
    has a better re-ordering (brute force over the block's permutations)."""
    rng = random.Random(seed)
    n = 4 + seed % 5
    data = _Data(random_table(n, 1300 + seed, keep=0.5))
    usable = np.array([rng.random() < 0.8 or not data.sets[k] for k in range(data.K)])
    start = _random_dag_choice(data, rng, usable)
    assert start is not None
    k = 2 + seed % 3
    out, order = window_search(data, start, k, usable)
    assert all(data.child[f] == v and usable[f] for v, f in enumerate(out))
    assert is_acyclic(_parents(data, out))
    s_in, s_out = (math.fsum(data.score[f] for f in c) for c in (start, out))
    assert s_out >= s_in
    if order is not None:
        assert s_out > s_in
        assert s_out == pytest.approx(_order_score(data, order, usable))
        for a in window_starts(n, k):
            block = order[a:a + k]
            for p in itertools.permutations(block):
                assert _order_score(data, order[:a] + list(p) + order[a + k:], usable) <= s_out + 1e-6


@pytest.mark.parametrize("seed", range(12))
def test_one_window_over_all_variables_is_the_programme(seed):
    """With k = n the one window is the programme over all orders: from any DAG it returns OPT (the
    dynamic-programming oracle), on random tables of 3–10 variables."""
    rng = random.Random(seed)
    n = 3 + seed % 8
    table = random_table(n, 1700 + seed, keep=0.4, max_size=3)
    data = _Data(table)
    usable = np.ones(data.K, dtype=bool)
    start = _random_dag_choice(data, rng, usable)
    assert start is not None
    out, _ = window_search(data, start, n)
    assert math.fsum(data.score[f] for f in out) == pytest.approx(dp_optimum(table), abs=1e-9)
    assert is_acyclic(_parents(data, out))


def test_a_window_larger_than_max_window_is_refused_by_name():
    """k above MAX_WINDOW (its tables would take 2^k entries) is a ValueError naming k, before any work."""
    data = _Data(random_table(4, 3, keep=1.0))
    choice = tuple(int(data.start[v]) for v in range(4))
    with pytest.raises(ValueError, match="k = 27.*MAX_WINDOW"):
        window_search(data, choice, MAX_WINDOW + 1)
    assert window_search(data, choice, MAX_WINDOW)[0] is not None


def test_window_starts_cover_the_order_with_half_overlaps():
    """Windows of k start every ⌈k/2⌉ positions, the last ends at the order's end; one window when k ≥ n."""
    assert window_starts(10, 20) == [0]
    assert window_starts(10, 4) == [0, 2, 4, 6]
    assert window_starts(11, 4) == [0, 2, 4, 6, 7]
    assert window_starts(36, 20) == [0, 10, 16]
    for n, k in itertools.product(range(2, 30), range(2, 25)):
        starts = window_starts(n, k)
        covered = set().union(*(range(a, min(a + k, n)) for a in starts))
        assert covered == set(range(n)) and starts[-1] + min(k, n) == n


def test_branch_and_cut_with_window_search_stays_exact(monkeypatch):
    """Phase 1 by branch-and-cut (programme off) with window search on every rounding from the start
    (windows of 4): OPT equals the programme's on random tables of 8–11 variables, and the search ran and
    improved a rounding SCIP then took as its incumbent on some of them."""
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    monkeypatch.setattr(ilp.settings, "WINDOW_SEARCH", True)
    monkeypatch.setattr(ilp.settings, "WINDOW_SEARCH_MIN_VARIABLES", 0)
    monkeypatch.setattr(ilp.settings, "WINDOW_SEARCH_AFTER", 0.0)
    monkeypatch.setattr(ilp.settings, "WINDOW_SEARCH_SHARE", 1.0)
    monkeypatch.setattr(ilp.settings, "WINDOW_SEARCH_SIZE", 4)
    improved = 0
    for n, seed in itertools.product(range(8, 12), range(4)):
        table = random_table(n, 4200 + seed, keep=0.6, max_size=3)
        res = ilp.solve(table, 0.0, enumerate_ties=False)
        assert res.status == "optimal"
        assert res.optimum == pytest.approx(dp_optimum(table), abs=1e-9)
        assert is_acyclic(res.networks[0].parents)
        stats1 = res.stats["phase1"]
        assert stats1["window_search_calls"] >= stats1["window_search_improved"] >= 0
        assert stats1["window_search_seconds"] >= 0.0 and stats1["window_search_misses"] >= 0
        improved += stats1["window_search_improved"]
    assert improved >= 1


def test_window_search_time_share_shrinks_with_each_search_that_missed(monkeypatch):
    """The plugin runs window search on a new rounding after WINDOW_SEARCH_AFTER seconds, from
    WINDOW_SEARCH_MIN_VARIABLES variables, while its seconds stay within WINDOW_SEARCH_SHARE of the phase's
    divided by 1 + the searches that did not beat the incumbent (10 s in, 1 s spent, share 0.2: allowed after
    0 or 1 misses, not after 2); never twice on one rounding."""
    monkeypatch.setattr(ilp.settings, "WINDOW_SEARCH", True)
    monkeypatch.setattr(ilp.settings, "WINDOW_SEARCH_MIN_VARIABLES", 23)
    monkeypatch.setattr(ilp.settings, "WINDOW_SEARCH_AFTER", 5.0)
    monkeypatch.setattr(ilp.settings, "WINDOW_SEARCH_SHARE", 0.2)
    now = 1000.0          # the plugin's clock stands still: a stall between two lines moves nothing
    monkeypatch.setattr(heur_sinks, "time", SimpleNamespace(perf_counter=lambda: now))
    stats = _new_stats()
    heur = _SinkHeur(SimpleNamespace(data=SimpleNamespace(n=23)), stats, lambda: None)
    heur.t_start = now - 10.0
    stats["window_search_seconds"] = 1.0
    assert heur._window_allowed((1, 2, 3))
    stats["window_search_misses"] = 1
    assert heur._window_allowed((1, 2, 3))
    stats["window_search_misses"] = 2
    assert not heur._window_allowed((1, 2, 3))
    stats["window_search_misses"] = 0
    heur.windowed.add((1, 2, 3))
    assert not heur._window_allowed((1, 2, 3))
    heur.hdlr.data.n = 22
    assert not heur._window_allowed((4, 5, 6))
    heur.hdlr.data.n = 23
    heur.t_start = now - 4.0
    stats["window_search_seconds"] = 0.0
    assert not heur._window_allowed((4, 5, 6))
    monkeypatch.setattr(ilp.settings, "WINDOW_SEARCH", False)
    heur.t_start = now - 10.0
    assert not heur._window_allowed((4, 5, 6))
