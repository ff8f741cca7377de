"""BGe (``bnilp.scores.bge``): the marginal likelihood against its sequential form and a numerical integral,
score equivalence, unit invariance, credible sets against brute force, the gaussian.test network, the CLI."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

from bnilp.cli import main
from bnilp.data import from_dataframe, load_data
from bnilp.errors import InputError
from bnilp.parentsets import score_parent_sets
from bnilp.pipeline import learn, solve_table
from bnilp.scores import make_score
from bnilp.scores.bge import prior_scale
from tests.oracles import all_dags, brute_force_credible
from tests.test_credible import as_key, assert_posteriors_equal, brute_posteriors, vp_key
from tests.test_parentsets import full_table


def gaussian_frame(seed: int, N: int, n: int = 4, scale: float = 1.0) -> pd.DataFrame:
    """Linear-Gaussian data: each column a noisy combination of earlier ones, on scales and offsets of its own."""
    rng = np.random.default_rng(seed)
    cols: dict[str, np.ndarray] = {}
    for j in range(n):
        x = rng.normal(size=N)
        for src in list(cols.values())[-2:]:
            if rng.random() < 0.7:
                x = x + rng.uniform(-1.5, 1.5) * (src - src.mean()) / src.std()
        cols[f"X{j}"] = scale * rng.uniform(0.1, 10.0) * x + rng.uniform(-50, 50)
    return pd.DataFrame(cols)


def sequential_log_marginal(x: np.ndarray, alpha_mu: float, dof: float, scale: float) -> float:
    """ln p(x_1, …, x_N) as Σ_t ln p(x_t | x_1..x_{t−1}) under a normal-inverse-Wishart prior (μ₀ = the sample
    mean, κ₀ = α_μ, ν₀ = ``dof``, Ψ₀ = ``scale``·I): each predictive a multivariate t with ν_t − l + 1 degrees of
    freedom, location μ_t and shape Ψ_t(κ_t + 1)/(κ_t(ν_t − l + 1)) (Murphy 2007, §9) — the updates row by row,
    no determinant ratio."""
    N, l = x.shape
    mu, kappa, nu, psi = x.mean(axis=0), alpha_mu, dof, scale * np.eye(l)
    total = 0.0
    for row in x:
        df = nu - l + 1
        shape = psi * (kappa + 1) / (kappa * df)
        total += float(stats.multivariate_t(loc=mu, shape=shape, df=df).logpdf(row))
        diff = row - mu
        psi = psi + kappa / (kappa + 1) * np.outer(diff, diff)
        mu = (kappa * mu + row) / (kappa + 1)
        kappa, nu = kappa + 1, nu + 1
    return total


def standardised(frame: pd.DataFrame) -> np.ndarray:
    x = frame.to_numpy(float)
    return (x - x.mean(axis=0)) / x.std(axis=0)


@pytest.mark.parametrize("standardize", [True, False])
@pytest.mark.parametrize("alpha_mu,alpha_w", [(1.0, None), (0.3, 9.0), (4.0, 6.5)])
def test_a_set_value_is_the_sequential_predictive_likelihood(standardize, alpha_mu, alpha_w):
    """g(S) of every non-empty set of 4 columns equals the product of one-step predictive densities (the prior's
    marginal on S has α_w − n + |S| degrees of freedom: Kuipers, Moffa & Heckerman 2014)."""
    frame = gaussian_frame(1, N=25)
    data = from_dataframe(frame)
    score = make_score("bge", data, alpha_mu=alpha_mu, alpha_w=alpha_w, standardize=standardize)
    x = standardised(frame) if standardize else frame.to_numpy(float)
    n = data.n
    aw = n + 2.0 if alpha_w is None else alpha_w
    t = prior_scale(alpha_mu, aw, n)
    for size in range(1, n + 1):
        for subset in itertools.combinations(range(n), size):
            want = sequential_log_marginal(x[:, subset], alpha_mu, aw - n + size, t)
            assert score.set_value(subset) == pytest.approx(want, rel=1e-10, abs=1e-9)


def test_a_child_without_parents_needs_no_triangular_solve(monkeypatch):
    """SciPy before 1.14 refuses a 0 × 0 triangular solve ("illegal value in 7th argument of internal trtrs"):
    at the floor ``pyproject.toml`` names (SciPy 1.10), every BGe run ended in that traceback at the first empty
    parent set. The empty set's inverse is the empty matrix, no solve; the solve here refuses 0 × 0 as they did."""
    import bnilp.scores.bge as bge

    real = bge.solve_triangular

    def old_scipy(a, b, **kw):
        if np.asarray(a).size == 0:
            raise ValueError("illegal value in 7th argument of internal trtrs")
        return real(a, b, **kw)

    monkeypatch.setattr(bge, "solve_triangular", old_scipy)
    frame = gaussian_frame(1, N=25)
    score = make_score("bge", from_dataframe(frame), standardize=False)
    x = frame.to_numpy(float)[:, [0]]
    aw = score.data.n + 2.0
    want = sequential_log_marginal(x, 1.0, aw - score.data.n + 1, prior_scale(1.0, aw, score.data.n))
    assert score.local(0, ()) == pytest.approx(want, rel=1e-10, abs=1e-9)
    assert math.isfinite(score.local(1, (0,)))


