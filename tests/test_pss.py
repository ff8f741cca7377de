"""PSS score files (URLearning's "parent set scores"): written, read, told apart from Jaakkola files by their
text, solved like them, and every malformed file refused with its line and column."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from bnilp.cli import main
from bnilp.errors import InputError
from bnilp.pipeline import solve_table
from bnilp.scorefile import (
    PSS_SUFFIX,
    ScoreTable,
    format_pss,
    parse_pss,
    read_jaakkola,
    read_pss,
    read_score_file,
    write_jaakkola,
    write_pss,
    write_score_file,
)
from tests.oracles import urlearning_style_read

ASIA = Path(__file__).resolve().parents[1] / "bnilp" / "instances" / "asia.csv"


def random_table(seed: int, meta: dict | None = None) -> ScoreTable:
    """Random families on 3–6 variables (every variable its empty set, up to 6 other sets of up to 3 parents)."""
    rng = np.random.default_rng(seed)
    names = [f"X{i}" for i in range(int(rng.integers(3, 7)))]
    families = {}
    for v in names:
        others = [u for u in names if u != v]
        family = {frozenset(): float(-rng.uniform(1, 1e4))}
        for _ in range(int(rng.integers(0, 7))):
            k = int(rng.integers(1, min(3, len(others)) + 1))
            family[frozenset(rng.choice(others, size=k, replace=False).tolist())] = float(-rng.uniform(1, 1e4))
        families[v] = family
    return ScoreTable(names, families, dict(meta or {}))


@pytest.mark.parametrize("seed", range(6))
def test_a_pss_file_reads_back_the_table_it_was_written_from(tmp_path, seed) -> None:
    """Every family and score exactly (repr precision), the variables in order; with the sidecar its whole record,
    without it what the header says: the score, BDeu's ESS, N, the arities and a palim that cut the table."""
    meta = {"score": "bdeu" if seed % 2 else "bic", "N": 100 + seed, "palim": 2, "palim_reached": bool(seed % 3),
            "exact_for_parent_sets_up_to": 2 if seed % 3 else None, "epsilon": math.log(20)}
    table = random_table(seed, meta)
    if seed % 2:
        table.meta["ess"] = 0.5
    table.meta["arities"] = {v: 2 + i % 3 for i, v in enumerate(table.variables)}
    path = tmp_path / "t.pss"
    assert write_score_file(table, path) == f"{path}.json"
    for read in (read_pss, read_score_file):
        back = read(path)
        assert back.variables == table.variables and back.families == table.families
        assert back.meta["epsilon"] == table.meta["epsilon"] and back.meta["score"] == table.meta["score"]
    Path(f"{path}.json").unlink()
    header = read_score_file(path).meta
    assert header["score"] == table.meta["score"] and header["N"] == 100 + seed
    assert header.get("ess") == (0.5 if seed % 2 else None)
    assert header["arities"] == table.meta["arities"]
    assert header.get("palim_reached", False) == bool(seed % 3)
    assert header.get("exact_for_parent_sets_up_to") == (2 if seed % 3 else None)
    assert "epsilon" not in header            # nothing in a PSS header records it


@pytest.mark.parametrize("seed", range(6))
def test_what_bnilp_writes_reads_the_same_under_urlearnings_line_rules(seed) -> None:
    table = random_table(seed, {"score": "bic", "N": 50})
    variables, families = urlearning_style_read(format_pss(table))
    assert variables == table.variables and families == table.families


def test_a_file_of_either_format_is_read_by_its_text_whatever_its_name(tmp_path) -> None:
    table = random_table(1, {"score": "bic"})
    (tmp_path / "jaakkola.pss").write_text(Path(_written(write_jaakkola, table, tmp_path / "j.scores")).read_text())
    (tmp_path / "pss.scores").write_text("# made elsewhere\n" + format_pss(table).replace("META", "meta", 1)
                                         .replace("VAR ", "var ", 1))
    for name in ("jaakkola.pss", "pss.scores"):
        back = read_score_file(tmp_path / name)
        assert back.variables == table.variables and back.families == table.families
    with pytest.raises(InputError, match=r"pss.scores:2: expected the number of variables, found 'meta': a PSS file"):
        read_jaakkola(tmp_path / "pss.scores")


def _written(write, table: ScoreTable, path: Path) -> Path:
    write(table, path, sidecar=False)
    return path


