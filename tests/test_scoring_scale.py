"""Scoring at scale: the batched lattice walk is the one-family walk, counts are exact, R6 is a true bound,
and the score file does not depend on --jobs or a Dask scheduler."""

from __future__ import annotations

import itertools
import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import bnilp
import bnilp.scores.batch as batch
from bnilp.cli import main
from bnilp.data import from_dataframe, load_data
from bnilp.parentsets import _run_lattice, score_parent_sets, walk_child
from bnilp.scorefile import read_jaakkola
from bnilp.scores import StructurePrior, make_score
from tests import oracles
from tests.conftest import random_discrete_frame
from tests.mixed_helpers import random_mixed

EPSILONS = [0.0, math.log(3), math.log(150)]


def discrete(seed: int, n: int, N: int, max_arity: int = 3):
    frame = random_discrete_frame(seed, n=n, N=N, max_arity=max_arity)
    return from_dataframe(frame, discrete=list(frame.columns))


@pytest.mark.parametrize("counts", ["families", "subsets"])
@pytest.mark.parametrize("score_name", ["bic", "bdeu"])
@pytest.mark.parametrize("seed,n,N", [(1, 5, 30), (2, 6, 200), (3, 6, 2000), (4, 7, 60)])
def test_lattice_walk_keeps_what_the_one_family_walk_keeps(score_name: str, seed: int, n: int, N: int,
                                                           counts: str) -> None:
    """Same kept sets with bit-identical scores, for every rule alone and all together, whether the
    walk counts its families or looks them up in the subset table."""
    score = make_score(score_name, discrete(seed, n, N))
    sound = score.pruning_rules(0)
    for eps in EPSILONS:
        for rules in [*({r} for r in sorted(sound)), set(sound)]:
            fast, _ = _run_lattice(score, list(range(n)), eps, None, frozenset(rules), 1, None, None,
                                   counts=counts)
            for child, (kept, _) in enumerate(fast):
                ref, _ = walk_child(score, child, epsilon=eps, rules=rules)
                names = score.data.names
                assert kept == {frozenset(names[p] for p in ps): s for ps, s in ref.items()}, (eps, rules, child)


@pytest.mark.parametrize("seed,n,N", [(1, 5, 30), (2, 6, 200), (4, 7, 60), (5, 6, 12)])
def test_the_one_family_walk_says_a_palim_cut_only_where_the_lattice_does(seed: int, n: int, N: int) -> None:
    """A palim is a limit (exit 3) only where the walk without it would score more sets: a candidate past the
    palim whose subsets all survived and that the count-free rules let through. The one-family walk (the route
    past 64 variables) said so for any candidate at all, so a palim that R2 made moot still read as a cut; now
    it decides as the lattice does (BIC: R2 is the count-free rule both use)."""
    score = make_score("bic", discrete(seed, n, N))
    for eps in EPSILONS:
        for palim in (1, 2, 3):
            lattice, _ = _run_lattice(score, list(range(n)), eps, palim, None, 1, None, None)
            for child, (_, stats) in enumerate(lattice):
                one = walk_child(score, child, epsilon=eps, palim=palim)[1]
                assert one.palim_reached == stats.palim_reached, (eps, palim, child)


@pytest.mark.parametrize("table", ["dense", "wide-dense", "direct", "hashed"])
@pytest.mark.parametrize("score_name", ["bic", "bdeu"])
def test_batched_counts_equal_one_family_counts(monkeypatch, table: str, score_name: str) -> None:
    """LL, N·H(Π), q⁺, c⁺ and the BDeu score from the compiled batched counts equal the one-family
    counts, with repeated rows (weights), many states (q above the number of rows), whichever table
    counts them: indexed by the key itself ("dense", the default: keys from the base's prefix
    partition and its last parent where they are few, else from the base's own partition, else a
    slot table; "wide-dense": every family from the prefix partition), by a slot per observed key
    indexed directly ("direct") or hashed ("hashed", what many-valued columns get)."""
    if table == "wide-dense":
        monkeypatch.setattr(batch, "DENSE_CELLS_PER_ROW", 10_000)
    elif table != "dense":
        monkeypatch.setattr(batch, "DENSE_CELLS_PER_ROW", 0)
    if table == "hashed":
        monkeypatch.setattr(batch, "DIRECT_KEYS_PER_ROW", 0)
        monkeypatch.setattr(batch, "DIRECT_KEYS_MIN", 0)
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"a": rng.integers(0, 12, 300), "b": rng.integers(0, 2, 300), "c": rng.integers(0, 9, 300),
                          "d": rng.integers(0, 3, 300), "e": rng.integers(0, 2, 300)})
    frame = pd.concat([frame, frame.iloc[:150]])          # repeated rows: counting by weights
    score = make_score(score_name, from_dataframe(frame, discrete=list(frame.columns)))
    ctx = batch.CountContext.from_score(score)
    child = 3
    others = [0, 1, 2, 4]
    for k in range(4):
        bases = [b for b in itertools.combinations(others, k)]
        fams = [(i, j) for i, b in enumerate(bases) for j in others if j not in b and (not b or j > b[-1])]
        base_of = np.array([i for i, _ in fams])
        new = np.array([j for _, j in fams])
        q_all = np.array([float(np.prod([score.arities[p] for p in bases[i] + (j,)])) for i, j in fams])
        got = batch.family_counts(ctx, child, np.array(bases, dtype=np.int64).reshape(len(bases), k), base_of, new,
                                  q_all, 1.0 if score_name == "bdeu" else None)
        for f, (i, j) in enumerate(fams):
            parents = bases[i] + (j,)
            want = oracles.family_counts(score.data.codes, score.arities, child, parents)
            assert got.q_plus[f] == want["q_plus"] and got.c_plus[f] == want["c_plus"]
            assert got.ll[f] == pytest.approx(want["ll"], rel=1e-12, abs=1e-9)
            assert got.nh[f] == pytest.approx(want["nh"], rel=1e-12, abs=1e-9)
            if score_name == "bdeu":
                assert got.bdeu[f] == pytest.approx(want["bdeu"], rel=1e-12)


def test_the_rising_log_table_is_the_log_gamma_difference() -> None:
    """BDeu's per-cell term ln Γ(a + n) − ln Γ(a) = Σ_{i<n} ln(a + i): from the running table for counts up to
    LOG_RISING_TABLE (filled on demand, in any order of requests, reused while a is the same), by ln Γ
    beyond it and for a non-integer count; a count of 0 gives 0 (an empty cell)."""
    from scipy.special import gammaln

    for a in (1e-9, 1 / 96, 0.5, 3.0):
        table = np.zeros(batch.LOG_RISING_TABLE + 1)
        filled = 0
        for n in (0, 5, 1, 64, 2, 65, 300, 7.5, 40):
            got, filled = batch.log_rising(float(n), a, table, filled)
            assert got == pytest.approx(gammaln(a + n) - gammaln(a), rel=1e-12, abs=1e-12), (a, n)
        assert filled == batch.LOG_RISING_TABLE


@pytest.mark.parametrize("score_name", ["bic", "bdeu"])
def test_every_counting_branch_equals_one_family_counts(monkeypatch, score_name: str) -> None:
    """Blocks of all bases of size 1–4 in lexicographic order (consecutive bases share prefixes of
    1–3 parents), every other column as the new parent, at thresholds that send families down each
    branch of the kernel — keys from the prefix partition and the last parent, from the base's own
    partition (dense), or a slot table — mixed within one base: every branch is taken, and every
    family's statistics equal the one-family counts."""
    rng = np.random.default_rng(11)
    arities = [2, 3, 2, 4, 2, 3, 3]
    frame = pd.DataFrame({f"v{i}": rng.integers(0, r, 220) for i, r in enumerate(arities)})
    frame["v5"] = (frame["v0"] + frame["v1"]) % 3     # a parent its prefix determines: q⁺_Π < q⁺_Π′·r_l
    frame = pd.concat([frame, frame.iloc[:60]])          # repeated rows: counting by weights
    score = make_score(score_name, from_dataframe(frame, discrete=list(frame.columns)))
    ctx = batch.CountContext.from_score(score)
    child, others = 6, [0, 1, 2, 3, 4, 5]

    def q_plus(cols: tuple[int, ...]) -> int:   # observed configurations of ``cols`` among the rows
        return len({tuple(r) for r in ctx.columns[list(cols)].T}) if cols else 1

    taken: set[str] = set()
    for k in (1, 2, 3, 4):
        bases = sorted(itertools.combinations(others, k))
        fams = [(i, j) for i, b in enumerate(bases) for j in others if j not in b]
        base_of = np.array([i for i, _ in fams])
        new = np.array([j for _, j in fams])
        q_all = np.array([float(np.prod([score.arities[p] for p in bases[i] + (j,)])) for i, j in fams])
        for per_row in (0.05, 0.1, 0.3, 1.0):
            monkeypatch.setattr(batch, "DENSE_CELLS_PER_ROW", per_row)
            dense_keys = int(per_row * ctx.n_rows)
            for i, j in fams:
                b = bases[i]
                prefix = q_plus(b[:-1]) * score.arities[b[-1]] * score.arities[j]
                own = q_plus(b) * score.arities[j]
                taken.add("prefix" if prefix <= dense_keys else "own" if own <= dense_keys else "slot")
            got = batch.family_counts(ctx, child, np.array(bases, dtype=np.int64), base_of, new, q_all,
                                      1.0 if score_name == "bdeu" else None)
            for f, (i, j) in enumerate(fams):
                want = oracles.family_counts(score.data.codes, score.arities, child, tuple(sorted(bases[i] + (j,))))
                assert got.q_plus[f] == want["q_plus"] and got.c_plus[f] == want["c_plus"], (k, per_row, f)
                assert got.ll[f] == pytest.approx(want["ll"], rel=1e-12, abs=1e-9)
                assert got.nh[f] == pytest.approx(want["nh"], rel=1e-12, abs=1e-9)
                if score_name == "bdeu":
                    assert got.bdeu[f] == pytest.approx(want["bdeu"], rel=1e-12)
    assert taken == {"prefix", "own", "slot"}


