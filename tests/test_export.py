"""Fitted parameters and exports: BIF/XMLBIF read back by pgmpy, JSON, pgmpy networks, bnlearn strings.

Oracles: counts by plain Python loops over the DataFrame's labels (not bnilp's codes), the formulas
ML = n_ijk / n_ij and Bayes = (n_ijk + α) / (n_ij + r·α) with α = ESS / (r·q), least squares by the
normal equations per configuration, and pgmpy's own readers and inference (test-only dependency).
"""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import bnilp
from bnilp.cli import main
from bnilp.data import default_path, from_dataframe, load_data
from bnilp.errors import InputError
from bnilp.export import (
    bif_text,
    cpdag_parents,
    fit_parameters,
    json_text,
    model_string,
    parse_model_string,
    to_pgmpy,
    write_bif,
    write_xmlbif,
    xmlbif_text,
)
from tests.conftest import random_discrete_frame

ASIA = default_path("asia.csv")


@pytest.fixture(scope="module")
def asia_result():
    return bnilp.learn(ASIA, score="bic", bf=20)


@pytest.fixture
def labelled_frame() -> pd.DataFrame:
    """Random dependent data with string labels s0, s1, …"""
    return random_discrete_frame(5, n=4, N=300).map(lambda v: f"s{v}")


DAG = {"V0": [], "V1": ["V0"], "V2": ["V0", "V1"], "V3": ["V2"]}


def loop_counts(df: pd.DataFrame, child: str, parents: list[str]) -> tuple[list[tuple[str, ...]], list[str], Counter]:
    """(configurations in product order, child states, Counter[(config, state)]) by a loop over rows."""
    states = {c: sorted(set(df[c])) for c in df.columns}
    counts: Counter = Counter()
    for _, row in df.iterrows():
        counts[(tuple(row[p] for p in parents), row[child])] += 1
    configs = list(itertools.product(*(states[p] for p in parents)))
    return configs, states[child], counts


def pgmpy_table(model, var: str) -> tuple[list[str], np.ndarray]:
    """(evidence, values as (q, r) rows per parent configuration, last parent fastest) of a pgmpy CPD."""
    cpd = model.get_cpds(var)
    values = np.asarray(cpd.get_values(), dtype=float)
    return list(cpd.variables[1:]), values.T


def assert_same_network(model, fitted, rename=lambda v, s: s) -> None:
    """pgmpy's model holds the fitted network: parents, state names (after ``rename``) and CPTs."""
    assert set(model.nodes()) == set(fitted["variables"])
    for v, e in fitted["variables"].items():
        evidence, values = pgmpy_table(model, v)
        assert evidence == e["parents"]
        cpd = model.get_cpds(v)
        assert cpd.state_names[v] == [rename(v, s) for s in e["states"]]
        np.testing.assert_allclose(values, np.asarray(e["cpt"]), rtol=0, atol=1e-15)


# ----------------------------------------------------------------------------------------- parameters

def test_ml_parameters_are_counts_over_totals(labelled_frame) -> None:
    fitted = fit_parameters(from_dataframe(labelled_frame), DAG, method="ml")
    assert fitted["parameters"] == {"method": "ml", "ess": None}
    for child, parents in DAG.items():
        configs, states, counts = loop_counts(labelled_frame, child, parents)
        entry = fitted["variables"][child]
        assert entry["states"] == states
        assert entry["configurations"] == [list(c) for c in configs]
        for j, config in enumerate(configs):
            n = [counts[(config, s)] for s in states]
            assert list(entry["counts"][j]) == n
            total = sum(n)
            want = [x / total for x in n] if total else [1 / len(states)] * len(states)
            np.testing.assert_allclose(entry["cpt"][j], want, rtol=1e-14)


@pytest.mark.parametrize("ess", [1.0, 10.0])
def test_bayes_parameters_add_the_bdeu_pseudocounts(labelled_frame, ess) -> None:
    fitted = fit_parameters(from_dataframe(labelled_frame), DAG, method="bayes", ess=ess)
    assert fitted["parameters"] == {"method": "bayes", "ess": ess}
    for child, parents in DAG.items():
        configs, states, counts = loop_counts(labelled_frame, child, parents)
        r, q = len(states), len(configs)
        alpha = ess / (r * q)
        for j, config in enumerate(configs):
            n = [counts[(config, s)] for s in states]
            want = [(x + alpha) / (sum(n) + r * alpha) for x in n]
            np.testing.assert_allclose(fitted["variables"][child]["cpt"][j], want, rtol=1e-14)