def _urlearning_text(table: ScoreTable, parent_limit: int, largest: int | None = None) -> str:
    """A table in the layout URLearning's ``score`` writes (its header — score_type in lower case, parent_limit n − 1
    for none, ⌊ln(2N/ln N)⌋ for BIC below that —, ``META values``, six decimals, trailing spaces), sets of at
    most ``largest`` parents."""
    lines = ["META pss_version = 0.1", f"META input_file={ASIA}", "META num_records=5000",
             f"META parent_limit={parent_limit}", "META score_type=bic", "META ess=1.000000", ""]
    for v in table.variables:
        lines += [f"VAR {v}", "META arity=2", "META values=no yes "]
        lines += [f"{s:f} " + "".join(f"{p} " for p in sorted(ps)) for ps, s in table.families[v].items()
                  if largest is None or len(ps) <= largest] + [""]
    return "\n".join(lines)


def test_a_urlearning_file_is_solved_as_the_same_table_in_jaakkola_form(tmp_path) -> None:
    """A file in URLearning's own layout (no sidecar): the same credible set as the Jaakkola file of the same
    scores, classes enumerated because its score_type says bic; its parent_limit of n − 1 is no limit, one below
    that (URLearning's BIC cap) a palim that cut the table, and a set above it a contradiction."""
    from bnilp.data import load_data
    from bnilp.parentsets import score_parent_sets
    from bnilp.scores import make_score

    table = score_parent_sets(make_score("bic", load_data(ASIA)), epsilon=math.log(20))
    rounded = ScoreTable(list(table.variables), {v: {p: round(s, 6) for p, s in f.items()}
                                                 for v, f in table.families.items()})
    (tmp_path / "asia.pss").write_text(_urlearning_text(rounded, 7))
    pss = read_score_file(tmp_path / "asia.pss")
    assert pss.families == rounded.families and pss.meta["N"] == 5000 and "palim" not in pss.meta
    a = solve_table(pss, epsilon=math.log(20))
    b = solve_table(rounded, epsilon=math.log(20), enumerate_by="mecs")
    assert a.report["enumerate"] == "mecs" and "no sidecar, and a PSS file's header" in a.report["pruning_note"]
    assert a.report["n_mecs"] == b.report["n_mecs"] > 1 and a.report["optimum"] == b.report["optimum"]
    assert [m["n_dags"] for m in a.report["mecs"]] == [m["n_dags"] for m in b.report["mecs"]]
    assert a.report["edges"] == b.report["edges"] and "palim" not in a.report["limits"]
    (tmp_path / "asia.pss").write_text(_urlearning_text(rounded, 2, largest=2))
    limited = solve_table(read_score_file(tmp_path / "asia.pss"), epsilon=math.log(20))
    assert "palim" in limited.report["limits"] and limited.report["exact_for_parent_sets_up_to"] == 2
    (tmp_path / "asia.pss").write_text(_urlearning_text(rounded, 1))
    with pytest.raises(InputError, match=r"asia.pss:\d+:1: a parent set of 2 for '\w+', but the header says the "
                                         r"file holds parent sets of at most 1"):
        read_score_file(tmp_path / "asia.pss")


def test_a_header_s_score_type_is_a_claim_checked_as_an_assumed_equivalence() -> None:
    """A PSS header's ``score_type`` is not bnilp's record: it was trusted, so an MML table whose header said BIC
    listed its classes as if their DAGs shared a score (a review: 28 DAGs in 7 classes where 7 DAGs are credible).
    Like a file that records nothing it is now assumed and checked by covered reversals, by solve and by count."""
    from bnilp.data import from_dataframe
    from bnilp.parentsets import score_parent_sets
    from bnilp.scores import make_score
    from bnilp.twins import count_credible
    from tests.conftest import random_discrete_frame

    frame = random_discrete_frame(11, n=5, N=400)
    scored = score_parent_sets(make_score("mml", from_dataframe(frame, discrete=list(frame.columns))),
                               epsilon=math.log(150))
    claimed = parse_pss("META score_type=BIC\n" + "".join(
        f"VAR {v}\n" + "".join(f"{s!r} {' '.join(sorted(p))}\n" for p, s in f.items())
        for v, f in scored.families.items()))
    assert claimed.meta["score"] == "bic" and claimed.families == scored.families
    for run in (lambda: solve_table(claimed, epsilon=math.log(150)), lambda: count_credible(claimed, math.log(150))):
        with pytest.raises(InputError, match="needs a score-equivalent table, and this one is not"):
            run()


