"""The benchmark scripts' own contracts (a review of them): a name or cell they do not know, a missing file and a
malformed argument are one line and a nonzero exit, not an empty table with exit 0 or a traceback; a run cut at
its limit is not averaged as a time; an interrupted run that leaves its output is a fault, not a finish."""

from __future__ import annotations

import importlib.util
import random
import re
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from bnilp.errors import InputError

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _script(name: str):
    """A benchmark script as a module (its folder on the path: the scripts import ``common``)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_table1_name_that_is_no_row_is_refused_with_the_names_there_are() -> None:
    """``--only tictactoe`` printed the table's header, no row, and exit 0."""
    common = _script("common")
    assert [r["name"] for r in common.table1(names=["wine"])] == ["wine"]
    with pytest.raises(SystemExit, match=r"no Table 1 data set named 'nosuch', 'tictactoe'; the names are: .*"
                                         r"tic-tac-toe"):
        common.table1(names=["wine", "tictactoe", "nosuch"])


def test_bad_input_in_a_script_is_one_line_and_exit_2(monkeypatch, capsys) -> None:
    """A missing score file ended seven scripts in a traceback: :func:`common.run_script` makes bad input one
    line naming the script and the file, exit 2; a normal return is the exit code."""
    common = _script("common")
    monkeypatch.setattr(sys, "argv", ["solve_table1.py"])

    def missing() -> int:
        raise InputError("/tmp/nosuch.jkl: no such file")

    def unopened() -> int:
        return len(Path("/nonexistent/scoring.py").read_text())

    with pytest.raises(SystemExit) as stop:
        common.run_script(missing)
    assert stop.value.code == 2
    assert capsys.readouterr().err == "solve_table1.py: error: /tmp/nosuch.jkl: no such file\n"
    with pytest.raises(SystemExit) as stop:
        common.run_script(unopened)
    assert stop.value.code == 2
    assert capsys.readouterr().err == "solve_table1.py: error: /nonexistent/scoring.py: No such file or directory\n"
    with pytest.raises(SystemExit) as stop:
        common.run_script(lambda: 0)
    assert stop.value.code == 0


@pytest.mark.parametrize("spec", ["wine.BIC.3", "wine.jkl:abc", ":3", "wine.jkl:0.5"])
def test_root_gap_asks_for_file_colon_bf(spec, monkeypatch, capsys) -> None:
    """``root_gap.py FILE`` (no ``:BF``) read the path '' and said "path must be a non-empty file path"."""
    root_gap = _script("root_gap")
    monkeypatch.setattr(sys, "argv", ["root_gap.py", spec])
    with pytest.raises(SystemExit) as stop:
        root_gap.main()
    assert stop.value.code == 2
    assert f"{spec!r}: expected FILE:BF" in capsys.readouterr().err


def test_citest_calibration_names_its_cells_for_an_unknown_one(monkeypatch, capsys) -> None:
    """``--only zzz`` ran no cell and ended in an IndexError printing the empty table."""
    calibration = _script("citest_calibration")
    monkeypatch.setattr(sys, "argv", ["citest_calibration.py", "--reps", "1", "--only", "ddc,zzz"])
    with pytest.raises(SystemExit) as stop:
        calibration.main()
    assert stop.value.code == 2
    assert "--only: no cell zzz; the cells are ccc, ccd, ccn, cdc" in capsys.readouterr().err


def test_a_row_cut_at_the_time_limit_is_left_out_of_the_mean(shared_data, monkeypatch, capsys) -> None:
    """knowledge_bands.py averaged a ratio whose "without" run stopped at --time-limit (a bound on its time, not
    a time) into its geometric mean with no word; the mean is now over the rows both runs solved."""
    bands = _script("knowledge_bands")
    calls = []

    def timed(table, eps, k, with_bands, limit):
        calls.append(with_bands)
        status = "optimal" if with_bands or len(calls) <= 2 else "time_limit"    # the second row's plain run
        seconds = 1.0 if with_bands else (2.0 if status == "optimal" else 50.0)
        solution = SimpleNamespace(status=status, optimum=-1.0, stats={"phase1": {"seconds": 0.5}})
        return seconds, SimpleNamespace(solution=solution, report={"n_networks": 1})

    monkeypatch.setattr(bands, "_timed", timed)
    assert bands.main(["--only", "tic-tac-toe", "--seeds", "1", "2"]) == 0
    out = capsys.readouterr().out
    assert "50.00  50.00" in out and "(status optimal / time_limit)" in out      # the cut row, labelled
    assert "geometric mean of without / with (total): 2.00 over the 1 rows both solved" in out
    assert "1 row(s) with a run stopped at --time-limit left out of the mean" in out