@pytest.mark.parametrize("method", ["ml", "bayes"])
def test_cpt_rows_sum_to_one_even_for_unobserved_configurations(method) -> None:
    df = random_discrete_frame(3, n=5, N=40, max_arity=4)        # few rows: many empty configurations
    parents = {"V0": [], "V1": ["V0"], "V2": ["V0", "V1"], "V3": ["V0", "V1", "V2"], "V4": ["V3"]}
    fitted = fit_parameters(from_dataframe(df), parents, method=method)
    empty = 0
    for e in fitted["variables"].values():
        cpt = np.asarray(e["cpt"])
        np.testing.assert_allclose(cpt.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        assert (cpt >= 0).all()
        empty += int((np.asarray(e["counts"]).sum(axis=1) == 0).sum())
    assert empty > 0


def test_bdeu_runs_default_to_bayes_parameters_with_the_runs_ess(labelled_frame) -> None:
    res = bnilp.learn(labelled_frame, score="bdeu", ess=4.0, bf=1)
    fitted = res.fit()
    assert fitted["parameters"] == {"method": "bayes", "ess": 4.0}
    assert fitted["score"] == "bdeu" and fitted["network"]["rank"] == 1
    assert res.fit(method="ml")["parameters"]["method"] == "ml"
    assert bnilp.learn(labelled_frame, score="bic", bf=1).fit()["parameters"]["method"] == "ml"


def test_fit_checks_its_arguments(asia_result, labelled_frame) -> None:
    with pytest.raises(InputError, match=r"^method \(--parameters\) must be one of"):
        asia_result.fit(method="mle")
    with pytest.raises(InputError, match="network=99"):
        asia_result.fit(network=99)
    for ess in (-1, "abc", "2", True, float("nan")):      # a number > 0, not a string or a bool
        with pytest.raises(InputError, match=r"^ess \(--ess\) must be a finite number > 0, got "):
            asia_result.fit(method="bayes", ess=ess)
    # an ESS whose α = ESS/(r·q) underflows gave an unseen configuration the row 0/0 = NaN (a review)
    for ess in (5e-324, 1e-323, 1e-101):
        with pytest.raises(InputError, match=r"^ess \(--ess\) must be a finite number ≥ 1e-100, got "):
            asia_result.fit(method="bayes", ess=ess)
    tiny = asia_result.fit(method="bayes", ess=1e-100)
    assert all(np.isfinite(np.asarray(e["cpt"], dtype=float)).all() for e in tiny["variables"].values())
    fitted = asia_result.fit()
    lacking = {**fitted, "variables": {**fitted["variables"], "asia": {"parents": [], "states": ["no", "yes"]}}}
    with pytest.raises(InputError, match=r"^fitted: the entry of variable 'asia' lacks 'type'"):
        to_pgmpy(lacking)
    # what passed the check and failed in a writer, or named the wrong thing (a review)
    either = fitted["variables"]["either"]
    for entry, words in (({"type": "weird"}, r"has type 'weird', not 'discrete' or 'continuous'"),
                         ({k: v for k, v in either.items() if k != "configurations"}, r"lacks 'configurations'"),
                         ({**either, "cpt": "x"}, r"CPT of variable 'either' must be a table of numbers"),
                         ({**either, "cpt": either["cpt"][:1]}, r"one row per configuration \(4\)")):
        broken = {**fitted, "variables": {**fitted["variables"], "either": entry}}
        for use in (to_pgmpy, bif_text):
            with pytest.raises(InputError, match=r"^fitted: .*" + words):
                use(broken)
    with pytest.raises(InputError, match=r"^fitted must be the dict"):
        bif_text({k: v for k, v in fitted.items() if k != "parameters"})
    with pytest.raises(InputError, match="not columns of the data"):
        asia_result.fit(labelled_frame)
    other = pd.read_csv(ASIA, keep_default_na=False)
    other.loc[0, "xray"] = "maybe"                      # three states where the network had two
    with pytest.raises(InputError, match="'xray' has 3 states"):
        asia_result.fit(other)


def test_constant_columns_are_absent_and_the_export_says_so(labelled_frame, tmp_path) -> None:
    df = labelled_frame.assign(K="same")
    res = bnilp.learn(df, bf=1)
    fitted = res.fit()
    assert "K" not in fitted["variables"] and "K" in fitted["absent"]
    assert "K (constant column" in bif_text(fitted)
    assert "K (constant column" in xmlbif_text(fitted)
    assert "K" in json.loads(json_text(fitted))["absent"]


# ----------------------------------------------------------------------------------------- BIF / XMLBIF

def test_bif_round_trips_through_pgmpy_on_asia(asia_result, tmp_path) -> None:
    readwrite = pytest.importorskip("pgmpy.readwrite")
    for network in (0, len(asia_result.solution.networks) - 1):
        fitted = asia_result.fit(network=network, method="bayes", ess=2.0)
        write_bif(fitted, tmp_path / "asia.bif")
        assert_same_network(readwrite.BIFReader(str(tmp_path / "asia.bif")).get_model(), fitted)


def test_xmlbif_round_trips_through_pgmpy_on_asia(asia_result, tmp_path) -> None:
    readwrite = pytest.importorskip("pgmpy.readwrite")
    fitted = asia_result.fit(method="ml")
    write_xmlbif(fitted, tmp_path / "asia.xmlbif")
    assert_same_network(readwrite.XMLBIFReader(str(tmp_path / "asia.xmlbif")).get_model(), fitted)


def test_bif_and_xmlbif_round_trip_on_a_table1_data_set(shared_data, tmp_path) -> None:
    """tic-tac-toe (Table 1): variables named 0..9, states the integer codes 0, 1, 2 as written."""
    readwrite = pytest.importorskip("pgmpy.readwrite")
    data = load_data(shared_data / "liao2019_ebnsl" / "tic-tac-toe.csv", no_header=True)
    res = bnilp.learn(data, bf=1)
    fitted = res.fit(method="bayes")
    assert fitted["variables"]["0"]["states"] == ["0", "1", "2"]
    assert any(len(e["parents"]) >= 2 for e in fitted["variables"].values())
    res.export(tmp_path / "ttt.bif", data)
    res.export(tmp_path / "ttt.xmlbif", data)
    assert_same_network(readwrite.BIFReader(str(tmp_path / "ttt.bif")).get_model(), res.fit())
    assert_same_network(readwrite.XMLBIFReader(str(tmp_path / "ttt.xmlbif")).get_model(), res.fit())


def test_awkward_labels_are_made_safe_in_bif_and_kept_in_xmlbif(tmp_path) -> None:
    readwrite = pytest.importorskip("pgmpy.readwrite")
    rng = np.random.default_rng(0)
    labels = np.array(["None", "a b", "a_b", "x,y", "{odd}", "-1.5"])
    a = rng.integers(0, 6, 400)
    b = np.where(rng.random(400) < 0.7, a % 3, rng.integers(0, 3, 400))
    df = pd.DataFrame({"first var": labels[a], "B": np.array(["10", "2", "NA"])[b]})
    data = from_dataframe(df, discrete=["first var", "B"])
    fitted = fit_parameters(data, {"first var": [], "B": ["first var"]}, method="bayes")
    assert fitted["variables"]["first var"]["states"] == sorted(labels)
    write_bif(fitted, tmp_path / "odd.bif")
    text = (tmp_path / "odd.bif").read_text()
    assert 'variable "first var" -> first_var' in text and 'state "a b" of first_var -> a_b_2' in text
    safe = {"None": "None", "a b": "a_b_2", "a_b": "a_b", "x,y": "x_y", "{odd}": "_odd_", "-1.5": "-1.5",
            "10": "10", "2": "2", "NA": "NA"}
    model = readwrite.BIFReader(str(tmp_path / "odd.bif")).get_model()
    renamed = {"first_var": "first var", "B": "B"}
    for v, e in fitted["variables"].items():
        cpd = model.get_cpds({"first var": "first_var"}.get(v, v))
        assert cpd.state_names[cpd.variable] == [safe[s] for s in e["states"]]
        assert [renamed[p] for p in cpd.variables[1:]] == e["parents"]
        np.testing.assert_allclose(np.asarray(cpd.get_values()).T, e["cpt"], atol=1e-15)
    write_xmlbif(fitted, tmp_path / "odd.xmlbif")
    assert_same_network(readwrite.XMLBIFReader(str(tmp_path / "odd.xmlbif")).get_model(), fitted)


def test_bif_names_pgmpy_would_misread_are_renamed_and_round_trip(tmp_path) -> None:
    """pgmpy's BIF reader lowercases names (so 'A' and 'a' would share one CPD) and finds a keyword and a
    number inside a name ('table1' read as 'table 1', also inside 'xdefault2e'): such names are written
    renamed — unique ignoring case, '_' after the keyword — the header says so, and the model reads back."""
    readwrite = pytest.importorskip("pgmpy.readwrite")
    rng = np.random.default_rng(4)
    x = rng.integers(0, 2, 400)
    names = ["A", "a", "table1", "xdefault2e", "tablet"]
    df = pd.DataFrame({nm: np.where(rng.random(400) < 0.85, x, 1 - x) for nm in names})
    data = from_dataframe(df, discrete=names)
    fitted = fit_parameters(data, {"A": [], "a": ["A"], "table1": ["a"], "xdefault2e": ["table1"], "tablet": ["A"]})
    write_bif(fitted, tmp_path / "n.bif")
    text = (tmp_path / "n.bif").read_text()
    safe = {"A": "A", "a": "a_2", "table1": "table_1", "xdefault2e": "xdefault_2e", "tablet": "tablet"}
    assert all(f'variable "{v}" -> {t}' in text for v, t in safe.items() if v != t)
    model = readwrite.BIFReader(str(tmp_path / "n.bif")).get_model()
    assert set(model.nodes()) == set(safe.values()) and model.check_model()
    for v, e in fitted["variables"].items():
        evidence, values = pgmpy_table(model, safe[v])
        assert evidence == [safe[p] for p in e["parents"]]
        np.testing.assert_allclose(values, np.asarray(e["cpt"]), rtol=0, atol=1e-15)


def test_names_no_format_holds_are_refused_or_kept_out_of_the_syntax(tmp_path) -> None:
    """XMLBIF cannot hold a control character even escaped: refused in one line naming it; a constant column
    whose quoted name holds a line break stays inside BIF's header comment."""
    df = pd.DataFrame({"a": ["x\x01y", "z", "z", "x\x01y"], "b": ["0", "1", "1", "0"], "k\nnetwork {": ["c"] * 4})
    data = from_dataframe(df, discrete=["a", "b", "k\nnetwork {"])
    fitted = fit_parameters(data, {"a": [], "b": ["a"]})
    fitted["absent"] = {"k\nnetwork {": "constant column (one value): left out of the network"}
    with pytest.raises(InputError, match="control character U[+]0001 of the state"):
        write_xmlbif(fitted, tmp_path / "n.xmlbif")
    assert not (tmp_path / "n.xmlbif").exists()
    write_bif(fitted, tmp_path / "n.bif")
    lines = (tmp_path / "n.bif").read_text().splitlines()
    assert sum(ln.startswith("network ") for ln in lines) == 1
    assert all(ln.startswith("// ") for ln in lines[:lines.index("network bnilp {")])
    # a lone surrogate (a DataFrame's label; no UTF-8 encodes it) was a UnicodeEncodeError traceback (a review)
    lone = from_dataframe(pd.DataFrame({"a\ud800": ["0", "1", "1", "0"], "b": ["0", "1", "1", "0"]}), discrete="all")
    with pytest.raises(InputError, match="XMLBIF cannot hold the lone surrogate U[+]D800 of the variable"):
        write_xmlbif(fit_parameters(lone, {"a\ud800": [], "b": []}), tmp_path / "s.xmlbif")
    assert not (tmp_path / "s.xmlbif").exists()


def test_xmlbif_headers_spell_out_what_xml_cannot_hold_and_names_keep_carriage_returns(tmp_path) -> None:
    """What XMLBIF only describes (a dropped column's name, the data file's path) may hold a control character:
    it is spelled ``\\u0001`` and the file stays well-formed; a carriage return in a name or state is written
    ``&#13;`` and reads back exactly (a raw one reads back as a line feed)."""
    from xml.etree import ElementTree

    df = pd.DataFrame({"p\rq": ["x\ry", "t", "t", "x\ry"], "r": ["u", "v", "v", "u"]})
    data = from_dataframe(df, discrete=["p\rq", "r"])
    fitted = fit_parameters(data, {"p\rq": [], "r": ["p\rq"]})
    fitted["absent"] = {"k\x01": "constant column (one value): left out of the network"}
    fitted["source"] = "src\x01.csv"
    write_xmlbif(fitted, tmp_path / "n.xmlbif")
    root = ElementTree.parse(tmp_path / "n.xmlbif").getroot()
    properties = " ".join(e.text for e in root.iter("PROPERTY"))
    assert "k\\u0001" in properties and "src\\u0001.csv" in properties
    assert [e.text for e in root.iter("NAME")][1:] == ["p\rq", "r"]
    assert [e.text for e in root.iter("OUTCOME")][:2] == ["t", "x\ry"]
    assert [e.text for e in root.iter("GIVEN")] == ["p\rq"]


def test_bif_refuses_continuous_variables_naming_them(tmp_path) -> None:
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"D": rng.choice(["a", "b"], 200), "X": rng.normal(size=200), "Y": rng.normal(size=200)})
    data = from_dataframe(df, discrete=["D"], continuous=["X", "Y"])
    fitted = fit_parameters(data, {"D": [], "X": ["D"], "Y": ["X"]})
    for writer in (write_bif, write_xmlbif):
        with pytest.raises(InputError, match=r"discrete networks only, but X, Y are continuous"):
            writer(fitted, tmp_path / "m.bif")
    with pytest.raises(InputError, match="X, Y are continuous and the rest discrete .pgmpy has no conditional"):
        to_pgmpy(fitted)