def test_a_score_type_that_is_not_score_equivalent_lists_dags() -> None:
    text = "META score_type=fNML\nVAR A\n-1 B\n-2\nVAR B\n-1 A\n-2\n"
    table = parse_pss(text)
    assert table.meta["score"] == "fnml"
    assert solve_table(table, epsilon=0.0).report["enumerate"] == "dags"
    with pytest.raises(InputError, match="needs a score-equivalent score; fnml is not"):
        solve_table(table, epsilon=0.0, enumerate_by="mecs")


@pytest.mark.parametrize("text,pattern", [
    ("", r"f: no VAR section"),
    ("META score_type=BIC\n", r"f: no VAR section"),
    ("META score_type=BIC\n-1 A\nVAR A\n-1\n", r"f:2:1: expected META or VAR before the first parent set"),
    ("-1 A\nVAR A\n-1\n", r"f:1:1: expected META or VAR before the first parent set, found '-1'"),
    ("META score_type\nVAR A\n-1\n", r"f:1:1: expected 'META key=value'"),
    ("META ess=1\nMETA  ESS = 2\nVAR A\n-1\n", r"f:2:7: META ess is given twice"),
    ("VAR A\nMETA arity=2\nMETA arity=3\n-1\n", r"f:3:6: META arity of 'A' is given twice"),   # the last won
    ("META score_type=BIC\nMETA ess=abc\nVAR A\n-1\n", r"f:2:10: META ess must be a positive number, got 'abc'"),
    ("META num_records=many\nVAR A\n-1\n", r"f:1:18: META num_records must be an integer ≥ 0, got 'many'"),
    ("META num_records = ١٠\nVAR A\n-1\n", r"f:1:20: META num_records must be an integer ≥ 0, got '١٠'"),
    ("META num_records=+5\nVAR A\n-1\n", r"f:1:18: META num_records must be an integer ≥ 0, got '\+5'"),
    ("META score_type=BDeu\nMETA ess=0\nVAR A\n-1\n", r"f:2:10: META ess must be a number ≥ 1e-100, got '0'"),
    ("META score_type=BDeu\nMETA ess=٣.٥\nVAR A\n-1\n", r"f:2:10: META ess must be a positive number"),
    ("META parent_limit=2.5\nVAR A\n-1\n", r"f:1:19: META parent_limit must be an integer, got '2.5'"),
    ("META parent_limit=1_0\nVAR A\n-1\n", r"f:1:19: META parent_limit must be an integer, got '1_0'"),
    ("META exact_for_parent_sets_up_to=-1\nVAR A\n-1\n", r"f:1:34: META exact_for_parent_sets_up_to must be"),
    ("VAR\n-1\n", r"f:1:1: expected 'VAR NAME'"),
    ("VAR A B\n-1\n", r"f:1:1: expected 'VAR NAME'"),
    ("VAR A\n-1\nVAR A\n-1\n", r"f:3:5: variable 'A' has a second section"),
    ("VAR A\nVAR B\n-1\n", r"f:1:5: variable 'A' has no parent sets"),
    ("VAR A\n-1\n VAR B\n", r"f:3:6: variable 'B' has no parent sets"),
    ("VAR A\n  abc B\nVAR B\n-1\n", r"f:2:3: expected a local score, found 'abc'"),
    ("VAR A\nnan\n", r"f:2:1: local score 'nan' is not finite"),
    ("VAR A\n1_0\n", r"f:2:1: expected a local score, found '1_0'"),
    ("VAR A\n-1  A\n", r"f:2:5: 'A' is listed as its own parent"),
    ("VAR A\n-1 B  B\nVAR B\n-1\n", r"f:2:7: a parent is repeated"),
    ("VAR A\n-1\n-2\n", r"f:3:1: parent set \[\] of 'A' is listed twice"),
    ("VAR A\n-1 B Q\nVAR B\n-1\n", r"f:2:6: parent 'Q' of 'A' is not a declared variable"),
    ("VAR A\nMETA arity=two\n-1\n", r"f:2:12: META arity of 'A' must be an integer ≥ 1, got 'two'"),
    ("META parent_limit=1\nVAR A\n-1 B C\nVAR B\n-1\nVAR C\n-1\nVAR D\n-1\n",
     r"f:3:1: a parent set of 2 for 'A', but the header says the file holds parent sets of at most 1"),
    ("VAR A\n-1e308\nVAR B\n-1e308\n", r"f: the local scores are too large"),
])
def test_malformed_pss_files_are_refused_naming_line_and_column(text: str, pattern: str) -> None:
    with pytest.raises(InputError, match=pattern):
        parse_pss(text, "f")


