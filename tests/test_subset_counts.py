"""Counts per variable subset (issue 12): each subset counted once is every family's exact statistic, the
plan holds every family the walk asks for, and the walk keeps the same sets with the same scores."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.special import gammaln

import bnilp.lattice as lattice
from bnilp.data import from_dataframe
from bnilp.errors import InputError
from bnilp.parentsets import score_parent_sets
from bnilp.scores import make_score
from bnilp.scores.subsets import assemble, count_subsets, split_prefixes, subset_task
from tests.conftest import random_discrete_frame

EPSILONS = [0.0, math.log(3), math.log(150)]


def discrete(seed: int, n: int, N: int, max_arity: int = 3):
    frame = random_discrete_frame(seed, n=n, N=N, max_arity=max_arity)
    return from_dataframe(frame, discrete=list(frame.columns))


def direct_sums(codes: np.ndarray, arities: np.ndarray, subset: tuple[int, ...], ess: float):
    """E = Σ n ln n, K = observed cells, G = Σ [lnΓ(α/Q + n) − lnΓ(α/Q)] of ``subset`` from the rows."""
    if subset:
        _, counts = np.unique(codes[:, list(subset)], axis=0, return_counts=True)
    else:
        counts = np.array([codes.shape[0]])
    a = ess / float(np.prod(arities[list(subset)])) if subset else ess
    return (float((counts * np.log(counts)).sum()), counts.size,
            float((gammaln(a + counts) - gammaln(a)).sum()))


@pytest.mark.parametrize("seed,n,N,max_arity", [(1, 5, 40, 3), (2, 6, 300, 4), (3, 4, 1000, 2)])
def test_every_subset_count_equals_counting_its_rows(seed: int, n: int, N: int, max_arity: int) -> None:
    """E, K and G of every subset (repeated rows weighted) equal the sums over that subset's own cells."""
    score = make_score("bdeu", discrete(seed, n, N, max_arity), ess=2.0)
    ctx = score.count_context()
    assert ctx.n_rows < N                    # distinct rows with weights
    masks, e, g, k = subset_task(ctx, (), n, math.inf, 2.0)
    assert sorted(masks.tolist()) == list(range(1 << n))
    codes = np.asarray(score.data.codes)
    arities = np.asarray(score.data.arities)
    for mask, ev, gv, kv in zip(masks.tolist(), e, g, k, strict=True):
        subset = tuple(v for v in range(n) if mask >> v & 1)
        de, dk, dg = direct_sums(codes, arities, subset, 2.0)
        assert (kv, ev, gv) == (dk, pytest.approx(de, rel=1e-12, abs=1e-9), pytest.approx(dg, rel=1e-12, abs=1e-9))


@pytest.mark.parametrize("parts", [1, 3, 17])
def test_a_split_build_counts_each_subset_once_with_the_same_values(parts: int) -> None:
    """The tasks of :func:`split_prefixes` partition the subsets (with a size and a Q bound) and give
    bit-identical values to one depth-first walk: a table does not depend on the parallelism."""
    score = make_score("bic", discrete(5, 8, 500, 4))
    ctx = score.count_context()
    arities = np.asarray(score.data.arities)
    for max_size, q_max in [(8, math.inf), (4, math.inf), (8, 60.0), (3, 20.0)]:
        whole = assemble([subset_task(ctx, (), max_size, q_max, None)], 0.0)
        tasks = split_prefixes(arities, max_size, q_max, parts)
        pieces = [subset_task(ctx, t, max_size, q_max, None) for t in tasks]
        masks = np.concatenate([p[0] for p in pieces])
        assert masks.size == np.unique(masks).size == count_subsets(arities, max_size, q_max) == whole.counted
        expected = [m for m in range(256) if bin(m).count("1") <= max_size
                    and np.prod(arities[[v for v in range(8) if m >> v & 1]]) <= q_max]
        assert sorted(masks.tolist()) == expected
        split = assemble(pieces, 0.0)
        assert np.array_equal(split.e, whole.e) and np.array_equal(split.k, whole.k)


