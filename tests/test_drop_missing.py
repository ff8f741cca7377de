"""Complete-case analysis (``drop_missing``, ``--drop-missing``): the rows with a missing value are left out and
counted, and what is learned is exactly what the file of the complete rows gives. Missing values stay an error
without it (bnilp needs complete data), now saying how to leave those rows out."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from bnilp.cli import main
from bnilp.data import from_dataframe, load_data
from bnilp.errors import InputError
from tests.conftest import random_discrete_frame


def _with_holes(seed: int = 3, N: int = 300) -> tuple[pd.DataFrame, np.ndarray]:
    """A random discrete frame as text, with ~5 % of its cells emptied or set to '?', and the complete rows."""
    frame = random_discrete_frame(seed, n=5, N=N).astype(str)
    rng = np.random.default_rng(seed)
    holes = rng.random(frame.shape) < 0.05
    tokens = rng.choice(["", "?"], size=frame.shape)
    frame = frame.mask(holes, pd.DataFrame(tokens, index=frame.index, columns=frame.columns))
    return frame, ~holes.any(axis=1)


def test_the_complete_rows_score_exactly_as_the_file_of_the_complete_rows(tmp_path) -> None:
    frame, complete = _with_holes()
    holed, clean = tmp_path / "holed.csv", tmp_path / "clean.csv"
    frame.to_csv(holed, index=False)
    frame[complete].to_csv(clean, index=False)
    runner = CliRunner()
    res = runner.invoke(main, ["score", str(holed), "--missing", "?", "--drop-missing", "-o",
                               str(tmp_path / "a.scores")])
    assert res.exit_code == 0, res.output
    left_out = int((~complete).sum())
    assert f"left out {left_out} of 300 rows with a missing value (--drop-missing): N = {300 - left_out}" in res.output
    assert runner.invoke(main, ["score", str(clean), "-q", "-o", str(tmp_path / "b.scores")]).exit_code == 0
    assert (tmp_path / "a.scores").read_text() == (tmp_path / "b.scores").read_text()
    meta = json.loads((tmp_path / "a.scores.json").read_text())
    assert meta["N"] == 300 - left_out and meta["rows_dropped_missing"] == left_out
    res = runner.invoke(main, ["learn", str(holed), "--missing", "?", "--drop-missing", "-q", "--json",
                               str(tmp_path / "r.json")])
    assert res.exit_code == 0 and "left out" not in res.output      # -q
    assert json.loads((tmp_path / "r.json").read_text())["scoring"]["rows_dropped_missing"] == left_out


def test_without_it_a_missing_value_is_an_error_that_says_how_to_leave_its_row_out(tmp_path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("a,b\n0,1\n1,\n0,0\n")
    with pytest.raises(InputError, match=r"d\.csv:3: column 'b': missing value '' \(.*drop_missing=True, "
                                         r"--drop-missing\)"):
        load_data(path)
    with pytest.raises(InputError, match=r"row 1, column 'b': missing value \(.*drop_missing=True"):
        from_dataframe(pd.DataFrame({"a": [0, 1, 0], "b": [1.0, None, 0.0]}))


def test_dropping_keeps_the_file_lines_and_frame_labels_of_later_errors_and_refuses_an_empty_result(tmp_path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("a,b\n0,1\n1,\n0,0\n1,x\n")          # b: labels once line 3 is left out
    data = load_data(path, drop_missing=True, discrete="a")
    assert data.N == 3 and data.rows_dropped_missing == 1 and data.describe()["rows_dropped_missing"] == 1
    path.write_text("a,b\n0,1\n1,\n0,0\n1,0.5\n2,?\n")
    with pytest.raises(InputError, match=r"d\.csv:6: column 'b' holds numbers except '\?'.*"
                                         r"--missing '\?' --drop-missing"):
        load_data(path, drop_missing=True)
    frame = pd.DataFrame({"a": ["x", None, "y", "y"], "b": [1.0, 2.0, np.nan, 0.5]}, index=[10, 11, 12, 13])
    data = from_dataframe(frame, drop_missing=True)
    assert data.N == 2 and data.rows_dropped_missing == 2 and data.levels[0] == ["x", "y"]
    with pytest.raises(InputError, match=r"row 3 \(index 13\)"):      # the row as the caller's frame has it
        from_dataframe(frame.assign(b=[1.0, 2.0, np.nan, np.inf]), drop_missing=True)
    assert "rows_dropped_missing" not in from_dataframe(frame.dropna()).describe()
    with pytest.raises(InputError, match="every row has a missing value"):
        from_dataframe(pd.DataFrame({"a": [None, 1.0], "b": [2.0, None]}), drop_missing=True)
    path.write_text("a,b\n,1\n1,\n")
    with pytest.raises(InputError, match=r"d\.csv: every row has a missing value: drop_missing \(--drop-missing\)"):
        load_data(path, drop_missing=True)


def test_a_dataframe_s_empty_or_blank_text_cells_are_missing_and_dropped_as_a_csv_s_are() -> None:
    """``from_dataframe(drop_missing=True)`` dropped NA cells only; a row with ``''`` or ``' '`` (missing in a CSV,
    and refused as such by the frame's own check) was refused with the advice to give ``drop_missing=True``."""
    frame = pd.DataFrame({"a": ["x", "", "y", "x", " ", "y"], "b": ["1", "2", "3", "1", "2", "3"],
                          "c": pd.Categorical(["u", "v", None, "v", "u", "u"])})
    data = from_dataframe(frame, drop_missing=True)
    assert (data.N, data.rows_dropped_missing) == (3, 3)


def test_the_stray_token_error_suggests_one_missing_list_with_every_token_given_and_found(tmp_path) -> None:
    """The error named '?' and 'n/a' but suggested ``--missing '?'`` alone, and once given, the next error suggested
    ``--missing n/a``, dropping the '?' already given: a suggestion to paste must hold them all."""
    rng = np.random.default_rng(1)
    cells = [f"{x:.3f}" for x in rng.normal(size=40)]
    cells[5], cells[9] = "?", "n/a"
    path = tmp_path / "st.csv"
    path.write_text("a,b\n" + "".join(f"{c},{k % 2}\n" for k, c in enumerate(cells)))
    with pytest.raises(InputError, match=r"with --missing '\?,n/a' --drop-missing — from Python "
                                         r"missing='\?,n/a', drop_missing=True"):
        load_data(path)
    with pytest.raises(InputError, match=r"with --missing 'NA,\?,n/a' --drop-missing"):
        load_data(path, missing="NA")
    assert load_data(path, missing="?,n/a", drop_missing=True).N == 38


def test_quiet_silences_the_rows_left_out_line_in_every_command(tmp_path) -> None:
    frame, complete = _with_holes()
    holed = tmp_path / "holed.csv"
    frame.to_csv(holed, index=False)
    runner = CliRunner()
    for args in (["score", str(holed), "-o", str(tmp_path / "a.scores")],
                 ["proxy-search", str(holed), "--method", "greedy"]):
        res = runner.invoke(main, [*args, "--missing", "?", "--drop-missing", "-q"])
        assert res.exit_code == 0 and "left out" not in res.output, res.output
        res = runner.invoke(main, [*args, "--missing", "?", "--drop-missing"])
        assert res.exit_code == 0 and "left out" in res.output, res.output


def test_an_exported_network_names_the_rows_left_out_and_the_data_it_was_fitted_on(tmp_path) -> None:
    """``--export`` JSON and BIF carry ``rows_dropped_missing`` and the data file's SHA-256 beside N (the export
    said N alone, so a network fitted on the complete rows could not be told from one fitted on a complete file)."""
    import hashlib

    frame, complete = _with_holes(N=200)
    holed = tmp_path / "holed.csv"
    frame.to_csv(holed, index=False)
    runner = CliRunner()
    for out in ("net.json", "net.bif"):
        res = runner.invoke(main, ["learn", str(holed), "--missing", "?", "--drop-missing", "-q", "--bf", "1",
                                   "--optimum-only", "--export", str(tmp_path / out)])
        assert res.exit_code == 0, res.output
    digest, left_out = hashlib.sha256(holed.read_bytes()).hexdigest(), int((~complete).sum())
    fitted = json.loads((tmp_path / "net.json").read_text())
    assert (fitted["N"], fitted["rows_dropped_missing"], fitted["data_sha256"]) == (200 - left_out, left_out, digest)
    bif = (tmp_path / "net.bif").read_text()
    assert f"(N = {200 - left_out}; {left_out} rows with a missing value left out)" in bif
    assert f"data SHA-256 {digest}" in bif


def test_a_blank_line_between_rows_is_a_row_of_missing_cells_and_left_out(tmp_path) -> None:
    """README (Formats): a blank line between rows is a row of missing cells — an error, and ``--drop-missing``
    leaves such rows out. A line of delimiters alone was left out, but a blank line (or one of spaces) stayed a
    field-count error under ``drop_missing`` too (a review)."""
    body = "a,b,c\n0,1,2\n1,0,1\n"
    clean = load_data(_write(tmp_path, "clean.csv", body + "0,0,0\n1,1,2\n"))
    for hole in ("\n", "   \n", ",,\n", "\t\n"):
        data = load_data(_write(tmp_path, "holed.csv", body + hole + "0,0,0\n" + hole + "1,1,2\n"), drop_missing=True)
        assert data.rows_dropped_missing == 2 and np.array_equal(data.codes, clean.codes), repr(hole)
        assert (data.names, data.arities, data.levels) == (clean.names, clean.arities, clean.levels)
    with pytest.raises(InputError, match=r"holed\.csv:4: expected 3 fields, found 0"):      # without it: an error
        load_data(_write(tmp_path, "holed.csv", body + "\n0,0,0\n"))
    # a whole row of quoted spaces in a whitespace-separated file is a row of states, kept (a review of the fix)
    quoted = _write(tmp_path, "q.txt", 'a b\n1 " "\n2 x\n" " " "\n1 x\n2 " "\n')
    kept = load_data(quoted, drop_missing=True)
    assert kept.rows_dropped_missing == 0 and kept.codes.shape[0] == 5 and kept.arities == load_data(quoted).arities


def _write(folder, name: str, text: str):
    path = folder / name
    path.write_text(text)
    return path