@pytest.mark.slow        # ~20 s: numerical integration
def test_one_column_is_its_integral_over_mean_and_variance():
    """For one column, p(x) = ∫∫ Π N(x_i | μ, σ²)·N(μ | x̄, σ²/α_μ)·InvGamma(σ²; ν/2, t/2) dμ dσ² (the
    one-dimensional normal-inverse-Wishart), integrated numerically."""
    x = np.array([0.3, -1.2, 2.5, 0.9, 1.7, -0.4])
    data = from_dataframe(pd.DataFrame({"x": x}))
    score = make_score("bge", data, alpha_mu=2.0, alpha_w=3.5, standardize=False)
    nu, t, mean = 3.5 - 1 + 1, prior_scale(2.0, 3.5, 1), x.mean()

    def integrand(mu: float, var: float) -> float:
        like = np.prod(stats.norm.pdf(x, mu, math.sqrt(var)))
        return like * stats.norm.pdf(mu, mean, math.sqrt(var / 2.0)) * stats.invgamma.pdf(var, nu / 2, scale=t / 2)

    value, err = integrate.dblquad(integrand, 0, 60, -15, 15, epsabs=1e-14, epsrel=1e-9)
    assert score.local(0, ()) == pytest.approx(math.log(value), abs=1e-6)


@pytest.mark.parametrize("standardize", [True, False])
def test_markov_equivalent_dags_score_alike_and_a_complete_dag_scores_the_joint_marginal(standardize):
    """Every DAG on 4 variables: Markov equivalent ones have the same total (Geiger & Heckerman 2002), and
    different classes here do not; a complete DAG's total is g(all four)."""
    frame = gaussian_frame(2, N=40)
    score = make_score("bge", from_dataframe(frame), standardize=standardize)
    names = list(frame.columns)
    totals: dict[tuple, list[float]] = {}
    for parents in all_dags(names):
        total = sum(score.local(names.index(v), tuple(sorted(names.index(p) for p in ps)))
                    for v, ps in parents.items())
        totals.setdefault(vp_key(parents), []).append(total)
        if sum(len(ps) for ps in parents.values()) == 6:
            assert total == pytest.approx(score.set_value(tuple(range(4))), rel=1e-12)
    assert len(totals) == 185     # the Markov equivalence classes of 4 labelled nodes
    for values in totals.values():
        assert max(values) - min(values) < 1e-9 * max(1.0, abs(values[0]))
    spread = sorted(v[0] for v in totals.values())
    assert min(b - a for a, b in itertools.pairwise(spread)) > 1e-9


def kuipers_local_score(score, child: int, parents: tuple[int, ...], digits: int = 60) -> float:
    """s(i | Π) = g(Π ∪ {i}) − g(Π) with g the closed form of the module docstring (multivariate gamma functions,
    determinants of R = t·I + S), evaluated in ``digits`` decimal digits with mpmath from the score's own S."""
    import mpmath

    with mpmath.workdps(digits):
        n, N = score.n, mpmath.mpf(score.N)
        a_mu, a_w = mpmath.mpf(score.alpha_mu), mpmath.mpf(score.alpha_w)
        t = a_mu * (a_w - n - 1) / (a_mu + 1)

        def g(variables):
            idx = sorted(variables)
            size = len(idx)
            if not size:
                return mpmath.mpf(0)
            nu = a_w - n + size

            def log_multigamma(a):
                return size * (size - 1) / mpmath.mpf(4) * mpmath.log(mpmath.pi) + mpmath.fsum(
                    mpmath.loggamma(a + mpmath.mpf(1 - j) / 2) for j in range(1, size + 1))

            r = mpmath.matrix([[mpmath.mpf(float(score.S[a, b])) + (t if a == b else 0) for b in idx] for a in idx])
            return (size / mpmath.mpf(2) * mpmath.log(a_mu / (N + a_mu)) - size * N / 2 * mpmath.log(mpmath.pi)
                    + log_multigamma((N + nu) / 2) - log_multigamma(nu / 2) + nu / 2 * size * mpmath.log(t)
                    - (N + nu) / 2 * mpmath.log(mpmath.det(r)))

        return float(g((*parents, child)) - g(parents))