def test_an_interrupted_run_that_leaves_its_output_is_a_fault(tmp_path, monkeypatch) -> None:
    """interrupts.py called any run that left its ``-o`` file without a traceback "finished first", whatever its
    exit: a run that said ``bnilp: interrupted`` and exited 130 with the file written (against the README) was
    no fault. A stand-in for ``python -m bnilp score`` does just that."""
    interrupts = _script("interrupts")
    fake = tmp_path / "fake_bnilp.py"
    fake.write_text(
        "import os, signal, sys, time\n"
        "out = sys.argv[sys.argv.index('-o') + 1]\n"
        "busy = os.path.join(os.environ['TMPDIR'], 'bnilp-score-fake')\n"
        "open(busy, 'w').close()\n"
        "def stop(*_):\n"
        "    os.remove(busy)\n"
        "    open(out, 'w').write('partial')\n"
        "    sys.stderr.write('bnilp: interrupted\\n')\n"
        "    os._exit(130)\n"
        "signal.signal(signal.SIGINT, stop)\n"
        "while True:\n"
        "    time.sleep(0.01)\n")
    real = subprocess.Popen
    monkeypatch.setattr(interrupts.subprocess, "Popen",
                        lambda cmd, **kw: real([sys.executable, str(fake), *cmd[3:]], **kw))
    outcome, _ = interrupts.one_run("processes", signal.SIGINT, 0.05, random.Random(0))
    assert outcome.startswith("FAULT: exit 130"), outcome


def test_score_table1_shows_the_files_n_on_a_row_that_did_not_finish(shared_data, tmp_path, monkeypatch,
                                                                     capsys) -> None:
    """A row stopped before its data were loaded showed Table 1's N (hepatitis 155) where finished rows show the
    file's (126, the N its seed palim is computed from): one column, two meanings."""
    score_table1 = _script("score_table1")
    monkeypatch.setattr(score_table1, "run", lambda *args: {"status": "time_limit"})
    monkeypatch.setattr(sys, "argv", ["score_table1.py", "--only", "hepatitis", "--scores", "bic", "--bfs", "3",
                                      "--out", str(tmp_path / "r.jsonl")])
    score_table1.main()
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("hepatitis"))
    n_rows = score_table1.records(shared_data / "liao2019_ebnsl" / "hepatitis.csv")
    assert row.split()[4] == str(n_rows) == "126"


def test_score_table1_writes_its_score_files_where_it_is_told(shared_data, tmp_path, monkeypatch, capsys) -> None:
    """``--write`` could only write into the repository's ``scorefiles/`` — tracked files the tests read — so a
    sweep run to look at files overwrote them. ``--write-dir`` names the folder; the file is the row's."""
    score_table1 = _script("score_table1")
    written = []
    monkeypatch.setattr(score_table1, "run", lambda row, score, bf, jobs, limit, write, *rest:
                        written.append(write) or {"status": "time_limit"})
    monkeypatch.setattr(sys, "argv", ["score_table1.py", "--only", "wine", "--scores", "bic", "--bfs", "3",
                                      "--out", str(tmp_path / "r.jsonl"), "--write",
                                      "--write-dir", str(tmp_path / "files")])
    score_table1.main()
    assert written == [str(tmp_path / "files" / "wine.BIC.3.scores")] and (tmp_path / "files").is_dir()
    monkeypatch.setattr(sys, "argv", ["score_table1.py", "--only", "wine", "--scores", "bic", "--bfs", "3",
                                      "--out", str(tmp_path / "r2.jsonl")])
    score_table1.main()
    assert written[-1] is None, "without --write no file is written"


def _fake_causal_learn(folder: Path, body: str) -> str:
    module = folder / "causallearn" / "search" / "ScoreBased"
    module.mkdir(parents=True)
    for part in (folder / "causallearn", folder / "causallearn" / "search", module):
        (part / "__init__.py").write_text("")
    (module / "ExactSearch.py").write_text(f"def bic_exact_search(x, search_method):\n    {body}\n")
    return str(folder)