@pytest.mark.parametrize("score_name", ["bic", "bdeu"])
def test_a_child_of_many_states_is_counted_cell_by_cell_with_the_same_statistics(monkeypatch, score_name) -> None:
    """A child with more than :data:`WIDE_CHILD_STATES` states (here 150 codes) is counted by its observed cells
    (:func:`_wide_child_sums`); forced on every child (the threshold at 0), on families down every branch of the
    kernel (prefix keys, the base's own partition, the slot table), each family's statistics equal the one-family
    counts of the oracle."""
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({f"v{i}": rng.integers(0, r, 300) for i, r in enumerate([2, 3, 4, 2, 5])})
    frame["v5"] = (frame["v0"] * 40 + rng.integers(0, 40, 300)) % 150      # many states, some shared
    frame = pd.concat([frame, frame.iloc[:50]])                                # repeated rows: weights
    score = make_score(score_name, from_dataframe(frame, discrete=list(frame.columns)))
    ctx = batch.CountContext.from_score(score)
    assert score.arities[5] > batch.WIDE_CHILD_STATES
    for threshold, children in ((batch.WIDE_CHILD_STATES, [5]), (0, [5, 2, 0])):
        monkeypatch.setattr(batch, "WIDE_CHILD_STATES", threshold)
        for child in children:
            others = [v for v in range(6) if v != child]
            for k in (1, 2, 3):
                bases = sorted(itertools.combinations(others, k))
                fams = [(i, j) for i, b in enumerate(bases) for j in others if j not in b]
                base_of, new = np.array([i for i, _ in fams]), np.array([j for _, j in fams])
                q_all = np.array([float(np.prod([score.arities[p] for p in bases[i] + (j,)])) for i, j in fams])
                for per_row in (0.1, 1.0):
                    monkeypatch.setattr(batch, "DENSE_CELLS_PER_ROW", per_row)
                    got = batch.family_counts(ctx, child, np.array(bases, dtype=np.int64), base_of, new, q_all,
                                              1.0 if score_name == "bdeu" else None)
                    for f, (i, j) in enumerate(fams):
                        want = oracles.family_counts(score.data.codes, score.arities, child,
                                                     tuple(sorted(bases[i] + (j,))))
                        assert (got.q_plus[f], got.c_plus[f]) == (want["q_plus"], want["c_plus"]), (child, k, f)
                        assert got.ll[f] == pytest.approx(want["ll"], rel=1e-12, abs=1e-9)
                        assert got.nh[f] == pytest.approx(want["nh"], rel=1e-12, abs=1e-9)
                        if score_name == "bdeu":
                            assert got.bdeu[f] == pytest.approx(want["bdeu"], rel=1e-12)