@pytest.mark.parametrize("alpha_mu,alpha_w", [(1.0, 1e6), (1.0, 1e12), (1.0, 1e16), (1e-3, 1e30), (1e80, 1e40),
                                              (1e-90, 6.0), (1e90, 5.0 + 1e-9)])
def test_extreme_priors_keep_their_digits(alpha_mu, alpha_w):
    """Against 60-digit arithmetic of the closed form: differences of g lost every digit at α_w = 10¹⁶ (a review:
    OPT 180 nats off, a wrong credible set, exit 0); the family form keeps them at the priors it accepts on
    well-conditioned data."""
    score = make_score("bge", from_dataframe(gaussian_frame(12, N=50)), alpha_mu=alpha_mu, alpha_w=alpha_w)
    for child, parents in [(0, ()), (1, (0,)), (2, (0, 1)), (3, (0, 1, 2)), (0, (3,))]:
        want = kuipers_local_score(score, child, parents)
        assert score.local(child, parents) == pytest.approx(want, rel=1e-10, abs=1e-8)


def test_scores_double_precision_cannot_resolve_are_refused_naming_the_prior():
    """A second review: where t is far below the data's rounding and a child (or parent) is nearly determined by the
    others, Q = S_ii − ‖L⁻¹S_Πi‖² keeps no digit — a duplicated column at α_μ = 10⁻⁵⁰ scored 1367.14 where the closed
    form gives 5695.86, nearly collinear columns moved OPT by 14.5 nats (exit 0), and N ≤ n raised numpy's
    LinAlgError. Now each family carries a rounding bound and such a score is an InputError naming --alpha-mu and
    --alpha-w; the same data at the default prior score as 60-digit arithmetic says."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=100)
    data = from_dataframe(pd.DataFrame(np.c_[x, x, rng.normal(size=100)], columns=list("abc")))
    with pytest.raises(InputError, match=r"'b' given \{a\}.*alpha_mu \(--alpha-mu, 1e-50\) or "
                                         r"alpha_w \(--alpha-w, 5\.0\)"):
        make_score("bge", data, alpha_mu=1e-50).local(1, (0,))
    with pytest.raises(InputError, match=r"given \{a, b\}|the parents \{a, b\}"):
        make_score("bge", data, alpha_mu=1e-50).local(2, (0, 1))
    fine = make_score("bge", data)
    for child, parents in [(1, (0,)), (2, (0, 1)), (0, (1, 2))]:
        assert fine.local(child, parents) == pytest.approx(kuipers_local_score(fine, child, parents), rel=1e-10)
    two = from_dataframe(pd.DataFrame({"a": [0.1, 1.9], "b": [0.7, 2.2], "c": [0.3, -1.3]}))
    with pytest.raises(InputError, match="--alpha-mu"):
        make_score("bge", two, alpha_mu=1e-30).local(1, (0, 2))


def test_a_prior_that_outweighs_the_data_past_the_search_is_refused():
    """α_μ = 10⁻¹⁰⁰ with α_w = 10⁹⁹ (t ≈ 0.1, accepted) gives scores near 10¹⁰⁰, which the table check refused as
    "spread too far … rescale them" (a review); the score says what to change instead."""
    data = from_dataframe(gaussian_frame(14, N=30))
    with pytest.raises(InputError, match=r"outweighs the data.*--alpha-w"):
        make_score("bge", data, alpha_mu=1e-100, alpha_w=1e99).local(0, ())


def test_priors_beyond_the_doubles_range_are_refused():
    data = from_dataframe(gaussian_frame(13, N=30))
    with pytest.raises(InputError, match=r"alpha_mu \(--alpha-mu\) must be a finite number ≥ 1e-100"):
        make_score("bge", data, alpha_mu=1e-320)
    for alpha_mu, alpha_w in [(1.0, 1e300), (1e-100, 5.5)]:
        with pytest.raises(InputError, match=r"--alpha-mu.*--alpha-w.*outside \[1e-100, 1e\+100\]"):
            make_score("bge", data, alpha_mu=alpha_mu, alpha_w=alpha_w)


def test_standardised_scores_ignore_the_columns_units_and_raw_ones_do_not():
    frame = gaussian_frame(3, N=60)
    moved = frame * np.array([1e-3, 7.0, -2.0, 1e4]) + np.array([5.0, -3e3, 0.0, 1e6])
    one, other = (make_score("bge", from_dataframe(f)) for f in (frame, moved))
    raw_one, raw_other = (make_score("bge", from_dataframe(f), standardize=False) for f in (frame, moved))
    for child, parents in [(0, ()), (1, (0,)), (3, (0, 1, 2)), (2, (3,))]:
        assert one.local(child, parents) == pytest.approx(other.local(child, parents), rel=1e-9)
    assert abs(raw_one.local(3, (0, 1, 2)) - raw_other.local(3, (0, 1, 2))) > 1.0


@pytest.mark.parametrize("standardize", [True, False])
def test_a_column_far_from_zero_is_centred_without_losing_its_digits(standardize):
    """y + 10¹⁵ (integers: exact in floats) scores as y: the raw mean of such a column is off by its rounding, and
    every centred value with it — 0.27 nats on 40 rows (a review). The columns are centred less a central value
    first (:func:`bnilp.scores.base.centred_columns`)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=40)
    y = np.round(3 * x + rng.normal(size=40))
    near, far = (make_score("bge", from_dataframe(pd.DataFrame({"x": x, "y": y + off})), standardize=standardize)
                 for off in (0.0, 1e15))
    for child, parents in [(1, (0,)), (1, ()), (0, (1,))]:
        assert far.local(child, parents) == pytest.approx(near.local(child, parents), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed,n,N", [(0, 4, 30), (1, 5, 200), (2, 5, 1000)])
def test_credible_dags_classes_and_posteriors_equal_brute_force(seed, n, N):
    """The pipeline (R1-pruned walk, search, classes counted from their CPDAGs) lists the same credible DAGs with
    the same posteriors as every DAG of the unpruned table, at three Bayes factors, DAG by DAG and class by
    class."""
    score = make_score("bge", from_dataframe(gaussian_frame(10 + seed, N=N, n=n)))
    everything = full_table(score)
    for bf in (3, 20, 150):
        eps = math.log(bf)
        opt, want = brute_force_credible(everything, eps)
        table = score_parent_sets(score, epsilon=eps)
        assert table.meta["score_equivalent"] is True
        for mode in ("dags", "mecs"):
            result = solve_table(table, epsilon=eps, enumerate_by=mode)
            assert result.solution.complete and result.solution.status == "optimal"
            assert result.solution.optimum == pytest.approx(opt, abs=1e-9)
            assert result.report["n_networks"] == len(want)
            assert result.report["n_mecs"] == len({vp_key(p) for _, p in want})
            assert_posteriors_equal(result, brute_posteriors(want, score.data.names))
            if mode == "dags":
                assert {as_key(p) for _, p in want} == {as_key(net.parents) for net in result.solution.networks}


def test_learn_finds_the_gaussian_test_network(shared_data):
    """bnlearn's gaussian.test (5,000 rows of a known linear-Gaussian network, pygobnilp's gaussian.dat): the
    optimal network under BGe is the true DAG [A][B][E][G][C|A:B][D|B][F|A:D:E:G]."""
    result = learn(shared_data / "pygobnilp" / "gaussian.dat", score="bge", bf=3)
    want = {"A": set(), "B": set(), "E": set(), "G": set(), "C": {"A", "B"}, "D": {"B"},
            "F": {"A", "D", "E", "G"}}
    assert result.solution.status == "optimal"
    best = result.solution.networks[0].parents
    assert vp_key(best) == vp_key({v: frozenset(ps) for v, ps in want.items()})


def test_bge_refuses_discrete_columns_and_settings_out_of_range():
    frame = gaussian_frame(4, N=30)
    mixed = from_dataframe(frame.assign(D=np.arange(30) % 3), discrete=["D"])
    with pytest.raises(InputError, match=r"continuous columns only; 'D' is discrete"):
        make_score("bge", mixed)
    data = from_dataframe(frame)
    with pytest.raises(InputError, match="alpha_w"):
        make_score("bge", data, alpha_w=5.0)          # n + 1: t = 0
    with pytest.raises(InputError, match="alpha_mu"):
        make_score("bge", data, alpha_mu=0.0)
    with pytest.raises(InputError, match="penalty_discount"):
        make_score("bge", data, penalty_discount=2.0)
    with pytest.raises(InputError, match="standardize"):
        make_score("bge", data, standardize="yes")


def test_learn_reads_integer_columns_as_continuous_for_bge():
    """With a continuous-only score a column of small integers is continuous (the default inference would make
    it discrete), in the API as on the command line."""
    frame = gaussian_frame(5, N=80).assign(K=np.arange(80) % 4)
    with pytest.raises(InputError, match="'K' is discrete"):       # inferred discrete by default
        make_score("bge", from_dataframe(frame))
    result = learn(frame, score="bge", bf=3)
    assert result.solution.status == "optimal"
    assert not any(result.dataset.is_discrete(j) for j in range(result.dataset.n))
    typed = learn(from_dataframe(frame, continuous="all"), score="bge", bf=3)
    assert typed.solution.optimum == result.solution.optimum


def test_a_rescaled_copy_keeps_its_settings():
    """with_data (a permuted copy, a subset of columns) rebuilds the same prior: α_w stays n + 2 of *its* data
    where it was left at the default."""
    data = from_dataframe(gaussian_frame(6, N=30, n=5))
    score = make_score("bge", data, alpha_mu=2.0, standardize=False)
    again = score.with_data(data)
    assert (again.alpha_mu, again.alpha_w, again.standardize) == (2.0, 7.0, False)
    assert again.local(4, (0, 2)) == score.local(4, (0, 2))
    fewer = score.with_data(data.columns(["X0", "X1", "X2"]))
    assert fewer.alpha_w == 5.0


def _write(tmp_path, frame: pd.DataFrame) -> str:
    path = tmp_path / "g.csv"
    frame.to_csv(path, index=False)
    return str(path)


def test_cli_learns_with_bge_and_says_what_it_counted(tmp_path, runner):
    path = _write(tmp_path, gaussian_frame(7, N=200).assign(K=np.arange(200) % 3))
    out = tmp_path / "r.json"
    res = runner.invoke(main, ["learn", path, "--score", "bge", "--bf", "20", "--json", str(out)])
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    assert report["enumerate"] == "mecs" and "bge is score-equivalent" in report["enumerate_reason"]
    assert report["scoring"]["score"] == "bge" and report["scoring"]["alpha_w"] == 7.0     # n + 2, K continuous
    assert report["scoring"]["standardize"] is True
    assert "bge is score-equivalent" in res.output
    assert "every column continuous for a continuous-only score (--score bge); integers with ≤ 10 distinct values " \
           "read as numbers: K" in res.output       # what the inference would have made discrete is named
    out_raw = tmp_path / "raw.json"
    raw = runner.invoke(main, ["learn", path, "--score", "bge", "--raw-units", "--alpha-w", "9", "--alpha-mu", "2",
                               "--bf", "20", "--json", str(out_raw)])
    assert raw.exit_code == 0, raw.output
    settings = json.loads(out_raw.read_text())["scoring"]
    assert (settings["alpha_mu"], settings["alpha_w"], settings["standardize"]) == (2.0, 9.0, False)
    assert json.loads(out_raw.read_text())["optimum"] != report["optimum"]


@pytest.mark.parametrize("args,flag", [
    (["--score", "bge", "--alpha-w", "5"], "--alpha-w"),
    (["--score", "bge", "--alpha-mu", "0"], "--alpha-mu"),
    (["--score", "bic", "--alpha-mu", "2"], "--alpha-mu"),
    (["--score", "cg", "--raw-units"], "--raw-units"),
    (["--score", "bge", "--penalty-discount", "2"], "--penalty-discount"),
    (["--score", "bge", "--discrete", "X0"], "'X0' is discrete"),
])
def test_cli_refuses_bad_bge_settings_in_one_line(tmp_path, runner, args, flag):
    path = _write(tmp_path, gaussian_frame(8, N=40))
    res = runner.invoke(main, ["learn", path, *args])
    assert res.exit_code == 2, res.output
    assert flag in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_cli_refuses_a_column_of_labels_for_bge(tmp_path, runner):
    path = _write(tmp_path, gaussian_frame(9, N=40).assign(L=["a", "b"] * 20))
    res = runner.invoke(main, ["learn", path, "--score", "bge"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "L" in res.output
    assert load_data(path, continuous=["X0"]).n == 5


def test_jobs_2_gives_the_same_score_file(tmp_path, runner):
    """BGe's walk on two processes (the score and its set cache pickled to the workers) writes the same bytes."""
    path = _write(tmp_path, gaussian_frame(11, N=300, n=7))
    files = []
    for jobs in ("1", "2"):
        out = tmp_path / f"j{jobs}.scores"
        res = runner.invoke(main, ["score", path, "--score", "bge", "--bf", "20", "--palim", "3", "--jobs", jobs,
                                   "-o", str(out), "-q"])
        assert res.exit_code in (0, 3), res.output
        files.append(out.read_bytes())
    assert files[0] == files[1] and len(files[0]) > 1000