# ----------------------------------------------------------------------------------------- JSON (CG networks)

def test_json_holds_linear_gaussian_regressions_per_discrete_parent_configuration(tmp_path) -> None:
    rng = np.random.default_rng(2)
    N = 500
    d = rng.choice(["lo", "hi", "mid"], N)
    z1, z2 = rng.normal(size=N), rng.normal(size=N)
    y = np.where(d == "hi", 2.0, -1.0) + 0.5 * z1 - 1.5 * z2 + rng.normal(scale=0.3, size=N)
    e = rng.choice(["u", "v"], N)
    df = pd.DataFrame({"D": d, "Z1": z1, "Z2": z2, "Y": y, "E": e})
    data = from_dataframe(df, discrete=["D", "E"], continuous=["Z1", "Z2", "Y"])
    fitted = fit_parameters(data, {"D": [], "Z1": [], "Z2": ["Z1"], "Y": ["D", "Z1", "Z2"], "E": ["Y"]})
    entry = json.loads(json_text(fitted))["variables"]["Y"]
    assert entry["discrete_parents"] == ["D"] and entry["continuous_parents"] == ["Z1", "Z2"]
    assert entry["configurations"] == [["hi"], ["lo"], ["mid"]]
    for (label,), reg in zip(entry["configurations"], entry["regressions"], strict=True):
        rows = d == label
        X = np.column_stack([np.ones(rows.sum()), z1[rows], z2[rows]])
        beta = np.linalg.solve(X.T @ X, X.T @ y[rows])
        rss = float(((y[rows] - X @ beta) ** 2).sum())
        assert reg["n"] == rows.sum() and not reg["degenerate"]
        np.testing.assert_allclose([reg["intercept"], *reg["coefficients"]], beta, rtol=1e-10)
        assert reg["variance"] == pytest.approx(rss / rows.sum(), rel=1e-10)
    assert json.loads(json_text(fitted))["variables"]["E"]["cpt"] is None
    assert "unparameterised" in fitted["variables"]["E"]