@pytest.mark.parametrize("score_name", ["bic", "bdeu"])
@pytest.mark.parametrize("seed,n,N", [(1, 5, 30), (2, 6, 200), (3, 6, 2000), (4, 7, 60), (6, 8, 5000)])
def test_subset_counts_keep_the_same_sets_as_family_counts(monkeypatch, score_name: str, seed: int, n: int,
                                                            N: int) -> None:
    """The oracle is the walk with its own family counts: same kept sets, bit-identical scores, for every
    ε, with and without a palim; and the planned table holds every family the walk asks for (the
    walk's own counting is never called), which checks the R2-derived bound Q_T ≤ max q_i·r_i."""
    data = discrete(seed, n, N)
    for eps, palim in itertools.product(EPSILONS, [None, 2]):
        ref = score_parent_sets(make_score(score_name, data), epsilon=eps, palim=palim, counts="families")
        with monkeypatch.context() as m:
            def never(*args, **kwargs):
                raise AssertionError("a family was not in the subset table")
            m.setattr(lattice, "family_counts", never)
            got = score_parent_sets(make_score(score_name, data), epsilon=eps, palim=palim, counts="subsets")
        assert got.families == ref.families, (eps, palim)
        assert got.meta["counts"]["mode"] == "subsets" and ref.meta["counts"]["mode"] == "families"
        if score_name == "bic":    # R2 bounds Q: fewer subsets than all of them on the larger samples
            assert got.meta["counts"]["q_max"] is not None


def test_subset_counts_with_required_and_forbidden_parents() -> None:
    """Knowledge shapes the walk (fixed parents, banned candidates); the table path keeps the same sets."""
    data = discrete(7, 6, 400)
    names = data.names
    knowledge = {"required": [[names[0], names[2]]], "forbidden": [[names[3], names[1]]]}
    ref = score_parent_sets(make_score("bic", data), epsilon=math.log(20), knowledge=knowledge, counts="families")
    got = score_parent_sets(make_score("bic", data), epsilon=math.log(20), knowledge=knowledge, counts="subsets")
    assert got.families == ref.families


def test_bign_shape_plan_is_bounded_by_the_penalty() -> None:
    """On a larger sample R2 bounds Q_T, so the table holds far fewer than all 2^n subsets."""
    data = discrete(8, 12, 20_000, 4)
    table = score_parent_sets(make_score("bic", data), epsilon=math.log(20), counts="subsets")
    ref = score_parent_sets(make_score("bic", data), epsilon=math.log(20), counts="families")
    assert table.families == ref.families
    assert 0 < table.meta["counts"]["subsets"] < 1 << 12


def test_counts_mode_is_checked_and_reported() -> None:
    data = discrete(9, 5, 100)
    with pytest.raises(InputError, match=r"counts \(--counts\) must be one of"):
        score_parent_sets(make_score("bic", data), counts="rows")
    families = score_parent_sets(make_score("bic", data), epsilon=math.log(3), counts="families")
    assert families.meta["counts"] == {"mode": "families", "reason": "--counts families"}
    # auto: BDeu always; BIC from SUBSET_TABLE_MIN_ROWS distinct rows on (below, counting is as cheap) and
    # up to SUBSET_TABLE_MAX_BIC_VARIABLES variables
    auto = score_parent_sets(make_score("bdeu", data), epsilon=math.log(3))
    assert auto.meta["counts"]["mode"] == "subsets" and auto.meta["counts"]["subsets"] > 0
    few = score_parent_sets(make_score("bic", data), epsilon=math.log(3))
    assert few.meta["counts"] == {"mode": "families", "reason": "BIC on fewer than 1,000 distinct rows"}
    many = discrete(9, 12, 3000, 4)
    assert make_score("bic", many).count_context().n_rows >= lattice.SUBSET_TABLE_MIN_ROWS
    assert score_parent_sets(make_score("bic", many), epsilon=math.log(3)).meta["counts"]["mode"] == "subsets"
    wide = discrete(9, lattice.SUBSET_TABLE_MAX_BIC_VARIABLES + 1, 1500, 2)
    assert make_score("bic", wide).count_context().n_rows >= lattice.SUBSET_TABLE_MIN_ROWS
    assert score_parent_sets(make_score("bic", wide), epsilon=math.log(3), palim=2).meta["counts"] == {
        "mode": "families", "reason": f"BIC on more than {lattice.SUBSET_TABLE_MAX_BIC_VARIABLES} variables"}
    assert score_parent_sets(make_score("bdeu", wide), epsilon=math.log(3), palim=2).meta["counts"]["mode"] \
        == "subsets"