def test_peers_says_a_crashed_or_missing_causal_learn_is_not_a_run_past_the_limit(tmp_path, monkeypatch) -> None:
    """A causal-learn that was not installed (or crashed) was waited out for the whole limit and printed as "> 400"
    s — a timeout, exit 0 — for every size: a crash returns its exit code at once, a missing package ends the
    script before part 2 with one line, and a pgmpy worker that fails is one line, not a CalledProcessError."""
    import time

    peers = _script("peers")
    x = np.zeros((5, 2))
    crashing = _fake_causal_learn(tmp_path / "crash", "raise RuntimeError('boom')")
    start = time.perf_counter()
    got = peers._causal_learn(crashing, x, "astar", 60)
    assert isinstance(got, int) and got != 0 and time.perf_counter() - start < 30
    answering = _fake_causal_learn(tmp_path / "ok", "import numpy; return numpy.eye(2), None")
    dag, seconds = peers._causal_learn(answering, x, "dp", 60)
    assert (dag == np.eye(2)).all() and seconds >= 0
    assert peers._causal_learn(_fake_causal_learn(tmp_path / "slow", "import time; time.sleep(60)"), x, "dp", 1) is None
    assert peers._causal_learn_found(answering) and not peers._causal_learn_found(str(tmp_path / "none"))
    assert answering not in sys.path
    monkeypatch.setattr(sys, "argv", ["peers.py", "--only", "skip", "--causal-learn", str(tmp_path / "none")])
    with pytest.raises(SystemExit, match=r"causal-learn not found in .*none: pip install"):
        peers.main()
    monkeypatch.setattr(sys, "argv", ["peers.py", "--scores", "bic,cg", "--causal-learn", "skip"])
    with pytest.raises(SystemExit) as bad:
        peers.main()
    assert bad.value.code == 2
    monkeypatch.setattr(peers, "__file__", str(tmp_path / "no_such_worker.py"))
    with pytest.raises(SystemExit, match=r"pgmpy's ges on wine failed: .*no_such_worker"):
        peers._pgmpy_in_process("ges", "wine", "bic", 1.0, ["0"], 0)


def test_forests_compares_runs_cut_at_the_limit_by_classes_a_second() -> None:
    """Two searches stopped at ``--time-limit`` printed "1×" (the limit against itself) while one listed 2.6 times
    the classes a second; small ratios were rounded to whole numbers (0.10 s against 0.07 s printed "2×")."""
    forests = _script("forests")

    def run(classes, status):
        return SimpleNamespace(networks=[None] * classes, status=status)

    assert forests.speed_ratio(run(11495, "time_limit"), 3.24, run(4082, "time_limit"), 2.99) == "2.60× classes/s"
    assert forests.speed_ratio(run(50, "optimal"), 0.07, run(50, "optimal"), 0.10) == "1.43×"
    assert forests.speed_ratio(run(100, "network_limit"), 1.0, run(100, "network_limit"), 25.0) == "25×"
    assert forests.speed_ratio(run(100, "optimal"), 1.0, run(40, "time_limit"), 5.0).endswith("classes/s")


def test_class_report_times_its_parts_as_the_report_counts_them(shared_data, monkeypatch, capsys) -> None:
    """A score file without its sidecar makes no claim of sound pruning, so the report counts each class's DAGs
    in the table only; the parts were timed as if every DAG were there, and ended in ``UnsoundTableError``."""
    class_report = _script("class_report")
    path = shared_data / "liao2019_ebnsl" / "scores" / "wine.BIC.3"
    monkeypatch.setattr(sys, "argv", ["class_report.py", str(path), "--bf", "20", "--time-limit", "60",
                                      "--max-networks", "200", "--jobs", "1"])
    class_report.main()
    out = capsys.readouterr().out
    assert "61 classes listed" in out and re.search(r"its listed classes: credible_classes\s+61 ", out)