def test_an_exact_linear_fit_is_degenerate_and_an_ess_ml_would_ignore_is_refused() -> None:
    """A child that is a linear function of its parent (Z2 = 2·Z1 + 1) has σ² = 0 up to rounding (~1e-30 from
    least squares, not 0): flagged ``degenerate``, as the exact 0 was; a small true noise is not. ``ess`` with
    ``method="ml"`` would be ignored: refused naming it (the CLI refuses ``--ess`` there likewise)."""
    rng = np.random.default_rng(5)
    z1 = rng.normal(scale=3.0, size=200)
    df = pd.DataFrame({"Z1": z1, "Z2": 2 * z1 + 1, "Z3": z1 + rng.normal(scale=1e-6, size=200)})
    data = from_dataframe(df, continuous=["Z1", "Z2", "Z3"])
    fitted = fit_parameters(data, {"Z1": [], "Z2": ["Z1"], "Z3": ["Z1"]})
    (exact,), (noisy,) = fitted["variables"]["Z2"]["regressions"], fitted["variables"]["Z3"]["regressions"]
    assert exact["degenerate"] and exact["variance"] < 1e-20
    assert not noisy["degenerate"] and noisy["variance"] == pytest.approx(1e-12, rel=0.3)
    with pytest.raises(InputError, match="ess=5 goes with method='bayes' only"):
        fit_parameters(data, {"Z1": []}, method="ml", ess=5)


@pytest.mark.parametrize("offset, scale", [(1e7, 1.0), (1e8, 1.0), (0.0, 1e-15), (1e3, 1e-5), (-5e9, 30.0)])
def test_regressions_do_not_depend_on_the_parents_offset_or_scale(offset, scale) -> None:
    """Least squares is equivariant: with Z′ = offset + scale·Z the slopes are b/scale and the residuals
    unchanged. Oracle: the fit on the well-conditioned (Z′ − offset)/scale (normal equations), mapped back.
    On [1, Z′] as read, a parent at 10⁷ ± 1 or 10⁻¹⁵ passed lstsq's cut-off: slope ~0, σ² ~ Var(Y),
    ``degenerate`` (a review's timestamps)."""
    rng = np.random.default_rng(3)
    N = 300
    d = rng.choice(["a", "b"], N)
    z1, z2 = rng.normal(size=N), rng.normal(size=N)
    y = 3 + 2 * z1 - z2 + np.where(d == "a", 1.0, 0.0) + 0.1 * rng.normal(size=N)
    zs1, zs2 = offset + scale * z1, offset + scale * z2
    data = from_dataframe(pd.DataFrame({"D": d, "Z1": zs1, "Z2": zs2, "Y": y}), discrete=["D"])
    fitted = fit_parameters(data, {"D": [], "Z1": [], "Z2": [], "Y": ["D", "Z1", "Z2"]})
    for (label,), reg in zip(fitted["variables"]["Y"]["configurations"], fitted["variables"]["Y"]["regressions"],
                             strict=True):
        rows = d == label
        X = np.column_stack([np.ones(rows.sum()), (zs1[rows] - offset) / scale, (zs2[rows] - offset) / scale])
        b = np.linalg.solve(X.T @ X, X.T @ y[rows])
        rss = float(((y[rows] - X @ b) ** 2).sum())
        assert not reg["degenerate"]
        np.testing.assert_allclose(reg["coefficients"], b[1:] / scale, rtol=1e-6)
        assert reg["intercept"] == pytest.approx(b[0] - offset * (b[1] + b[2]) / scale, rel=1e-6, abs=1e-6)
        assert reg["variance"] == pytest.approx(rss / rows.sum(), rel=1e-6)