@pytest.mark.slow     # 4.5-8 s: the quick suite keeps under the README's ~15 minutes
def test_a_child_of_50000_codes_over_100000_rows_scores_in_the_memory_of_its_rows(tmp_path) -> None:
    """The counts of a family were laid out configurations × child states: 100,000 rows × 50,000 codes asked for
    40 GB and scoring stopped ("an allocation failed", exit 3; a review). Counted by observed cells, the command
    scores both families and its values are the closed forms from pandas' group counts (BIC: LL − ½ ln N
    (r − 1) q; BDeu: Heckerman et al. 1995 eq. 28, α = 1), within a resident memory of a few hundred MB."""
    import resource
    import subprocess
    import sys

    from scipy.special import gammaln

    rng = np.random.default_rng(3)
    K, N = 50_000, 100_000
    frame = pd.DataFrame({c: rng.permutation(np.concatenate([np.arange(K), rng.integers(0, K, N - K)]))
                          for c in "ab"})
    data = tmp_path / "codes.csv"
    frame.to_csv(data, index=False)
    cells = frame.groupby(["a", "b"]).size().to_numpy(float)
    configs = frame.groupby("a").size().to_numpy(float)
    ll = (cells * np.log(cells)).sum() - (configs * np.log(configs)).sum()
    a_j = 1.0 / K
    want = {"bic": ll - 0.5 * math.log(N) * (K - 1) * K,
            "bdeu": (gammaln(a_j / K + cells) - gammaln(a_j / K)).sum() - (gammaln(a_j + configs) - gammaln(a_j)).sum()}
    for score_name, value in want.items():
        out = tmp_path / f"{score_name}.scores"
        done = subprocess.run([sys.executable, "-m", "bnilp", "score", str(data), "-q", "--discrete", "all",
                               "--score", score_name, "--no-prune", "-o", str(out)],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        lines = out.read_text().splitlines()
        b_given_a = float(lines[lines.index("b 2") + 2].split()[0])
        assert b_given_a == pytest.approx(value, rel=1e-12)
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss < 2 * 2**20      # KB: under 2 GB (was 40 GB)


@pytest.mark.parametrize("seed,N,ess", [(1, 20, 1.0), (2, 100, 1.0), (3, 400, 10.0), (4, 50, 0.1)])
def test_r6_cell_bound_holds_for_every_superset(seed: int, N: int, ess: float) -> None:
    """The bound behind R6: s_BDeu(Π″) ≤ −c⁺(Π′)·ln r_i for every Π′ ⊆ Π″ (brute force over all pairs)."""
    from bnilp.scores.discrete import BDeu

    score = BDeu(discrete(seed, 5, N), ess=ess)
    for child in range(5):
        others = [j for j in range(5) if j != child]
        subsets = [s for k in range(5) for s in itertools.combinations(others, k)]
        cells = {s: int(np.count_nonzero(score.joint_counts(child, score.config(s)))) for s in subsets}
        r = score.arities[child]
        for big in subsets:
            value = score.local(child, big)
            for small in subsets:
                if set(small) <= set(big):
                    assert value <= -cells[small] * math.log(r) + 1e-9


def test_r6_prunes_more_than_r5_alone() -> None:
    """R6 implies R5 (c⁺ ≥ q⁺): on small-N BDeu it stops the walk earlier, keeping the same sets."""
    score = make_score("bdeu", discrete(9, 7, 40))
    r5 = score_parent_sets(score, epsilon=math.log(3), rules={"R1", "R5"})
    r6 = score_parent_sets(score, epsilon=math.log(3), rules={"R1", "R5", "R6"})
    assert r6.families == r5.families
    assert r6.meta["scored"] < r5.meta["scored"] and r6.meta["pruned"]["R6"] > 0


# ---------------------------------------------------------------------------------------------- parallelism


@pytest.fixture
def discrete_csv(tmp_path):
    path = tmp_path / "discrete.csv"
    random_discrete_frame(21, n=7, N=600).to_csv(path, index=False)
    return path


@pytest.fixture
def mixed_csv(tmp_path):
    data = random_mixed(np.random.default_rng(3), "dcdcdc", 300)
    frame = pd.DataFrame({nm: (data.codes[:, j] if data.kinds[j] == "discrete" else data.values[:, j])
                          for j, nm in enumerate(data.names)})
    path = tmp_path / "mixed.csv"
    frame.to_csv(path, index=False)
    return path


CASES = {"discrete": lambda d, m: (d, ["--bf", "20", "--counts", "families"]),
         "table": lambda d, m: (d, ["--bf", "20", "--counts", "subsets"]),
         "mixed": lambda d, m: (m, ["--score", "cg", "--palim", "2"]),          # CG: ℓ of the sets computed once
         "mixed-mvp": lambda d, m: (m, ["--score", "mvp", "--palim", "2"]),     # MVP: its family table
         "mixed-mml": lambda d, m: (m, ["--score", "mml", "--palim", "2"]),     # MML: its family table too
         "mixed-cgd": lambda d, m: (m, ["--score", "cgd", "--palim", "3"])}     # discrete children on BIC's walk


def _score_file(runner: CliRunner, tmp_path, data, name: str, *extra: str) -> bytes:
    out = tmp_path / f"{name}.scores"
    res = runner.invoke(main, ["score", str(data), "-o", str(out), "-q", *extra], catch_exceptions=False)
    cut = json.loads(out.with_name(out.name + ".json").read_text())["palim_reached"]
    assert res.exit_code == (3 if cut else 0), res.output      # a palim that cut the walk exits 3
    return out.read_bytes()


@pytest.mark.parametrize("kind", list(CASES))
def test_jobs_2_gives_the_same_score_file(runner, tmp_path, discrete_csv, mixed_csv, kind: str) -> None:
    data, extra = CASES[kind](discrete_csv, mixed_csv)
    one = _score_file(runner, tmp_path, data, "one", *extra)
    two = _score_file(runner, tmp_path, data, "two", *extra, "--jobs", "2")
    assert one == two and len(one.splitlines()) > 10


def test_a_later_run_reuses_the_running_pool_with_the_new_data(runner, tmp_path, discrete_csv, mixed_csv) -> None:
    """The pool outlives a run (the command line starts it before reading the data); a later run in the
    same process uses the same workers, which read the new run's score, not the previous one's."""
    import bnilp.lattice as lattice

    assert lattice.start_pool(2) is lattice.start_pool(2)
    for kind in ("discrete", "mixed", "discrete"):
        data, extra = CASES[kind](discrete_csv, mixed_csv)
        one = _score_file(runner, tmp_path, data, "one", *extra)
        two = _score_file(runner, tmp_path, data, "two", *extra, "--jobs", "2")
        assert one == two, kind


@pytest.mark.parametrize("kind", list(CASES))
def test_dask_local_cluster_gives_the_same_score_file(runner, tmp_path, discrete_csv, mixed_csv, kind: str) -> None:
    pytest.importorskip("distributed")
    data, extra = CASES[kind](discrete_csv, mixed_csv)
    one = _score_file(runner, tmp_path, data, "one", *extra)
    dask = _score_file(runner, tmp_path, data, "dask", *extra, "--scheduler", "local", "--jobs", "2")
    assert one == dask


@pytest.mark.slow     # 4.5-8 s: the quick suite keeps under the README's ~15 minutes
def test_cg_files_do_not_follow_the_blas_threads_of_the_process_that_scores(tmp_path) -> None:
    """A local cluster's worker processes run BLAS on one thread (Dask's nanny sets it) while the coordinator
    may run it on several: CG's single-cell scatter was a matrix product, summed in an order that follows the
    threads, so on continuous columns (every set one cell) ``--scheduler local`` wrote other last digits than
    ``--jobs 1`` (a review's find; 30,000 rows). The cells' sums are ``np.bincount``'s, one order everywhere."""
    pytest.importorskip("distributed")
    import subprocess
    import sys

    rng = np.random.default_rng(0)
    x = rng.normal(size=(30_000, 5))
    x[:, 1] += x[:, 0]
    x[:, 2] += 0.5 * x[:, 1]
    x[:, 4] += x[:, 3]
    data = tmp_path / "c5.csv"
    pd.DataFrame(x, columns=[f"c{j}" for j in range(5)]).to_csv(data, index=False)
    # the coordinator's BLAS on every core (the nanny gives its workers one thread; with one core both have one)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                            "MKL_NUM_THREADS")}
    files = []
    for name, extra in (("one", ["--jobs", "1"]), ("dask", ["--scheduler", "local", "--jobs", "2"])):
        out = tmp_path / f"{name}.scores"
        done = subprocess.run([sys.executable, "-m", "bnilp", "score", str(data), "--score", "cg", "--bf", "20", "-q",
                               "-o", str(out), *extra], capture_output=True, text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stderr
        files.append(out.read_bytes())
    assert files[0] == files[1]


def test_compiled_scores_count_on_threads_and_python_scores_on_processes() -> None:
    """``--jobs`` > 1: BIC and BDeu (counted in compiled code that releases the GIL) on threads of this
    process, a score evaluated in Python (CG on mixed data) on the loky processes; both with the
    coordinator stealing queued blocks, and the same table as one process."""
    import bnilp.lattice as lattice

    data = discrete(5, 7, 300)
    mixed = random_mixed(np.random.default_rng(3), "dcdcd", 200)
    for score, kind in ((make_score("bic", data), lattice.ThreadExecutor),
                        (make_score("bdeu", data), lattice.ThreadExecutor),
                        (make_score("cg", mixed), lattice.LokyExecutor)):
        executor = lattice.make_executor(score, 2, None)
        try:
            assert type(executor) is kind and executor.slots == 2
        finally:
            executor.close()
        one = score_parent_sets(score, epsilon=math.log(20), palim=2)
        two = score_parent_sets(score, epsilon=math.log(20), palim=2, n_jobs=2)
        assert one.families == two.families


@pytest.mark.parametrize("name", ["cg", "cgd"])
def test_a_parallel_set_function_walk_computes_each_set_once_exactly_those_the_walks_ask_for(name: str) -> None:
    """CG's families are differences of one set function ℓ, shared between children, so a parallel walk first
    computes ℓ of the sets once across the processes (:func:`bnilp.lattice.plan_set_table`,
    :func:`~bnilp.lattice.build_set_table`), then walks on look-ups. The table holds exactly the sets a
    one-process walk asks ℓ of (recorded; CGd's discrete children ask none) — without a palim, with one, with
    required and forbidden arrows, and in the passes of a deepening shallower than a child's required parents
    (whose walk still scores the required set: a review found those two sets left out) — the walk computes none
    of its own, and the families are the same."""
    from bnilp.scores.cg import ConditionalGaussian, ConditionalGaussianDiscretized

    cls = ConditionalGaussian if name == "cg" else ConditionalGaussianDiscretized
    data = random_mixed(np.random.default_rng(5), "dcdccdc", 250)
    names = data.names
    knowledge = {"required": [[names[1], names[3]]], "forbidden": [[names[0], names[4]], [names[6], names[2]]]}
    asked: set[frozenset[int]] = set()

    class Recording(cls):
        def _set_value(self, variables):
            asked.add(variables)
            return super()._set_value(variables)

    three = {"required": [[names[0], names[3]], [names[1], names[3]], [names[2], names[3]]]}
    for palim, kw in ((None, {}), (2, {}), (3, {"knowledge": knowledge}),
                      (None, {"knowledge": three, "time_limit": 100})):   # passes of depth below the 3 required
        asked.clear()
        serial = score_parent_sets(Recording(data), epsilon=math.log(20), palim=palim, **kw)
        score = cls(data)
        parallel = score_parent_sets(score, epsilon=math.log(20), palim=palim, n_jobs=2, **kw)
        assert parallel.families == serial.families, (palim, kw)
        assert set(score._table) == asked and not score._sets, (palim, kw)
        if "time_limit" not in kw:              # a deeper pass's table holds only the sets new to it
            assert parallel.meta["counts"]["set_table"]["sets"] == len(asked) > 0


@pytest.mark.parametrize("name", ["mvp", "mml"])
def test_a_family_table_scores_each_family_once_by_partition_exactly_those_the_walks_ask_for(monkeypatch,
                                                                                              name: str) -> None:
    """MVP's families read bases kept on their discrete parents' partition (MML's, cell sums), so a walk first
    scores every family it will ask for, sorted by partition (:func:`bnilp.lattice.plan_family_table`,
    :func:`~bnilp.lattice.build_family_table`), each partition built once, then walks on look-ups. The table
    holds exactly the families a walk without it scores — without a palim, with one, with required and
    forbidden arrows, in the passes of a deepening shallower than a child's required parents — each scored
    once, on one process or two, with the same families."""
    import bnilp.lattice as lattice
    import bnilp.parentsets as parentsets
    import bnilp.scores.cg as cg
    from bnilp.scores.mml import MinimumMessageLength
    from bnilp.scores.mvp import MixedVariablePolynomial

    cls = MixedVariablePolynomial if name == "mvp" else MinimumMessageLength
    data = random_mixed(np.random.default_rng(15), "dcdccdc", 250)
    names = data.names
    knowledge = {"required": [[names[1], names[3]]], "forbidden": [[names[0], names[4]], [names[6], names[2]]]}
    three = {"required": [[names[0], names[3]], [names[1], names[3]], [names[2], names[3]]]}
    asked: list[tuple[int, tuple[int, ...]]] = []

    class Recording(cls):
        def raw(self, child, parents):
            asked.append((child, parents))
            return super().raw(child, parents)

    built = []
    partition = cg.Partition.__init__
    monkeypatch.setattr(cg.Partition, "__init__", lambda self, codes: (built.append(1), partition(self, codes))[1])
    real_scale = parentsets.search_scale

    def unrecorded_scale(*args, **kwargs):      # a fresh score's base families, for the walk's slack: not the walk's
        n_asked, n_built = len(asked), len(built)
        out = real_scale(*args, **kwargs)
        del asked[n_asked:], built[n_built:]
        return out

    monkeypatch.setattr(parentsets, "search_scale", unrecorded_scale)
    for palim, kw in ((None, {}), (2, {}), (3, {"knowledge": knowledge}),
                      (None, {"knowledge": three, "time_limit": 100})):   # passes of depth below the 3 required
        with monkeypatch.context() as no_table:
            no_table.setattr(lattice, "FAMILY_TABLE_MAX_FAMILIES", 0)
            asked.clear()
            walked = score_parent_sets(Recording(data), epsilon=math.log(20), palim=palim, **kw)
            assert "family_table" not in walked.meta["counts"]
        expected = set(asked)
        asked.clear()
        built.clear()
        serial = score_parent_sets(Recording(data), epsilon=math.log(20), palim=palim, **kw)
        assert serial.families == walked.families and sorted(asked) == sorted(expected), (palim, kw)
        if "time_limit" not in kw:              # a deeper pass's table holds only the families new to it
            keys = {Recording(data).family_share_key(*f) for f in expected}
            assert len(built) == len(keys) and serial.meta["counts"]["family_table"]["families"] == len(expected)
        score = cls(data)
        parallel = score_parent_sets(score, epsilon=math.log(20), palim=palim, n_jobs=2, **kw)
        assert parallel.families == walked.families and set(score._families) == expected, (palim, kw)


def test_a_score_used_again_reads_its_tables_in_one_process_and_a_new_prior_empties_them(monkeypatch) -> None:
    """A review's finds on a score used for a second walk: every family (CG: every set) was at hand, yet the walks,
    pure look-ups, went to the worker processes with the whole table (now they run here); a prior or penalty
    discount set on the score since its family table was built was not seen (the table holds values with them),
    and parents given as a list failed the look-up (unhashable) where a fresh score took them."""
    import bnilp.lattice as lattice
    from bnilp.scores import StructurePrior

    executors = []
    make = lattice.make_executor
    monkeypatch.setattr(lattice, "make_executor", lambda *a, **k: executors.append(make(*a, **k)) or executors[-1])
    data = random_mixed(np.random.default_rng(17), "dcdccdc", 200)
    for name in ("mvp", "cg"):
        score = make_score(name, data)
        first = score_parent_sets(score, epsilon=math.log(20), palim=2, n_jobs=2)
        executors.clear()
        again = score_parent_sets(score, epsilon=math.log(20), palim=2, n_jobs=2)
        assert again.families == first.families
        assert [type(e).__name__ for e in executors] == ["SerialExecutor"], name
    score = make_score("mvp", data)
    score_parent_sets(score, epsilon=math.log(20), palim=2)
    assert score.local(0, [1, 2]) == score.local(0, (1, 2)) == score.local(0, np.array([1, 2]))
    ebic = StructurePrior("ebic", data.n, gamma=1.0)
    fresh = score_parent_sets(make_score("mvp", data, prior=ebic), epsilon=math.log(20), palim=2)
    score.prior = ebic
    assert score_parent_sets(score, epsilon=math.log(20), palim=2).families == fresh.families
    score.penalty_discount = 2.0
    assert score.local(0, (1,)) == make_score("mvp", data, prior=ebic, penalty_discount=2.0).local(0, (1,))


def test_family_table_tasks_on_threads_keep_sums_of_their_own() -> None:
    """A Dask worker's threads may run tasks of the family table at once on one score: each works on its own copy of
    the kept sums (the score's cache untouched), so they do not let go of each other's at every change of key;
    the values are those of the score itself."""
    import threading

    from bnilp.lattice import family_values

    data = random_mixed(np.random.default_rng(18), "dcdccdc", 200)
    score = make_score("mvp", data)
    families = sorted(((c, pa) for c in range(data.n) for k in range(3)
                       for pa in itertools.combinations([j for j in range(data.n) if j != c], k)),
                      key=lambda f: (score.family_share_key(*f), f))
    expected = [make_score("mvp", data).local(*f) for f in families]
    cache, got = score.partition, {}
    halves = {0: families[::2], 1: families[1::2]}
    runs = [threading.Thread(target=lambda i=i: got.__setitem__(i, family_values(score, halves[i]))) for i in (0, 1)]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    assert got[0] == expected[::2] and got[1] == expected[1::2]
    assert score.partition is cache and not cache._parts and score._share_key is None
    twin = score.for_task()
    assert twin.partition is not cache and twin.data is score.data and twin.local(*families[5]) == expected[5]


def test_family_table_tasks_are_cut_where_the_partition_changes() -> None:
    """A task holds whole keys (a key cut between two processes' tasks is built by both), joined up to ``step``
    families; a key of more than ``step`` families is cut into tasks of ``step`` (its last part joined by the keys
    after it as any task); nothing is lost or reordered."""
    from bnilp.lattice import _key_tasks

    class Keyed:
        def family_share_key(self, child, parents):
            return parents[0]

    sizes = [3, 1, 9, 2, 2, 4]
    families = [(0, (key, i)) for key, size in enumerate(sizes) for i in range(size)]
    tasks = _key_tasks(Keyed(), families, 4)
    assert [f for task in tasks for f in task] == families
    assert [[f[1][0] for f in task] for task in tasks] == [[0, 0, 0, 1], [2] * 4, [2] * 4, [2, 3, 3], [4, 4], [5] * 4]


def test_a_family_table_past_its_size_leaves_the_walk_to_the_processes(monkeypatch) -> None:
    """More families than :data:`~bnilp.lattice.FAMILY_TABLE_MAX_FAMILIES`: no table, MVP's blocks of families go
    to the processes, with the same families; a deadline that passes while the table is built stops it."""
    import bnilp.lattice as lattice
    from bnilp.parentsets import Deadline, ScoringTimeLimit

    data = random_mixed(np.random.default_rng(16), "dcdcdc", 200)
    serial = score_parent_sets(make_score("mvp", data), epsilon=math.log(20), palim=2)
    monkeypatch.setattr(lattice, "FAMILY_TABLE_MAX_FAMILIES", 10)
    parallel = score_parent_sets(make_score("mvp", data), epsilon=math.log(20), palim=2, n_jobs=2)
    assert parallel.families == serial.families and "family_table" not in parallel.meta["counts"]
    assert serial.meta["counts"]["family_table"]["families"] == 6 * (1 + 5 + 10)
    with pytest.raises(ScoringTimeLimit):
        lattice.build_family_table(make_score("mvp", data), [(0, ()), (1, ())], 2, None, Deadline(0.0))


def test_a_set_table_past_its_size_leaves_the_walk_to_the_processes(monkeypatch) -> None:
    """More sets than :data:`~bnilp.scores.cg.SET_TABLE_MAX_SETS`: no table, the blocks of families go to the
    processes as for any score evaluated in Python, with the same families; a deadline that passes while
    the table is built stops the build as it stops a walk."""
    import bnilp.lattice as lattice
    import bnilp.scores.cg as cg
    from bnilp.parentsets import Deadline, ScoringTimeLimit

    data = random_mixed(np.random.default_rng(6), "dcdcdc", 200)
    serial = score_parent_sets(make_score("cg", data), epsilon=math.log(20), palim=3)
    monkeypatch.setattr(cg, "SET_TABLE_MAX_SETS", 10)
    parallel = score_parent_sets(make_score("cg", data), epsilon=math.log(20), palim=3, n_jobs=2)
    assert parallel.families == serial.families and "set_table" not in parallel.meta["counts"]
    with pytest.raises(ScoringTimeLimit):
        lattice.build_set_table(make_score("cg", data), list(range(1, 64)), 2, None, Deadline(0.0))


@pytest.mark.slow     # 4.5-8 s: the quick suite keeps under the README's ~15 minutes
def test_a_cluster_of_processes_by_address_gives_the_same_score_file(runner, tmp_path, discrete_csv,
                                                                     mixed_csv) -> None:
    """``--scheduler ADDRESS``: a LocalCluster of worker *processes* the test starts, so every block, frontier
    and score crosses a process boundary pickled (``--scheduler local`` keeps its workers in-process);
    the coordinator computes nothing there, and the files are byte-identical to ``--jobs 1``."""
    pytest.importorskip("distributed")
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        for kind in CASES:
            data, extra = CASES[kind](discrete_csv, mixed_csv)
            one = _score_file(runner, tmp_path, data, "one", *extra)
            far = _score_file(runner, tmp_path, data, "far", *extra, "--scheduler", cluster.scheduler_address)
            assert one == far, kind


@pytest.mark.parametrize("inline", [0, 1 << 30])
def test_dask_tasks_pack_blocks_and_carry_or_scatter_frontiers_alike(monkeypatch, inline: int) -> None:
    """A Dask task carries several blocks once their pace is known (``DASK_TASK_SECONDS``), and a level's
    frontier statistics travel inside the tasks or are sent once as a task of their own
    (``DASK_INLINE_FRONTIER_BYTES``): the same table as one process either way, and each way is taken. Nothing is
    scattered: the score and the statistics are tasks the scheduler can run again (a review: scattered data, even
    broadcast, was lost with the one worker left holding it — distributed's memory manager drops replicas — and
    every task needing it was cancelled: exit 3, no file, or a hang)."""
    pytest.importorskip("distributed")
    import bnilp.lattice as lattice

    monkeypatch.setattr(lattice, "BLOCK_ELEMENTS", 600)
    monkeypatch.setattr(lattice, "MAX_BLOCK_CANDIDATES", 7)
    monkeypatch.setattr(lattice, "DASK_TASK_SECONDS", 10.0)
    monkeypatch.setattr(lattice, "DASK_INLINE_FRONTIER_BYTES", inline)
    packs, scattered = [], []
    collect, frontier = lattice.DaskExecutor._collect, lattice.DaskExecutor._frontier

    def counted_collect(self):
        packs.extend(len(pack) for _, pack in self.sent)
        collect(self)

    def counted_frontier(self, child, stats):
        scattered.append(child)
        future = frontier(self, child, stats)
        wait([future, self.score_future])           # known to the scheduler
        recomputable.append(self.client.run_on_scheduler(
            lambda dask_scheduler, key=future.key: dask_scheduler.tasks[key].run_spec is not None))
        recomputable.append(self.client.run_on_scheduler(
            lambda dask_scheduler, key=self.score_future.key: dask_scheduler.tasks[key].run_spec is not None))
        return future

    monkeypatch.setattr(lattice.DaskExecutor, "_collect", counted_collect)
    monkeypatch.setattr(lattice.DaskExecutor, "_frontier", counted_frontier)
    from distributed import Client, wait

    recomputable: list[bool] = []

    def no_scatter(self, data, *args, **kwargs):
        raise AssertionError("scattered data cannot be recomputed where its workers die")

    monkeypatch.setattr(Client, "scatter", no_scatter)
    data = discrete(4, 9, 400)
    serial = score_parent_sets(make_score("bic", data), epsilon=math.log(20), counts="families")
    dask = score_parent_sets(make_score("bic", data), epsilon=math.log(20), scheduler="local", n_jobs=2,
                             counts="families")
    assert dask.families == serial.families and dask.meta["pruned"] == serial.meta["pruned"]
    assert max(packs) > 1
    assert bool(scattered) == (inline == 0)
    assert len(recomputable) == 2 * len(scattered) and all(recomputable)


def test_the_local_cluster_is_reused_and_shares_the_blocks_with_the_coordinator(monkeypatch) -> None:
    """``--scheduler local`` runs --jobs − 1 Dask workers and the coordinator evaluates blocks too (no
    transfer for those); the cluster outlives a run, and a later run's workers use the later score."""
    pytest.importorskip("distributed")
    import bnilp.lattice as lattice

    monkeypatch.setattr(lattice, "BLOCK_ELEMENTS", 600)
    monkeypatch.setattr(lattice, "MAX_BLOCK_CANDIDATES", 7)
    where = {"coordinator": 0, "cluster": 0}
    evaluate, send = lattice.evaluate_block, lattice.DaskExecutor._send

    def counted_evaluate(*args):
        where["coordinator"] += 1
        return evaluate(*args)

    def counted_send(self, cover=0):
        before = len(self.held)
        send(self, cover)
        where["cluster"] += before - len(self.held)

    monkeypatch.setattr(lattice, "evaluate_block", counted_evaluate)
    monkeypatch.setattr(lattice.DaskExecutor, "_send", counted_send)
    clients = []
    for seed in (1, 2):
        data = discrete(seed, 9, 400)
        serial = score_parent_sets(make_score("bic", data), epsilon=math.log(20), counts="families")
        before = dict(where)
        dask = score_parent_sets(make_score("bic", data), epsilon=math.log(20), scheduler="local", n_jobs=2,
                                 counts="families")
        assert dask.families == serial.families and dask.meta["pruned"] == serial.meta["pruned"]
        assert where["coordinator"] > before["coordinator"] and where["cluster"] > before["cluster"]
        clients.append(lattice.start_local_cluster(1))
    assert clients[0] is clients[1]

def test_the_coordinator_takes_back_queued_dask_tasks_at_the_end_of_a_level(monkeypatch) -> None:
    """With nothing left to send and tasks queued behind the worker's, the coordinator evaluates the newest
    queued task itself and drops its future: each block's result is counted once and the table is the
    same as one process's, however slow the worker."""
    pytest.importorskip("distributed")
    import time

    import bnilp.lattice as lattice

    monkeypatch.setattr(lattice, "BLOCK_ELEMENTS", 600)
    monkeypatch.setattr(lattice, "MAX_BLOCK_CANDIDATES", 7)
    monkeypatch.setattr(lattice, "DASK_QUEUED_PER_THREAD", 4)
    taken = []
    take_back, blocks = lattice.DaskExecutor._take_back, lattice._dask_blocks

    def counted_take_back(self):
        taken.append(len(self.sent[-1][1]))
        take_back(self)

    def slow_blocks(*args):
        time.sleep(0.02)
        return blocks(*args)

    monkeypatch.setattr(lattice.DaskExecutor, "_take_back", counted_take_back)
    monkeypatch.setattr(lattice, "_dask_blocks", slow_blocks)
    data = discrete(3, 9, 400)
    serial = score_parent_sets(make_score("bic", data), epsilon=math.log(20), counts="families")
    dask = score_parent_sets(make_score("bic", data), epsilon=math.log(20), scheduler="local", n_jobs=2,
                             counts="families")
    assert dask.families == serial.families and dask.meta["pruned"] == serial.meta["pruned"]
    assert dask.meta["scored"] == serial.meta["scored"]
    assert taken and min(taken) >= 1

    lattice.stop_local_cluster()


def test_blocks_split_one_variable_and_do_not_change_the_result(monkeypatch) -> None:
    """Tiny blocks (many per level of one variable) give the same table as one block per level."""
    import bnilp.lattice as lattice

    score = make_score("bic", discrete(12, 7, 500))
    whole = score_parent_sets(score, epsilon=math.log(20), counts="families")
    monkeypatch.setattr(lattice, "BLOCK_ELEMENTS", 600)
    monkeypatch.setattr(lattice, "MAX_BLOCK_CANDIDATES", 3)
    split = score_parent_sets(make_score("bic", score.data), epsilon=math.log(20), counts="families")
    assert split.families == whole.families and split.meta["pruned"] == whole.meta["pruned"]


# ---------------------------------------------------------------------------------------------- integer codes


@pytest.fixture
def coded_csv(tmp_path):
    rng = np.random.default_rng(0)
    many = rng.integers(0, 15, 200)
    frame = pd.DataFrame({"x": many, "y": (many + rng.integers(0, 2, 200)) % 15, "z": rng.integers(0, 2, 200)})
    path = tmp_path / "coded.csv"
    frame.to_csv(path, index=False)
    return path


def test_integer_codes_are_discrete_for_a_discrete_only_score(coded_csv) -> None:
    assert load_data(coded_csv).kinds == ["continuous", "continuous", "discrete"]
    data = load_data(coded_csv, integer_codes=True)
    assert data.kinds == ["discrete"] * 3 and data.arities[:2] == [15, 15]
    assert any("integer codes" in note and note.startswith("x:") for note in data.notes)
    assert load_data(coded_csv, discrete="all").kinds == ["discrete"] * 3


def test_the_python_api_types_integer_codes_as_the_command_line_does(coded_csv, tmp_path) -> None:
    """``learn(path)`` and ``learn(DataFrame)`` with a discrete-only score, and fitting a network solved from
    a score file on the data's path, read columns of integer codes as discrete, as ``bnilp score`` did; a mixed
    score keeps inferring them continuous."""
    by_path = bnilp.learn(coded_csv)
    by_frame = bnilp.learn(pd.read_csv(coded_csv), score="bdeu")
    assert by_path.dataset.kinds == by_frame.dataset.kinds == ["discrete"] * 3
    assert bnilp.learn(coded_csv, score="cg").dataset.kinds == ["continuous", "continuous", "discrete"]
    out = tmp_path / "c.scores"
    assert CliRunner().invoke(main, ["score", str(coded_csv), "-o", str(out), "-q"]).exit_code == 0
    result = bnilp.solve_table(read_jaakkola(out))
    fitted = result.fit(data=coded_csv)
    assert {v: e["type"] for v, e in fitted["variables"].items()} == dict.fromkeys("xyz", "discrete")
    assert fitted["variables"]["x"]["states"] == [str(k) for k in range(15)]


def test_score_bic_on_integer_codes_says_so(runner, coded_csv, tmp_path) -> None:
    out = tmp_path / "c.scores"
    res = runner.invoke(main, ["score", str(coded_csv), "-o", str(out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "integer codes" in res.output and "discrete-only score" in res.output
    # a mixed score keeps inferring them continuous; a type option switches the rule off
    res = runner.invoke(main, ["score", str(coded_csv), "-o", str(out), "--score", "bdeu", "--continuous", "x"],
                        catch_exceptions=False)
    assert res.exit_code == 2 and "continuous" in res.output
    res = runner.invoke(main, ["score", str(coded_csv), "-o", str(out), "--discrete", "all", "-q"],
                        catch_exceptions=False)
    assert res.exit_code == 0


def test_frontier_lookup_finds_every_set_and_only_those() -> None:
    """The frontier's hash table (open addressing) maps each stored mask to its row and any other mask
    to −1, also when many masks collide (masks differing only in high bits) and for masks of several words
    (data past 64 variables; masks differing only in a later word)."""
    from bnilp.lattice import _Level

    rng = np.random.default_rng(0)
    one = rng.choice(1 << 40, size=5000, replace=False).astype(np.uint64)
    high = np.arange(3000, dtype=np.uint64) << np.uint64(40)
    cases = [(one[:, None], np.setdiff1d(rng.integers(0, 1 << 41, 2000).astype(np.uint64), one)[:, None]),
             (high[:, None], np.setdiff1d(rng.integers(0, 1 << 41, 2000).astype(np.uint64), high)[:, None]),
             (np.zeros((1, 1), dtype=np.uint64), np.ones((1, 1), dtype=np.uint64))]
    for words in (2, 3):
        masks = np.zeros((3000, words), dtype=np.uint64)
        masks[:, -1] = high                                  # alike in every word but the last
        others = masks.copy()
        others[:, 0] = np.uint64(1)
        cases.append((masks, np.concatenate((others, masks[:, ::-1]))[: 4000]))
    for masks, others in cases:
        m = masks.shape[0]
        level = _Level(np.zeros((m, 0), dtype=np.int8), masks, *(np.zeros(m) for _ in range(4)),
                       np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64))
        assert (level.lookup(masks) == np.arange(m)).all()
        stored = {tuple(r) for r in masks.tolist()}
        absent = np.array([r for r in others.tolist() if tuple(r) not in stored], dtype=np.uint64)
        assert absent.shape[0] > 0 and (level.lookup(absent) == -1).all()


def test_masks_of_parent_sets_set_one_bit_per_parent_in_its_word() -> None:
    """``words_of``: variable v is bit v mod 64 of word v // 64, for indices up to the int16 range."""
    from bnilp.scores.batch import mask_words, words_of

    assert [mask_words(n) for n in (1, 64, 65, 128, 129, 300)] == [1, 1, 2, 2, 3, 5]
    parents = np.array([[0, 63, 64], [1, 127, 299]], dtype=np.int16)
    got = words_of(parents, 5)
    want = np.zeros((2, 5), dtype=np.uint64)
    for r, row in enumerate(parents.tolist()):
        for v in row:
            want[r, v // 64] |= np.uint64(1) << np.uint64(v % 64)
    assert (got == want).all() and words_of(np.zeros((3, 0), dtype=np.int8), 2).tolist() == [[0, 0]] * 3


@pytest.mark.parametrize("counts", ["families", "subsets"])
@pytest.mark.parametrize("score_name", ["bic", "bdeu"])
def test_every_route_writes_the_canonical_score_of_a_family(score_name: str, counts: str) -> None:
    """A kept set's score is bit-identical to ``score.local`` — the canonical value — whether the walk took it
    straight from its block's counts, from the subset table (re-counted), or with required parents prepended
    to its bases (re-counted in the canonical decomposition), with a structure prior too."""
    frame = random_discrete_frame(21, n=6, N=400, max_arity=3)
    data = from_dataframe(frame, discrete=list(frame.columns))
    names = data.names
    knowledge = {"required": [[names[4], names[1]], [names[0], names[3]]]}
    for prior in (StructurePrior(), StructurePrior("binomial", n_variables=data.n, expected_parents=1.5)):
        score = make_score(score_name, data, prior=prior)
        for kw in ({}, {"knowledge": knowledge}):
            table = score_parent_sets(score, epsilon=math.log(20), counts=counts, **kw)
            for v, fams in table.families.items():
                child = names.index(v)
                for ps, s in fams.items():
                    assert s == score.local(child, tuple(sorted(names.index(p) for p in ps))), (prior, kw, v, ps)



def test_a_scoring_worker_that_dies_is_a_reported_limit_not_a_traceback() -> None:
    """A worker process ended under the walk (by the out-of-memory killer, say) makes the run a
    :class:`~bnilp.errors.LimitError` naming it (the command line: one line, exit 3), not the pool's
    ``TerminatedWorkerError``; the pool serves the next run."""
    import bnilp.lattice as lattice
    from bnilp.errors import LimitError
    from tests.mixed_helpers import WorkerKillingCG

    data = random_mixed(np.random.default_rng(4), "dcdcdcdc", 300)
    with pytest.raises(LimitError, match=r"a worker process ended unexpectedly \(TerminatedWorkerError\)"):
        score_parent_sets(WorkerKillingCG(data), epsilon=math.log(20), palim=3, n_jobs=2)
    lattice.stop_pool()
    again = score_parent_sets(make_score("cg", data), epsilon=math.log(20), palim=3, n_jobs=2)
    assert again.families == score_parent_sets(make_score("cg", data), epsilon=math.log(20), palim=3).families


def test_jobs_and_scheduler_errors_are_one_line_on_every_path(runner, tmp_path, discrete_csv) -> None:
    """``--jobs`` is checked whatever the executor (it passed unchecked with ``--scheduler``), an address that
    cannot be parsed is one line like one that refuses, and a non-finite ``--penalty-discount`` or a score
    past float range is refused rather than written."""
    out = tmp_path / "s.scores"
    for extra, words in ((["--jobs", "0", "--scheduler", "local"], "--jobs must be ≥ 1 or −1"),
                         (["--jobs", "-7"], "--jobs must be ≥ 1 or −1"),
                         (["--scheduler", "not a url"], "(--scheduler) not a url: cannot connect"),
                         (["--scheduler", "tcp://127.0.0.1:notaport"], "cannot connect"),
                         (["--penalty-discount", "nan"], "(--penalty-discount) must be a finite number > 0"),
                         (["--penalty-discount", "1e308"], "score 'bic' gave -inf for")):
        res = runner.invoke(main, ["score", str(discrete_csv), "-o", str(out), "-q", *extra])
        assert res.exit_code == 2 and res.output.strip().splitlines()[-1].startswith("bnilp: error:"), extra
        assert words in res.output and not out.exists(), extra


@pytest.mark.slow     # 9 s at 66 (two mask words), 14 s at 130 (three)
@pytest.mark.parametrize("n", [66, 130])
def test_data_wider_than_one_mask_word_take_the_lattice_walk(n: int) -> None:
    """Past 64 variables a parent set's mask takes ⌈n / 64⌉ words (and past 127 its indices two bytes): the
    lattice walk still keeps exactly the sets and scores of the one-family walk (``walk_child``), for BIC and
    BDeu, on one thread and two (at 130 variables BIC on one, BDeu on two), and (66 variables) on the process's
    LocalCluster (``n_jobs`` − 1 workers, kept for later runs).
    (Such data took the one-family walk, about a hundred times slower, without the memory watch or
    ``time_limit``.)"""
    pytest.importorskip("distributed")
    import bnilp.lattice as lattice

    frame = random_discrete_frame(5, n=n, N=40)
    data = from_dataframe(frame, discrete=list(frame.columns))
    # the reference walk is slow: children in each word and at its ends; at 130 columns each score on one of the
    # two paths (the suite's time: both scores on both took 32 s)
    children = [0, 1, 62, 63, 64, 65, n - 1] if n < 128 else [0, 63, 64, 128, n - 1]
    jobs_of = {"bic": (1, 2), "bdeu": (1, 2)} if n < 128 else {"bic": (1,), "bdeu": (2,)}
    for name in ("bic", "bdeu"):
        score = make_score(name, data)
        eps = math.log(20)
        ref = {data.names[c]: {frozenset(data.names[p] for p in ps): s
                               for ps, s in walk_child(score, c, epsilon=eps, palim=2)[0].items()}
               for c in children}
        assert any(len(ps) == 2 for fam in ref.values() for ps in fam), name      # the second level is walked
        for jobs in jobs_of[name]:
            families = score_parent_sets(score, epsilon=eps, palim=2, n_jobs=jobs).families
            assert {v: families[v] for v in ref} == ref, (name, jobs)
    if n > 100:
        return
    clients = []
    for _ in range(2):
        families = score_parent_sets(make_score("bdeu", data), epsilon=math.log(20), palim=2, n_jobs=2,
                                     scheduler="local").families
        assert {v: families[v] for v in ref} == ref
        clients.append(lattice._LOCAL_DASK["client"])
    assert clients[0] is clients[1] and len(clients[0].scheduler_info()["workers"]) == 1


def test_a_worker_lost_in_a_deeper_pass_keeps_the_passes_finished_before_it() -> None:
    """Under ``time_limit`` (``--score-time-limit``) a worker process that dies in pass p ends the deepening as a
    deeper pass that cannot run does: the table of pass p − 1 is returned, exact for parent sets up to its size,
    the death named in ``score_deeper_pass_refused`` — it discarded every finished pass (no file). The kept
    table equals the unlimited walk's sets of that size."""
    import bnilp.lattice as lattice
    from tests.mixed_helpers import WorkerKillingCG

    class DeepKiller(WorkerKillingCG):
        def local(self, child, parents):      # pass 1 (sets of size ≤ 1) survives; pass 2 loses its worker
            if len(parents) < 2:
                return super(WorkerKillingCG, self).local(child, parents)
            return super().local(child, parents)

        def _set_value(self, variables):      # the set table's tasks: families of pass 1 are sets of size ≤ 2
            if len(variables) <= 2:
                return super(WorkerKillingCG, self)._set_value(variables)
            return super()._set_value(variables)

    data = random_mixed(np.random.default_rng(4), "dcdcdcdc", 300)
    table = score_parent_sets(DeepKiller(data), epsilon=math.log(20), palim=3, n_jobs=2, time_limit=600)
    lattice.stop_pool()
    meta = table.meta
    assert "a worker process ended unexpectedly" in meta["score_deeper_pass_refused"], meta
    assert meta["exact_for_parent_sets_up_to"] == 1 and meta["palim_reached"] and not meta["score_time_limit_reached"]
    assert [p["finished"] for p in meta["deepening"]] == [True, False]
    full = score_parent_sets(make_score("cg", data), epsilon=math.log(20), palim=3)
    for v in data.names:
        assert table.families[v] == {ps: s for ps, s in full.families[v].items() if len(ps) <= 1}, v


def _generated(walk, closed: bool) -> set[tuple[int, ...]]:
    """The candidates a walk's level generates (every block, bases and new parents), its closed rows skipped or
    (``closed`` False) generated too."""
    if not closed:
        walk._bases_pruned_whole = lambda pruned=None: np.zeros(walk.level.size, dtype=bool)
    walk.begin_level()
    got = set()
    while (blocks := walk.more_blocks()) is not None:
        for block in blocks:
            got |= {tuple(block.bases[b]) + (int(j),) for b, j in zip(block.base_of, block.new, strict=True)}
    return got


@pytest.mark.parametrize("n", [9, 70])
@pytest.mark.parametrize("score_name", ["bic", "bdeu"])
def test_a_frontier_set_closed_by_its_own_statistics_loses_no_candidate_the_rules_let_through(
        score_name: str, n: int) -> None:
    """A frontier row Π whose every extension Π ∪ {j} the count-free rules prune from Π's own q·min r, best score,
    q⁺ and c⁺ (each a lower bound of the extension's: R2, R5, R6 fire the more readily as they grow) is not
    extended: on random frontiers (random statistics, some subsets missing, one mask word and two) the level
    generates exactly the candidates it generates with no row closed, and each rule closes rows. Its tally then
    counts every extension of a closed row (j above Π's last parent)."""
    from bnilp.lattice import _ChildWalk, _Level, walk_spec
    from bnilp.parentsets import WalkStats
    from bnilp.scores.batch import mask_words, words_of

    rng = np.random.default_rng(n)
    data = discrete(3, n, 30, max_arity=3)
    score = make_score(score_name, data)
    closed_by = {"R2": 0, "R5": 0, "R6": 0}
    candidates = np.arange(1, n)
    for trial in range(12):
        k = 1 + trial % 3
        rows = list(itertools.combinations(candidates[: 8 + trial % 4].tolist(), k))
        rows = [r for r in rows if rng.random() < 0.85]
        parents = np.array(rows, dtype=np.int8)
        q = np.prod(np.asarray(data.arities)[parents], axis=1).astype(float)
        qplus = np.minimum(q, rng.integers(1, 40, len(rows)))
        level = _Level(parents, words_of(parents, mask_words(n)), -rng.uniform(3, 60, len(rows)),
                       np.zeros(len(rows)), q, np.zeros(len(rows)), qplus, qplus + rng.integers(0, 30, len(rows)))
        spec = walk_spec(score, 0, float(rng.choice(EPSILONS)), score.pruning_rules(0))
        walks = []
        for _ in range(2):
            walk = _ChildWalk(score, spec, candidates.tolist(), None, WalkStats(child="x"), 10**9)
            walk.level = level
            walks.append(walk)
        assert _generated(walks[0], closed=True) == _generated(walks[1], closed=False), trial
        closed = walks[0]._closed
        last = parents[:, -1]
        for rule in closed_by:
            closed_by[rule] += walks[0].stats.pruned[rule] > walks[1].stats.pruned[rule]
        assert sum(walks[0].stats.pruned.values()) >= sum(walks[1].stats.pruned.values())
        assert sum(walks[0].stats.pruned.values()) - sum(walks[1].stats.pruned.values()) <= int(
            (n - 1 - last[closed]).sum())
    assert closed_by["R2" if score_name == "bic" else "R6"] > 0, closed_by


@pytest.mark.parametrize("palim", [None, 2, 3])
def test_closing_frontier_sets_keeps_the_scored_and_kept_sets_and_the_palim_verdict(monkeypatch, palim) -> None:
    """On wide, small-sample data (70 binary columns, 12 rows) R2 closes most frontier rows a level in; the walk
    with closing scores the same sets, keeps the same sets and scores, and says the palim cut exactly when the
    walk without closing does."""
    import bnilp.lattice as lattice

    data = discrete(8, 70, 12, max_arity=2)
    children = [0, 1, 2, 69]
    eps = math.log(3)
    runs = []
    for closing in (True, False):
        if not closing:
            monkeypatch.setattr(lattice._ChildWalk, "_bases_pruned_whole",
                                lambda self, pruned=None: np.zeros(self.level.size, dtype=bool))
        res, _ = _run_lattice(make_score("bic", data), children, eps, palim, None, 1, None, None)
        runs.append([(kept, st.scored, st.palim_reached) for kept, st in res])
    assert runs[0] == runs[1]


@pytest.mark.parametrize("n", [9, 70])
def test_a_level_generates_exactly_the_sets_whose_every_subset_is_in_the_frontier(n: int) -> None:
    """Candidates come from each frontier row's prefix group (Apriori's join: Π ∪ {j} for the later rows
    (p₁ … p_{k−1}, j)) and then the other subsets are looked up: on random frontiers with rows missing (sizes 0–3,
    one mask word and two, rules that prune nothing before counting) the level generates exactly the sets of
    size k + 1 whose every k-subset is a frontier row, over the child's candidate parents."""
    from bnilp.lattice import _ChildWalk, _Level, walk_spec
    from bnilp.parentsets import WalkStats
    from bnilp.scores.batch import mask_words, words_of

    rng = np.random.default_rng(n + 1)
    score = make_score("bic", discrete(4, n, 30, max_arity=3))
    spec = walk_spec(score, 0, math.log(3), frozenset({"R1"}))
    candidates = [v for v in range(1, n) if v not in (2, n - 3)]     # two variables are not candidate parents
    for trial in range(16):
        k = trial % 4
        pool = sorted(set(candidates[: 7 + trial % 3] + candidates[-2:]))
        rows = [r for r in itertools.combinations(pool, k) if k == 0 or rng.random() < 0.7]
        parents = np.array(rows, dtype=np.int8).reshape(len(rows), k)
        ones = np.ones(len(rows))
        level = _Level(parents, words_of(parents, mask_words(n)), -ones, -ones, ones, ones, ones, ones)
        walk = _ChildWalk(score, spec, candidates, None, WalkStats(child="x"), 10**9)
        walk.level = level
        present = set(rows)
        want = {c for c in itertools.combinations(candidates, k + 1)
                if all(tuple(x for x in c if x != y) in present for y in c)}
        assert _generated(walk, closed=True) == want, (trial, k)


def test_a_temporary_folder_that_cannot_hold_the_score_is_one_line(tmp_path, monkeypatch) -> None:
    """The worker processes read the score from a file in ``$TMPDIR``; a full (or unusable) temporary folder
    gave cloudpickle's ``OSError`` traceback (a review's find): now one line naming the folder and the ways out."""
    import tempfile

    import bnilp.lattice as lattice
    from bnilp.errors import InputError

    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    monkeypatch.setattr(tempfile, "tempdir", str(not_a_folder))
    score = make_score("cg", random_mixed(np.random.default_rng(3), "dcdcd", 200))
    with pytest.raises(InputError, match=r"file: the score for the worker processes cannot be written there .*TMPDIR"):
        lattice.make_executor(score, 2, None)

    def none_usable(*args, **kwargs):   # no folder of TMPDIR, /tmp, /var/tmp, /usr/tmp, the current one writable
        raise FileNotFoundError(2, "No usable temporary directory found in [...]")

    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setattr(tempfile, "gettempdir", none_usable)
    monkeypatch.setattr(tempfile, "mkstemp", none_usable)   # the message asked gettempdir again: a traceback (a review)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "read-only"))
    with pytest.raises(InputError, match=r"read-only: the score for the worker processes cannot be written there "
                                         r"\(No usable temporary directory"):
        lattice.make_executor(score, 2, None)


def test_dask_tasks_of_any_size_warn_nobody(recwarn) -> None:
    """Dask warned "Sending large graph of size … Consider loading the data with Dask directly" for every task
    over 10 MiB (hailfinder100, BDeu, ``--jobs 3``: dozens of warnings on stderr under ``-q``, a review's find):
    advice to whoever packs the tasks — bnilp. Checked with the warning's threshold at one byte."""
    dask = pytest.importorskip("dask")
    pytest.importorskip("distributed")
    data = discrete(4, 9, 400)
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1B"}):
        table = score_parent_sets(make_score("bic", data), epsilon=math.log(20), scheduler="local", n_jobs=2)
    assert table.families == score_parent_sets(make_score("bic", data), epsilon=math.log(20)).families
    assert not [w for w in recwarn if "large graph" in str(w.message)]


def test_the_scoring_pool_leaves_joblib_s_own_pool_alone() -> None:
    """The loky pool of a score evaluated in Python was loky's process-wide reusable executor, which joblib's
    default backend takes over: after one ``learn(..., score="cg", n_jobs=2)`` every ``joblib.Parallel(n_jobs=2)``
    of the process (scikit-learn's too) failed, ``'_ReusablePoolExecutor' object has no attribute
    '_temp_folder_manager'`` (a review's find). bnilp keeps a pool of its own."""
    from joblib import Parallel, delayed

    score = make_score("cg", random_mixed(np.random.default_rng(3), "dcdcd", 200))
    assert Parallel(n_jobs=2)(delayed(abs)(-i) for i in range(3)) == [0, 1, 2]
    two = score_parent_sets(score, epsilon=math.log(20), palim=2, n_jobs=2)
    assert Parallel(n_jobs=2)(delayed(abs)(-i) for i in range(3)) == [0, 1, 2]
    assert two.families == score_parent_sets(score, epsilon=math.log(20), palim=2, n_jobs=2).families


def test_a_local_cluster_in_use_by_another_call_is_not_closed_under_it() -> None:
    """Two threads scoring on ``scheduler="local"``, one with processes (MML) and one with threads (BIC): the
    second start closed the cluster the first was using, which then failed as if a worker had been killed for
    memory (a review's find). A cluster in use is not closed: the other call is told so, naming the flag."""
    pytest.importorskip("distributed")
    import bnilp.lattice as lattice
    from bnilp.errors import InputError

    class OtherCall:
        pass

    client = lattice.start_local_cluster(1, processes=False)
    other = OtherCall()
    lattice._LOCAL_DASK_USERS.add(other)
    try:
        with pytest.raises(InputError, match=r"^scheduler \(--scheduler\) local: .* is in use by another call"):
            lattice.start_local_cluster(1, processes=True)
        assert client.status == "running" and lattice.start_local_cluster(1, processes=False) is client
    finally:
        lattice._LOCAL_DASK_USERS.discard(other)


def _sigint_ignored() -> bool:
    import signal

    return signal.getsignal(signal.SIGINT) == signal.SIG_IGN


def test_the_scoring_pool_s_workers_ignore_ctrl_c_and_end_quietly_with_the_process(tmp_path) -> None:
    """A terminal's Ctrl-C reaches the whole process group: a loky worker that took it printed its own
    ``KeyboardInterrupt`` traceback after "bnilp: interrupted" (the coordinator stops the run). And a Python
    process that scored with the pool printed loky's "Exception ignored in … weakref_cb" at its exit once the
    pool was bnilp's own: it is shut down before the interpreter tears its modules down."""
    import subprocess
    import sys

    import bnilp.lattice as lattice

    assert lattice.start_pool(2).submit(_sigint_ignored).result(timeout=120)
    script = ("import numpy as np, math\nfrom bnilp.scores import make_score\n"
              "from bnilp.parentsets import score_parent_sets\nfrom tests.mixed_helpers import random_mixed\n"
              "if __name__ == '__main__':\n"
              "    s = make_score('cg', random_mixed(np.random.default_rng(3), 'dcdcd', 200))\n"
              "    print(len(score_parent_sets(s, epsilon=math.log(20), palim=2, n_jobs=2).families))\n")
    (tmp_path / "run.py").write_text(script)
    root = str(Path(__file__).resolve().parents[1])
    proc = subprocess.run([sys.executable, str(tmp_path / "run.py")], capture_output=True, text=True, timeout=300,
                          cwd=root, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                              [root, os.environ.get("PYTHONPATH", "")])})
    assert proc.returncode == 0 and proc.stdout.strip() == "5" and proc.stderr == "", proc.stderr


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="finds the workers in /proc")
def test_a_ctrl_c_as_the_scoring_pool_starts_neither_kills_a_worker_nor_prints_its_traceback(capfd) -> None:
    """A worker ignores Ctrl-C from its initializer on, but that runs only once it has imported numpy and bnilp:
    a terminal's Ctrl-C before then (it reaches the whole process group) killed the worker — the pool broken,
    ``TerminatedWorkerError`` — or made it print a ``KeyboardInterrupt`` traceback from its imports. Workers now
    start with SIGINT ignored (:func:`bnilp.threads.children_start_deaf_to_ctrl_c`)."""
    import time

    import bnilp.lattice as lattice
    from tests.trace_helpers import ctrl_c_to_each_new_child

    lattice.stop_pool()
    with ctrl_c_to_each_new_child() as hit:
        pool = lattice.start_pool(2)
        time.sleep(0.5)
    assert hit
    assert pool.submit(_sigint_ignored).result(timeout=120)
    lattice.stop_pool()
    assert "KeyboardInterrupt" not in capfd.readouterr().err


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="finds the workers in /proc")
def test_a_ctrl_c_as_the_local_cluster_starts_its_processes_leaves_it_whole(capfd) -> None:
    """``--scheduler local`` on processes: a worker that took the terminal's Ctrl-C while it still imported
    dask (before :func:`~bnilp.lattice._init_local_dask_worker` set it ignored) printed its traceback, or the
    cluster did not start at all ("Nanny failed to start", SIGINT to each new child at once). Its workers now
    start deaf to it, and ignore it once they run."""
    import signal
    import time

    pytest.importorskip("distributed")
    import bnilp.lattice as lattice
    from tests.trace_helpers import ctrl_c_to_each_new_child

    lattice.stop_local_cluster()
    try:
        with ctrl_c_to_each_new_child() as hit:
            client = lattice.start_local_cluster(2, processes=True)
            time.sleep(0.2)
        assert hit
        assert set(client.run(signal.getsignal, signal.SIGINT).values()) == {signal.SIG_IGN}
        assert len(client.scheduler_info()["workers"]) == 2
    finally:
        lattice.stop_local_cluster()
    assert "KeyboardInterrupt" not in capfd.readouterr().err


def test_a_pool_in_use_is_shared_whatever_its_size_and_replaced_only_once_free() -> None:
    """Two threads asking the loky pool for other sizes: the second shut down the pool the first was using, whose
    next submit failed ("cannot schedule new futures after shutdown", 3 of 64 calls; a review). A pool in use is
    now shared as it is (the number of processes changes no result) and replaced only once no call uses it."""
    from bnilp import lattice

    lattice.stop_pool()
    user = object.__new__(lattice.LokyExecutor)          # stands for a walk holding the pool
    first = lattice.start_pool(2, user=user)
    try:
        assert lattice.start_pool(3) is first and not first._flags.shutdown     # in use: shared, not replaced
    finally:
        lattice.release_pool(user)
    second = lattice.start_pool(3)
    assert second is not first and second._max_workers == 2 and first._flags.shutdown
    lattice.stop_pool()


def _learn_in_a_pool_worker(n_jobs: int) -> tuple[int, float]:
    import warnings

    from bnilp import learn
    from bnilp.simulate import simulate

    warnings.simplefilter("ignore")
    frame, _ = simulate(5, 300, 2.0, seed=1)
    result = learn(frame, score="cg", bf=3, n_jobs=n_jobs)
    return result.report["n_networks"], result.report["optimum"]


def test_n_jobs_inside_a_multiprocessing_pool_worker_runs_here_with_the_same_result() -> None:
    """A ``multiprocessing.Pool`` worker is a daemon, which may start no processes: ``learn(…, n_jobs=2)`` with a
    score evaluated in Python (CG: loky processes) raised a bare ``AssertionError`` ("daemonic processes are not
    allowed to have children"; a review). The walk now runs in the worker itself, and gives what n_jobs=1 gives."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        one, two = pool.map(_learn_in_a_pool_worker, [1, 2])
    assert one == two and one[0] >= 1


def _command_line_in_a_pool_worker(args: list[str]) -> int:
    from bnilp.cli import main

    try:
        main.main(args, standalone_mode=False)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_the_command_line_with_jobs_in_a_multiprocessing_pool_worker_runs_there(tmp_path) -> None:
    """The command line starts the scoring processes before it reads the data: in a daemon (a
    ``multiprocessing.Pool`` worker) that start raised the bare ``AssertionError`` the API no longer does (a review of
    the fix). It is skipped there, and the walk runs in the worker; the score file is that of ``--jobs 1``."""
    import multiprocessing

    rng = np.random.default_rng(2)
    x = rng.normal(size=150)
    data = tmp_path / "m.csv"
    pd.DataFrame({"x": x, "y": x + rng.normal(size=150), "d": rng.integers(0, 2, 150)}).to_csv(data, index=False)
    runs = [["score", str(data), "--score", "cg", "--jobs", str(jobs), "-q", "-o", str(tmp_path / f"{jobs}.scores")]
            for jobs in (1, 2)]
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.map(_command_line_in_a_pool_worker, runs) == [0, 0]
    assert (tmp_path / "1.scores").read_bytes() == (tmp_path / "2.scores").read_bytes()


def test_a_lost_scheduler_is_one_line_naming_it_and_other_errors_pass_through() -> None:
    """The client of a cluster given by address cancels every future when its scheduler goes (a review killed
    it mid-run): read as a worker killed for memory (``FutureCancelledError``, exit 3) or a traceback
    (``CommClosedError``, exit 1). Either is now one line naming ``scheduler``; an error of the work itself, with
    the scheduler there, is the error it is; a local cluster's errors are not read as a lost address."""
    from concurrent.futures import CancelledError

    pytest.importorskip("distributed")
    from distributed.comm.core import CommClosedError

    from bnilp.errors import InputError
    from bnilp.lattice import DaskExecutor

    class Client:
        status = "running"

    def executor(local: bool, status: str) -> DaskExecutor:
        ex = DaskExecutor.__new__(DaskExecutor)
        ex.local, ex.address, ex.lost, ex.client = local, "tcp://10.0.0.9:8786", False, Client()
        ex.client.status = status
        return ex

    for status, exc in (("connecting", CancelledError()), ("closed", CancelledError()),
                        ("running", CommClosedError("in <TCP>: ConnectionResetError"))):
        ex = executor(False, status)
        with pytest.raises(InputError, match=r"^scheduler \(--scheduler\) tcp://10\.0\.0\.9:8786: the connection "
                                             rf"to the scheduler was lost mid-run \({type(exc).__name__}\)"):
            with ex._connected():
                raise exc
        assert ex.lost
    for local, status, exc in ((False, "running", CancelledError()), (False, "running", ValueError("the work")),
                               (True, "connecting", CancelledError())):
        ex = executor(local, status)
        with pytest.raises(type(exc)):
            with ex._connected():
                raise exc
        assert not ex.lost


@pytest.mark.slow
def test_a_scheduler_killed_mid_run_ends_the_command_in_one_line_and_no_file(tmp_path) -> None:
    """End to end, a cluster started here by the ``dask`` command: its scheduler killed while a walk of ~20 s
    runs on its worker. One line naming ``--scheduler``, exit 2, no score file (a review: 117 lines ending in a
    ``CommClosedError`` traceback, exit 1, or a worker "killed for memory", exit 3, with distributed's tracebacks
    above it)."""
    import shutil
    import subprocess
    import sys
    import time

    pytest.importorskip("distributed")
    dask = shutil.which("dask")
    if dask is None:
        pytest.skip("needs the dask command")
    frame = random_discrete_frame(6, n=36, N=1000, max_arity=2)
    frame.to_csv(tmp_path / "d.csv", index=False)
    env = {**os.environ, "PYTHONPATH": str(Path(bnilp.__file__).parents[1])}
    started = []
    try:
        started.append(subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                         "--scheduler-file", str(tmp_path / "s.json")], env=env,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for _ in range(300):
            if (tmp_path / "s.json").exists():
                break
            time.sleep(0.1)
        started.append(subprocess.Popen([dask, "worker", "--nthreads", "1", "--no-dashboard", "--scheduler-file",
                                         str(tmp_path / "s.json")], env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL))
        address = json.loads((tmp_path / "s.json").read_text())["address"]
        out = tmp_path / "o.scores"
        run = subprocess.Popen([sys.executable, "-m", "bnilp", "score", str(tmp_path / "d.csv"), "--no-prune",
                                "--palim", "5", "--scheduler", address, "-o", str(out), "-q"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(8)
        assert run.poll() is None, "the walk ended before the scheduler was killed: make it longer"
        started[0].kill()
        _, err = run.communicate(timeout=120)
    finally:
        for proc in started:
            proc.kill()
            proc.wait()
    assert run.returncode == 2, err
    assert err.strip().splitlines() == [line for line in err.strip().splitlines() if line.startswith("bnilp: error: "
                                        f"scheduler (--scheduler) {address}: the connection to the scheduler was "
                                        "lost mid-run")] and len(err.strip().splitlines()) == 1, err
    assert not out.exists() and not Path(f"{out}.json").exists()