def test_mixed_scores_shows_the_table_part_of_the_run_it_times(monkeypatch, capsys) -> None:
    """"seconds" is the best of two runs and "table s" was the last run's part: a part above its whole (0.10 s of
    a 0.08-s walk). Both come from the best run now."""
    import time

    import bnilp.parentsets

    mixed_scores = _script("mixed_scores")
    runs = iter([(0.3, 0.25), (0.0, 0.01), (0.0, 0.01), (0.3, 0.25)])

    def walk(score, epsilon, palim, n_jobs):
        wait, part = next(runs)
        time.sleep(wait)
        return SimpleNamespace(families={"a": 1}, meta={"counts": {"set_table": {"seconds": part, "sets": 3}},
                                                         "scored": 7})

    monkeypatch.setattr(bnilp.parentsets, "score_parent_sets", walk)
    monkeypatch.setattr(mixed_scores, "make_score", lambda name, data, **settings: None)
    mixed_scores.whole_tables(SimpleNamespace(), [("cg", {}), ("cgd", {})], None, [1])
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert [(r[0], r[3]) for r in rows] == [("cg", "0.01"), ("cgd", "0.01")]
    assert all(float(r[2]) < 0.2 for r in rows)


def _fails(*args) -> None:
    raise SystemExit(3)


def test_score_throughput_says_a_failed_scoring_process_failed(monkeypatch) -> None:
    """The 10^6-row part's process that failed (a bad ``--bign-counts``) ended in a second traceback — the parent
    read the dead process's /proc entry — or, where the entry lingered, printed "not finished in N s", a
    timeout; its arguments are checked up front, and a process that ends without a result is said to."""
    score_throughput = _script("score_throughput")
    monkeypatch.setattr(score_throughput, "_bign", _fails)
    args = SimpleNamespace(bign_jobs=1, bign_counts="auto", bign_limit=60.0)
    with pytest.raises(SystemExit, match=r"the scoring process ended with exit code 3 after \d+ s, without a result"):
        score_throughput.bign(args)
    for argv in (["--parts", "nope"], ["--parts", "bign", "--bign-counts", "bogus"], ["--jobs-data", "wine"]):
        monkeypatch.setattr(sys, "argv", ["score_throughput.py", *argv])
        with pytest.raises(SystemExit) as bad:
            score_throughput.main()
        assert bad.value.code == 2, argv


@pytest.mark.parametrize("script,argv,says", [
    ("mixed_scores", ["/nosuch.csv"], "mixed_scores.py: error: /nosuch.csv: no such file"),
    ("mixed_scores", ["--whole-table", "--jobs", "0"], "--jobs needs counts of at least 1"),
    ("class_report", ["/nosuch.jkl"], "class_report.py: error: /nosuch.jkl: no such file"),
    ("proxy", ["--datasets", "", "--curve", "25", "--curve-seeds", "0"], "--curve-seeds must be at least 1"),
    ("proxy", ["--datasets", "", "--curve", "x"], "--curve: comma-separated sample sizes"),
    ("mvp_accuracy", ["--rows", "3"], "--rows must be at least 5"),
    ("citest_sparse", ["--reps", "0"], "--reps and --jobs must be at least 1"),
    ("bdeu_atoms", ["--min-n", "99"], "no Table 1 data set has that many variables (the most: 57)"),
    ("forests", ["--nodes", "x"], "--nodes: comma-separated variable counts"),
    ("score_throughput", ["--parts", "nope"], "--parts: no part named 'nope'"),
    ("score_throughput", ["--parts", "throughput", "--throughput-data", "nosuch"], "--throughput-data: no nosuch.csv"),
])
def test_a_bad_argument_is_one_error_line_and_exit_2_not_a_traceback(shared_data, script, argv, says, monkeypatch,
                                                                     capsys) -> None:
    """A missing file, a count of 0 or a name that is no part's ended in a traceback (ZeroDivisionError,
    IndexError, KeyError, InputError) or printed a header and exit 0; the scripts now say it on one line (each
    runs its ``main`` under ``common.run_script``, as here)."""
    common, module = _script("common"), _script(script)
    monkeypatch.setattr(sys, "argv", [f"{script}.py", *argv])
    with pytest.raises(SystemExit) as stop:
        common.run_script(module.main)
    assert stop.value.code == 2
    out, err = capsys.readouterr()
    assert says in err.strip().splitlines()[-1], err
    assert out.strip() == "", "nothing printed before the refusal"
    assert "run_script(main)" in (BENCHMARKS / f"{script}.py").read_text()