def test_cli_learn_exports_json_of_a_mixed_network_and_refuses_bif(tmp_path) -> None:
    rng = np.random.default_rng(3)
    N = 300
    d = rng.choice(["a", "b"], N)
    x = np.where(d == "a", 1.0, -1.0) + rng.normal(size=N)
    path = tmp_path / "mixed.csv"
    pd.DataFrame({"D": d, "X": x, "Y": x + rng.normal(size=N)}).to_csv(path, index=False)
    runner = CliRunner()
    res = runner.invoke(main, ["learn", str(path), "--score", "cg", "--bf", "3", "--continuous", "X,Y", "-q",
                               "--export", str(tmp_path / "m.bif")])
    assert res.exit_code == 2
    assert res.output.strip().splitlines()[-1].startswith("bnilp: error: BIF holds discrete networks only")
    assert "X, Y are continuous" in res.output and not (tmp_path / "m.bif").exists()
    res = runner.invoke(main, ["learn", str(path), "--score", "cg", "--bf", "3", "--continuous", "X,Y", "-q",
                               "--export", str(tmp_path / "m.json"), "--json", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["variables"]["X"]["type"] == "continuous" and doc["parameters"]["method"] == "ml"
    assert json.loads((tmp_path / "r.json").read_text())["export"]["format"] == "json"


def test_bayes_parameters_say_that_continuous_children_are_maximum_likelihood(tmp_path) -> None:
    """``--parameters bayes`` concerns discrete children's CPTs: where a child is continuous its regressions are ML
    whatever the method, and the export says so (``parameters.continuous``, a note, the console line); with every
    column continuous (BGe) it would change nothing, so it is refused before the search, as other settings a run
    would ignore are (it recorded ``bayes, ESS 1`` alone, though no parameter was a posterior mean)."""
    rng = np.random.default_rng(5)
    N = 200
    d = rng.choice(["a", "b"], N)
    x = np.where(d == "a", 1.0, -1.0) + rng.normal(size=N)
    frame = pd.DataFrame({"D": d, "X": x, "Y": x + rng.normal(size=N)})
    (tmp_path / "mixed.csv").write_text(frame.to_csv(index=False))
    (tmp_path / "gauss.csv").write_text(frame[["X", "Y"]].to_csv(index=False))
    runner = CliRunner()
    res = runner.invoke(main, ["learn", str(tmp_path / "mixed.csv"), "--bf", "3", "--score", "cg", "--continuous",
                               "X,Y", "--parameters", "bayes", "--export", str(tmp_path / "m.json")])
    assert res.exit_code == 0, res.output
    assert "with bayes, ESS 1 for the CPTs, ml regressions parameters to" in " ".join(res.output.split())
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["parameters"] == {"method": "bayes", "ess": 1.0, "continuous": "ml"}
    note = [n for n in doc["notes"] if n.startswith("method 'bayes' concerns the discrete children")]
    assert len(note) == 1 and "(X, Y) are maximum-likelihood regressions" in note[0]
    res = runner.invoke(main, ["learn", str(tmp_path / "gauss.csv"), "--bf", "3", "--score", "bge", "--parameters",
                               "bayes", "--export", str(tmp_path / "g.json"), "--json", str(tmp_path / "r.json")])
    assert res.exit_code == 2 and not (tmp_path / "g.json").exists() and not (tmp_path / "r.json").exists()
    assert res.output.strip().splitlines()[-1].startswith("bnilp: error: --parameters bayes sets the discrete")
    assert "scored" not in res.output
    data = from_dataframe(frame, continuous=["X", "Y"])
    fitted = fit_parameters(data, {"D": [], "X": ["D"], "Y": ["X"]}, method="bayes", ess=2.0)
    assert fitted["variables"]["D"]["cpt"] == pytest.approx(       # α = ESS/(r·q) = 1: a Dirichlet-smoothed CPT
        np.array([[(np.sum(d == "a") + 1.0) / (N + 2.0), (np.sum(d == "b") + 1.0) / (N + 2.0)]]))
    ml = fit_parameters(data, {"D": [], "X": ["D"], "Y": ["X"]})
    assert ml["parameters"] == {"method": "ml", "ess": None, "continuous": "ml"}
    assert ml["variables"]["Y"] == fitted["variables"]["Y"]
    assert not any(n.startswith("method 'bayes'") for n in ml["notes"])
    unparameterised = fit_parameters(data, {"X": [], "D": ["X"], "Y": ["X"]}, method="bayes")
    assert unparameterised["variables"]["D"]["cpt"] is None
    assert any("no discrete child here has a CPT" in n for n in unparameterised["notes"])
    with pytest.raises(InputError, match=r"method='bayes' .* every variable of the network is continuous"):
        fit_parameters(data, {"X": [], "Y": ["X"]}, method="bayes")


# ----------------------------------------------------------------------------------------- pgmpy

def test_pgmpy_inference_on_the_fitted_network_equals_enumeration(asia_result) -> None:
    """P(lung | xray = yes) from pgmpy's variable elimination equals summing the fitted joint."""
    inference = pytest.importorskip("pgmpy.inference")
    fitted = asia_result.fit()
    model = asia_result.to_pgmpy()
    assert model.check_model()
    got = inference.VariableElimination(model).query(["lung"], evidence={"xray": "yes"}, show_progress=False)
    variables = fitted["variables"]
    names = list(variables)
    joint: Counter = Counter()
    for combo in itertools.product(*(range(len(variables[v]["states"])) for v in names)):
        state = dict(zip(names, combo, strict=True))
        if variables["xray"]["states"][state["xray"]] != "yes":
            continue
        p = 1.0
        for v, e in variables.items():
            config = [variables[q]["states"][state[q]] for q in e["parents"]]
            p *= e["cpt"][e["configurations"].index(config)][state[v]]
        joint[state["lung"]] += p
    total = math.fsum(joint.values())
    want = [joint[k] / total for k in range(len(variables["lung"]["states"]))]
    np.testing.assert_allclose(got.values, want, rtol=1e-10)
    assert got.state_names["lung"] == variables["lung"]["states"]


@pytest.mark.parametrize("score", ["cg", "bge"])
def test_a_continuous_network_goes_to_pgmpy_as_a_linear_gaussian_network_of_the_same_likelihood(score) -> None:
    """Every variable continuous: a ``LinearGaussianBayesianNetwork`` whose joint N(μ, Σ) (pgmpy's
    ``to_joint_gaussian``) gives the data the log-likelihood of the ML regressions — Σ_v −n/2·(ln 2πσ̂²_v + 1),
    σ̂²_v the residual mean square of v's least-squares fit on its parents (numpy's ``lstsq`` here) — which under
    CG is OPT plus its penalty ½·ln N·Σ_v (k_v + 2); columns of very different scales and offsets."""
    pytest.importorskip("pgmpy.models")
    rng = np.random.default_rng(8)
    N = 400
    x = rng.normal(size=(N, 4))
    x[:, 1] += 0.9 * x[:, 0]
    x[:, 2] += 0.6 * x[:, 1] - 0.5 * x[:, 3]
    frame = pd.DataFrame(x * [2.0, 0.01, 300.0, 1.0] + [5.0, -1.0, 1e4, 0.0], columns=["A", "B", "C", "D"])
    result = bnilp.learn(from_dataframe(frame, continuous="all"), score=score, bf=1, optimum_only=True)
    model = result.to_pgmpy()
    assert type(model).__name__ == "LinearGaussianBayesianNetwork" and model.check_model()
    parents = result.solution.networks[0].parents
    assert {v: set(model.get_parents(v)) for v in frame} == {v: set(ps) for v, ps in parents.items()}
    want = 0.0
    for v, ps in parents.items():
        design = np.column_stack([np.ones(N), *(frame[p] for p in sorted(ps))])
        residual = frame[v] - design @ np.linalg.lstsq(design, frame[v], rcond=None)[0]
        want += -N / 2 * (math.log(2 * math.pi * float(residual @ residual) / N) + 1)
    own = 0.0                                       # the pgmpy CPDs' own parameters, conditional by conditional
    for v in frame:
        cpd = model.get_cpds(v)
        mean = cpd.beta[0] + sum(b * frame[p] for b, p in zip(cpd.beta[1:], cpd.evidence, strict=True))
        own += float(np.sum(-0.5 * np.log(2 * math.pi * cpd.std**2) - (frame[v] - mean) ** 2 / (2 * cpd.std**2)))
    assert own == pytest.approx(want, rel=1e-11)
    # pgmpy's joint N(μ, Σ) over columns whose variances span 1e-4 to 1e5 keeps about 7 digits (its logpdf of the
    # same parameters moves by 3e-4 nats with the scales: numerics, not the export)
    if hasattr(model, "log_likelihood"):       # pgmpy ≥ 1.1 (which needs NumPy 2); 1.0, in the extra's range, lacks it
        assert model.log_likelihood(frame) == pytest.approx(want, rel=1e-6)
    if score == "cg":
        penalty = 0.5 * math.log(N) * sum(len(ps) + 2 for ps in parents.values())
        assert want - penalty == pytest.approx(result.solution.optimum, rel=1e-9)
    exact = frame.assign(B=2.0 * frame["A"] + 1.0)          # B an exact linear function of A: σ² ≈ 0
    degenerate = fit_parameters(from_dataframe(exact, continuous="all"), {"A": [], "B": ["A"], "C": ["B"], "D": []})
    assert degenerate["variables"]["B"]["regressions"][0]["degenerate"]
    with pytest.raises(InputError, match=r"to_pgmpy: the regression of B is degenerate"):
        to_pgmpy(degenerate)
    with pytest.raises(InputError, match="needs the pgmpy extra|discrete or a linear-Gaussian"):
        to_pgmpy({**result.fit(), "variables": {**result.fit()["variables"],
                                                 "E": {"type": "discrete", "parents": [], "states": ["0", "1"],
                                                       "configurations": [[]], "cpt": [[0.5, 0.5]]}}})


# ----------------------------------------------------------------------------------------- model strings

def test_model_string_is_bnlearns_syntax() -> None:
    assert model_string({"C": {"A", "B"}, "B": {"A"}, "A": set()}, order=["A", "B", "C"]) == "[A][B|A][C|A:B]"
    assert parse_model_string("[A][B|A] [C|A:B]") == {"A": frozenset(), "B": {"A"}, "C": {"A", "B"}}
    for bad in ("[A][B|A", "[A][A]", "[A|B]", "[A|]", "A[B]"):
        with pytest.raises(InputError, match="model string"):
            parse_model_string(bad)
    with pytest.raises(InputError, match="may not contain"):
        model_string({"a:b": set()})


def test_model_string_parses_back_to_the_same_dag(asia_result, shared_data) -> None:
    for k, net in enumerate(asia_result.solution.networks):
        assert parse_model_string(asia_result.model_string(network=k)) == net.parents
    data = load_data(shared_data / "liao2019_ebnsl" / "tic-tac-toe.csv", no_header=True)
    res = bnilp.learn(data, bf=1)
    assert parse_model_string(res.model_string()) == res.solution.networks[0].parents


def test_cpdag_model_string_writes_undirected_edges_as_mutual_parents(asia_result) -> None:
    for k, mec in enumerate(asia_result.report["mecs"]):
        parsed = parse_model_string(asia_result.model_string(mec=k))
        undirected = {frozenset((u, v)) for v, ps in parsed.items() for u in ps if v in parsed[u]}
        directed = {(u, v) for v, ps in parsed.items() for u in ps if v not in parsed[u]}
        assert undirected == {frozenset(e) for e in mec["cpdag"]["undirected"]}
        assert directed == {tuple(e) for e in mec["cpdag"]["directed"]}
    assert any(mec["cpdag"]["undirected"] for mec in asia_result.report["mecs"])
    one = cpdag_parents(["A", "B", "C"], [("A", "C"), ("B", "C")], [])
    assert model_string(one) == "[A][B][C|A:B]"


# ----------------------------------------------------------------------------------------- CLI

def test_cli_learn_export_options(tmp_path) -> None:
    pytest.importorskip("pgmpy.readwrite")
    from pgmpy.readwrite import BIFReader

    runner = CliRunner()
    out = tmp_path / "asia.bif"
    res = runner.invoke(main, ["learn", "--score", "bdeu", "--ess", "5", "--bf", "3", "-q", "--export", str(out),
                               "--export-network", "2", "--json", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["export"]["network"] == 2
    assert report["export"]["parameters"] == {"method": "bayes", "ess": 5.0}
    assert report["export"]["score"] == report["networks"][1]["score"]
    model = BIFReader(str(out)).get_model()
    second = report["networks"][1]["parents"]
    assert {v: sorted(model.get_parents(v)) for v in second} == {v: sorted(ps) for v, ps in second.items()}
    res = runner.invoke(main, ["learn", "--bf", "3", "-q", "--export", str(tmp_path / "a.json"),
                               "--parameters", "bayes"])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "a.json").read_text())["parameters"] == {"method": "bayes", "ess": 1.0}


@pytest.mark.parametrize("enumerate_by, says", [("mecs", True), ("dags", False), ("mecs --list-dags", False)])
def test_cli_export_line_says_when_networks_are_class_representatives(tmp_path, enumerate_by, says) -> None:
    """Under ``--list-dags`` the networks are every DAG of every class: the line said "one per equivalence class"
    there too (a review)."""
    res = CliRunner().invoke(main, ["learn", "--bf", "3", "--enumerate", *enumerate_by.split(),
                                    "--export", str(tmp_path / "a.json")], terminal_width=200)
    assert res.exit_code == 0, res.output
    line = next(t for t in res.output.splitlines() if t.startswith("exported network 1 of "))
    assert ("(one per equivalence class)" in line) is says


def test_cli_export_line_of_a_capped_dag_listing_says_no_class_representatives(tmp_path) -> None:
    """``--list-dags --max-networks 5``: five DAGs of two classes, not one per class (a review: the capped listing's
    own words were not recognised as --list-dags)."""
    res = CliRunner().invoke(main, ["learn", "--bf", "20", "--list-dags", "--max-networks", "5",
                                    "--export", str(tmp_path / "a.json")], terminal_width=200)
    assert res.exit_code == 3, res.output
    line = next(t for t in res.output.splitlines() if t.startswith("exported network 1 of "))
    assert line.startswith("exported network 1 of 5 with") and "equivalence class" not in line


def test_cli_export_network_past_those_found_writes_the_other_outputs_then_exits_2(tmp_path) -> None:
    """Network K is known to be missing only after the search: the search's outputs are still written (the
    JSON's ``export`` says why nothing was exported), no model file is, and the exit is 2 with one line."""
    out, model = tmp_path / "r.json", tmp_path / "m.bif"
    res = CliRunner().invoke(main, ["learn", "-q", "--bf", "1", "--export", str(model), "--export-network", "50",
                                    "--json", str(out)])
    assert res.exit_code == 2 and not model.exists()
    doc = json.loads(out.read_text())
    assert doc["complete"] is True and doc["export"]["network"] == 50
    assert doc["export"]["error"].startswith(f"--export-network 50: only {len(doc['networks'])} network(s)")
    assert res.output.strip().splitlines()[-1] == f"bnilp: error: {doc['export']['error']}"


def test_an_export_that_fails_after_a_limited_run_exits_2_and_says_the_limit_too(tmp_path) -> None:
    """Under a palim the run is limited (exit 3), but no model file was written: the exit was 3, read by a script as
    "written, but limited" (a review). The export's error wins, exit 2, and the limit's line is still printed."""
    model = tmp_path / "m.bif"
    res = CliRunner().invoke(main, ["learn", "-q", "--palim", "1", "--export", str(model), "--export-network", "50"])
    assert res.exit_code == 2 and not model.exists()
    assert "bnilp: error: --export-network 50: only" in res.output and "bnilp: limited: " in res.output


@pytest.mark.parametrize("args, pattern", [
    (["--export", "m.txt"], "unknown export format '.txt'"),
    (["--export-network", "2"], "--export-network needs --export"),
    (["--parameters", "ml"], "--parameters needs --export"),
    (["--export", "m.bif", "--export-network", "0"], "--export-network must lie in 1.."),
    (["--export", "m.bif", "--bf", "1", "--export-network", "50"], "--export-network 50: only "),
])
def test_cli_export_errors_are_one_line_with_exit_2(tmp_path, args, pattern) -> None:
    res = CliRunner().invoke(main, ["learn", "-q", *[str(tmp_path / a) if a.startswith("m.") else a for a in args]])
    assert res.exit_code == 2
    assert pattern in res.output
    assert res.output.strip().splitlines()[-1].startswith("bnilp: error:")


def test_an_export_of_a_limited_run_says_so_in_its_json_and_file_headers(tmp_path) -> None:
    """Export files said nothing of a palim or an unproven optimum (a review): a BIF from ``--palim 1`` read as the
    optimal network. ``network`` now has ``optimum_proven``, ``limits`` and, where there are limits, ``limited`` in
    words, and the BIF/XMLBIF header comments say them; a run without limits says nothing more."""
    out = {}
    for name, args in (("limited", ["--palim", "1"]), ("whole", [])):
        for ext in ("json", "bif", "xmlbif"):
            path = tmp_path / f"{name}.{ext}"
            res = CliRunner().invoke(main, ["learn", str(ASIA), "--bf", "3", "-q", *args, "--export", str(path)])
            assert res.exit_code == (3 if args else 0), res.output
            out[name, ext] = path.read_text()
    limited = json.loads(out["limited", "json"])["network"]
    assert limited["limits"] == ["palim"] and limited["optimum_proven"] is True
    assert limited["limited"] == "exact for parent sets of size ≤ 1 (palim)"
    assert all("limited: exact for parent sets of size ≤ 1 (palim)" in out["limited", ext] for ext in ("bif", "xmlbif"))
    whole = json.loads(out["whole", "json"])["network"]
    assert whole["limits"] == [] and "limited" not in whole
    assert not any("limited:" in out["whole", ext] or "OPT not proven" in out["whole", ext]
                   for ext in ("bif", "xmlbif"))
    unproven = bnilp.learn(ASIA, bf=3)
    unproven.solution.gap = 0.01                       # as a time limit leaves it: the header says what it is
    fitted = unproven.fit()
    assert fitted["network"]["optimum_proven"] is False
    from bnilp.export import bif_text

    assert "OPT not proven: the best network found" in bif_text(fitted)


def test_an_export_names_the_score_with_its_penalty_discount_and_structure_prior(tmp_path) -> None:
    """The header said ``(score -11285.48, bic)`` for a network scored with a binomial prior and a penalty discount
    of 2 — not its BIC, −11191.91 (a review). JSON ``score`` stays the name; ``score_description`` and the headers
    say the rest (:func:`bnilp.scores.base.score_words`); a table that names no score says so."""
    from bnilp.export import bif_text
    from bnilp.pipeline import solve_table
    from bnilp.scorefile import ScoreTable
    from bnilp.scores.base import score_words

    assert score_words({"score": "bic"}) == score_words({"score": "bic", "penalty_discount": 1.0}) == "bic"
    assert score_words({"score": "bdeu", "prior": "ebic", "ebic_gamma": 1.0}) == "bdeu, EBIC prior (γ = 1)"
    assert score_words({}) == "unnamed score"
    path = tmp_path / "m.json"
    res = CliRunner().invoke(main, ["learn", str(ASIA), "-q", "--prior", "binomial", "--penalty-discount", "2",
                                    "--export", str(path)])
    assert res.exit_code == 0, res.output
    doc = json.loads(path.read_text())
    assert doc["score"] == "bic" and doc["score_description"] == "bic, penalty discount 2, binomial prior (r = 1)"
    assert f"(score {doc['network']['score']!r}, bic, penalty discount 2, binomial prior (r = 1))" in bif_text(doc)
    bare = solve_table(ScoreTable(variables=["asia", "smoke"],
                                  families={"asia": {frozenset(): -1.0}, "smoke": {frozenset(): -2.0}}))
    assert "(score -3.0, unnamed score)" in bif_text(bare.fit(ASIA))


def test_cpdag_parents_and_model_string_check_their_arguments() -> None:
    """A fuzz of the API (a review): ``cpdag_parents('ab', …)`` split the string into variables, a directed edge
    given both ways was drawn as an undirected one, bad edges were bare TypeErrors; ``model_string(order='ba')``
    read the letters and an unknown name in ``order`` was ignored."""
    from bnilp.export import cpdag_parents, model_string

    with pytest.raises(InputError, match="variables must be a list of variable names"):
        cpdag_parents("ab", [("a", "b")], [])
    with pytest.raises(InputError, match="directed: both 'b' → 'a' and 'a' → 'b'"):
        cpdag_parents(["a", "b"], [("a", "b"), ("b", "a")], [])
    with pytest.raises(InputError, match="directed must be a list of"):
        cpdag_parents(["a", "b"], None, [])
    with pytest.raises(InputError, match="an edge is a pair"):
        cpdag_parents(["a", "b"], [("a", "b", "c")], [])
    with pytest.raises(InputError, match="order must be a list of variable names"):
        model_string({"a": [], "b": ["a"]}, order="ba")
    with pytest.raises(InputError, match="order names 'zz'"):
        model_string({"a": [], "b": ["a"]}, order=["zz"])
    assert model_string(cpdag_parents(["a", "b", "c"], [("a", "c")], [("a", "b")]), ["a", "b", "c"]) == \
        "[a|b][b|a][c|a]"


def test_a_path_that_ends_in_a_slash_is_refused_by_every_writer(asia_result, tmp_path) -> None:
    """The command line refuses ``--export x.bif/`` (it names a folder); the API wrote ``x.bif`` instead (``Path``
    drops the slash), and a score file's writer said "Is a directory" where there was none (a review). Now every
    atomic writer refuses it, writing nothing."""
    from bnilp.export import write_bif, write_json
    from bnilp.scorefile import write_jaakkola

    fitted = asia_result.fit()
    for write in (lambda p: asia_result.export(p), lambda p: write_bif(fitted, p), lambda p: write_json(fitted, p),
                  lambda p: write_jaakkola(asia_result.table, p)):
        for path in (f"{tmp_path}/out.bif/", f"{tmp_path}/sub/x.json/", f"{tmp_path}/o.bif/.", f"{tmp_path}/o.bif/.."):
            with pytest.raises(InputError, match=r"ends in '/'( and a dot)?: it names a folder, give a file name$"):
                write(path)
    assert list(tmp_path.iterdir()) == []


def test_xmlbif_names_the_variable_whose_state_it_cannot_hold() -> None:
    """A control character in a state is refused naming the state and its variable (it named the state only)."""
    from bnilp.export import check_xml_text

    with pytest.raises(InputError, match=r"of the state 'n\\x02o' of the variable 'xray' \(XML 1\.0 has none"):
        check_xml_text({"asia": ["no", "yes"], "xray": ["n\x02o", "yes"]})
    with pytest.raises(InputError, match=r"of the variable 'x\\x01' \(XML"):
        check_xml_text({"x\x01": ["a", "b"]})


def test_an_export_from_a_list_cut_short_says_what_its_rank_ranks_among(tmp_path) -> None:
    """A list cut by ``--max-networks`` is the best of those *found*, not the top of the credible set (a review:
    tic-tac-toe cut at 1,000 of 4,097 DAGs exported its 2nd listed DAG as "network 2 of 1000", 19.9 nats below the
    true 2nd best, with nothing in the file to say so). The export's ``network`` carries the search's ``status``
    and ``complete`` and, where the list is not complete, ``ranking`` in words — in the JSON, the BIF/XMLBIF
    headers and the console line; the best network of a proven OPT is still called the best."""
    cut = bnilp.learn(ASIA, bf=1e6, enumerate_by="dags", max_networks=5)
    assert cut.solution.status == "network_limit" and not cut.solution.complete
    second = cut.fit(network=1)["network"]
    assert second["status"] == "network_limit" and second["complete"] is False
    assert second["ranking"] == ("the list is not complete (status network_limit): network 2 ranks among the 5 "
                                 "listed, not among every credible network")
    best = cut.fit(network=0)["network"]
    assert best["optimum_proven"] and best["ranking"] == "the list is not complete (status network_limit)"
    whole = bnilp.learn(ASIA, bf=20).fit(network=1)["network"]      # 2 classes of 15 DAGs, complete
    assert whole["complete"] is True and whole["status"] == "optimal" and "ranking" not in whole
    only = bnilp.learn(ASIA, bf=1, optimum_only=True).fit()["network"]
    assert only["ranking"].startswith("optimum only")
    for ext in ("bif", "xmlbif", "json"):
        path = tmp_path / f"m.{ext}"
        res = CliRunner().invoke(main, ["learn", str(ASIA), "--bf", "1e6", "--enumerate", "dags", "--max-networks",
                                        "5", "--export", str(path), "--export-network", "2"])
        assert res.exit_code == 3, res.output
        assert second["ranking"] in " ".join(res.output.split())
        text = path.read_text()
        assert second["ranking"] in (json.loads(text)["network"]["ranking"] if ext == "json" else text)