def test_subsets_mode_says_why_it_does_not_apply(monkeypatch) -> None:
    from tests.mixed_helpers import random_mixed

    mixed = random_mixed(np.random.default_rng(1), "dcdc", 100)
    with pytest.raises(InputError, match="not discrete BIC or BDeu"):
        score_parent_sets(make_score("cg", mixed), palim=1, counts="subsets")
    monkeypatch.setattr(lattice, "SUBSET_TABLE_MAX_VARIABLES", 4)
    data = discrete(10, 5, 100)
    with pytest.raises(InputError, match="more than 4 variables"):
        score_parent_sets(make_score("bic", data), counts="subsets")
    auto = score_parent_sets(make_score("bic", data), epsilon=math.log(3))
    assert auto.meta["counts"] == {"mode": "families", "reason": "more than 4 variables"}


@pytest.mark.parametrize("where", ["jobs", "dask"])
def test_a_table_counted_in_parallel_is_the_serial_table(monkeypatch, where: str) -> None:
    """The subset tasks on the loky pool or a local Dask cluster (forced even for a small table) give the
    same score table as counting in one process."""
    if where == "dask":
        pytest.importorskip("distributed")
    monkeypatch.setattr(lattice, "SUBSET_TABLE_PARALLEL_MIN", 0)
    data = discrete(11, 9, 800, 4)
    serial = score_parent_sets(make_score("bdeu", data), epsilon=math.log(20), counts="subsets")
    extra = {"scheduler": "local"} if where == "dask" else {}
    parallel = score_parent_sets(make_score("bdeu", data), epsilon=math.log(20), counts="subsets", n_jobs=2,
                                 **extra)
    assert parallel.families == serial.families
    assert parallel.meta["counts"]["subsets"] == serial.meta["counts"]["subsets"] == 1 << 9
    if where == "dask":
        lattice.stop_local_cluster()


def test_a_sparse_table_serves_wide_data() -> None:
    """The table is keyed by sorted masks, not indexed by 2^n: on 30 variables R2 bounds the subsets
    (|T| and Q_T), and the walk keeps the same sets as with its own counts."""
    data = discrete(13, 30, 300)
    ref = score_parent_sets(make_score("bic", data), epsilon=math.log(20), counts="families")
    got = score_parent_sets(make_score("bic", data), epsilon=math.log(20), counts="subsets")
    assert got.families == ref.families
    assert got.meta["counts"]["max_size"] < 30 and 0 < got.meta["counts"]["subsets"] < 1 << 22


def test_family_lookup_finds_both_subsets_of_every_family_and_the_table_travels_to_workers() -> None:
    """``family_rows`` (one hash probe per subset) finds T₁ = Π ∪ {j} and T₂ = T₁ ∪ {child} at the rows
    of their masks, says None when a subset was not counted, and a pickled table (as the walk's workers
    receive it with the score) drops its index and answers the same after rebuilding it."""
    import pickle

    score = make_score("bic", discrete(7, 7, 400))
    ctx = score.count_context()
    table = assemble([subset_task(ctx, (), 4, math.inf, None)], 0.0)   # every subset of ≤ 4 variables
    bases = np.array([[0, 2], [1, 4], [3, 5]], dtype=np.int16)
    base_of = np.array([0, 0, 1, 2, 2])
    new = np.array([4, 5, 6, 0, 6])
    child = 1
    rows = table.family_rows(bases, base_of, new, child)
    for f, (r1, r2) in enumerate(zip(*rows, strict=True)):
        t1 = sum(1 << v for v in bases[base_of[f]]) | 1 << new[f]
        assert table.masks[r1] == t1 and table.masks[r2] == t1 | 1 << child
    wide = np.array([[0, 2, 3]], dtype=np.int16)            # T₂ of 5 variables was not counted
    assert table.family_rows(wide, np.array([0]), np.array([4]), child) is None
    copy = pickle.loads(pickle.dumps(table))
    assert table._index is not None and copy._index is None
    assert all(np.array_equal(a, b) for a, b in zip(copy.family_rows(bases, base_of, new, child), rows, strict=True))
