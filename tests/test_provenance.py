"""Provenance: a result JSON and a score file's sidecar say which bnilp made them (version, Python, system, when),
from which data file (its SHA-256, as ``sha256sum`` gives it) and with which command and search settings — a
published credible set could not be traced to its code, data or options before (nothing recorded the version, the
data's content, the time limit or the network cap)."""

from __future__ import annotations

import datetime
import hashlib
import json

from click.testing import CliRunner

import bnilp
from bnilp.cli import main
from tests.conftest import random_discrete_frame


def _csv(tmp_path):
    path = tmp_path / "small.csv"
    random_discrete_frame(11, n=5, N=400).to_csv(path, index=False)
    return path


def _recent(stamp: str) -> bool:
    made = datetime.datetime.fromisoformat(stamp)
    now = datetime.datetime.now(datetime.timezone.utc)
    return made.utcoffset() == datetime.timedelta(0) and now - datetime.timedelta(hours=1) < made <= now


def test_a_result_and_its_score_file_name_the_code_the_data_the_command_and_the_settings(tmp_path) -> None:
    data = _csv(tmp_path)
    digest = hashlib.sha256(data.read_bytes()).hexdigest()
    args = ["learn", str(data), "--bf", "3", "-q", "--time-limit", "600", "--max-networks", "50", "--json",
            str(tmp_path / "r.json"), "--scores", str(tmp_path / "s.scores")]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "r.json").read_text())
    made = report["provenance"]
    assert made["bnilp_version"] == bnilp.__version__ and made["command"] == ["bnilp", *args]
    assert _recent(made["created"]) and made["python"] and made["platform"]
    assert made["settings"]["time_limit"] == 600 and made["settings"]["max_networks"] == 50
    assert report["scoring"]["data_sha256"] == digest
    sidecar = json.loads((tmp_path / "s.scores.json").read_text())
    assert sidecar["data_sha256"] == digest and sidecar["provenance"]["command"] == ["bnilp", *args]


def test_a_solved_score_file_keeps_the_provenance_of_its_making_beside_the_search_s(tmp_path) -> None:
    data, scores = _csv(tmp_path), tmp_path / "s.scores"
    assert CliRunner().invoke(main, ["score", str(data), "-o", str(scores), "-q"]).exit_code == 0
    res = CliRunner().invoke(main, ["solve", str(scores), "-q", "--json", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["provenance"]["command"][:2] == ["bnilp", "solve"]
    assert report["scoring"]["provenance"]["command"][:2] == ["bnilp", "score"]
    assert report["scoring"]["data_sha256"] == hashlib.sha256(data.read_bytes()).hexdigest()


def test_the_python_api_records_its_settings_and_no_command_even_after_the_command_line_ran(tmp_path) -> None:
    data = _csv(tmp_path)
    assert CliRunner().invoke(main, ["learn", str(data), "-q"]).exit_code == 0
    made = bnilp.learn(data, bf=3, max_networks=40).report["provenance"]
    assert "command" not in made and made["settings"]["max_networks"] == 40 and _recent(made["created"])
    frame = random_discrete_frame(11, n=5, N=400)
    assert "data_sha256" not in bnilp.learn(frame).report["scoring"]      # no file: nothing to hash


def test_the_command_is_recorded_as_it_was_started() -> None:
    """``python -m bnilp learn …`` was recorded as ``bnilp learn …`` (a review: provenance is there to rerun it)."""
    from bnilp.provenance import invoked_as

    assert invoked_as("/site-packages/bnilp/__main__.py") == "python -m bnilp"
    assert invoked_as("/venv/bin/bnilp") == "bnilp" and invoked_as("-c") == "bnilp"


def test_a_command_run_inside_another_puts_the_outer_command_back() -> None:
    """The recorded command was cleared, not restored, when a command ran inside another (``main([...])`` from a
    command's own code or a test): the outer run's later outputs named no command."""
    from bnilp.provenance import command_recorded, provenance

    with command_recorded(["learn", "outer.csv"]):
        with command_recorded(["score", "inner.csv"]):
            assert provenance()["command"] == ["bnilp", "score", "inner.csv"]
        assert provenance()["command"] == ["bnilp", "learn", "outer.csv"]
    assert "command" not in provenance()