@pytest.mark.parametrize("name", ["metastasis", "Meta", "covar", "VAR"])
def test_names_urlearnings_reader_would_misread_are_not_written_as_pss(tmp_path, name) -> None:
    table = ScoreTable([name, "B"], {name: {frozenset(): -1.0}, "B": {frozenset(): -1.0, frozenset([name]): -0.5}})
    with pytest.raises(InputError, match=rf"variable '{name}' cannot be written to a PSS file"):
        write_pss(table, tmp_path / "t.pss")
    write_score_file(table, tmp_path / "t.scores")        # the Jaakkola format holds them
    assert not list(tmp_path.glob("t.pss*"))


@pytest.mark.parametrize("cut", [None, 0, 1, 3])
def test_where_a_palim_cut_the_table_reads_back_without_the_sidecar(tmp_path, cut) -> None:
    """bnilp's own header field says the size up to which a cut table is exact — 0 too, which URLearning's
    parent_limit cannot say (there 0 means none); a table no palim cut gets parent_limit n − 1, no limit."""
    meta = {"score": "bic"} if cut is None else {"score": "bic", "palim": cut, "palim_reached": True}
    table = ScoreTable(["A", "B", "C", "D"], {v: {frozenset(): -1.0} for v in "ABCD"}, meta)
    write_pss(table, tmp_path / "t.pss", sidecar=False)
    text = (tmp_path / "t.pss").read_text()
    assert ("META parent_limit=3" in text) == (cut is None or cut == 3)
    back = read_score_file(tmp_path / "t.pss").meta
    assert back.get("palim_reached", False) == (cut is not None)
    assert back.get("exact_for_parent_sets_up_to") == cut


def test_a_table_of_no_recorded_score_leaves_its_equivalence_unknown(tmp_path) -> None:
    """No score_type is written for it, and a score_type that names no score is none: the table's equivalence is
    then unknown (assumed and checked with --enumerate mecs), not "not score-equivalent"."""
    table = ScoreTable(["A", "B"], {"A": {frozenset(): -2.0, frozenset("B"): -1.0},
                                    "B": {frozenset(): -2.0, frozenset("A"): -1.0}})
    assert "score_type" not in format_pss(table)
    for text in (format_pss(table), format_pss(table).replace("META pss", "META score_type=unknown\nMETA pss")):
        back = parse_pss(text)
        assert "score" not in back.meta
        assert solve_table(back, epsilon=0.0, enumerate_by="mecs").report["n_mecs"] == 1


def test_score_writes_pss_by_its_name_and_solve_reads_it_as_the_jaakkola_file(runner, tmp_path) -> None:
    for name in ("a.pss", "a.scores"):
        done = runner.invoke(main, ["score", str(ASIA), "--bf", "20", "-o", str(tmp_path / name), "-q"])
        assert done.exit_code == 0, done.output
    assert (tmp_path / "a.pss").read_text().startswith("META pss_version")
    assert read_pss(tmp_path / "a.pss").families == read_jaakkola(tmp_path / "a.scores").families
    reports = []
    for name in ("a.pss", "a.scores"):
        done = runner.invoke(main, ["solve", str(tmp_path / name), "--bf", "20", "-q", "--json",
                                    str(tmp_path / f"{name}.out.json")])
        assert done.exit_code == 0, done.output
        report = json.loads((tmp_path / f"{name}.out.json").read_text())
        reports.append({k: report[k] for k in ("optimum", "n_mecs", "mecs", "edges", "adjacency", "enumerate")})
    assert reports[0] == reports[1]
    done = runner.invoke(main, ["learn", str(ASIA), "--bf", "3", "-q", "--scores", str(tmp_path / "l" / "x.PSS")])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "l" / "x.PSS").read_text().startswith("META") and (tmp_path / "l" / "x.PSS.json").exists()


@pytest.mark.parametrize("command", ["score", "learn"])
def test_a_column_urlearning_would_misread_is_refused_before_scoring(runner, tmp_path, command) -> None:
    data = tmp_path / "d.csv"
    data.write_text("metastasis,B\n0,1\n1,0\n1,1\n0,0\n")
    flag = "-o" if command == "score" else "--scores"
    done = runner.invoke(main, [command, str(data), flag, str(tmp_path / f"o{PSS_SUFFIX}"), "-q"])
    assert done.exit_code == 2 and f"{flag}: variable 'metastasis' cannot be written to a PSS file" in done.output
    assert len(done.output.strip().splitlines()) == 1 and not list(tmp_path.glob("o*"))
