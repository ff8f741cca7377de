"""Score files: round trip, sidecar, atomic writing, and every malformed-file error."""

from __future__ import annotations

import json
import math

import pytest

from bnilp.errors import InputError
from bnilp.scorefile import ScoreTable, parse_jaakkola, parse_pss, read_jaakkola, write_jaakkola


def sample_table() -> ScoreTable:
    return ScoreTable(
        ["A", "B", "C"],
        {"A": {frozenset(): -10.125, frozenset({"B"}): -9.0 / 7.0},
         "B": {frozenset(): -3.0, frozenset({"A", "C"}): -2.0000000000000004},
         "C": {frozenset(): -1e-17}},
        {"score": "bic", "epsilon": math.log(20)},
    )


def test_round_trip_is_identical(tmp_path) -> None:
    first, second = tmp_path / "a.scores", tmp_path / "b.scores"
    write_jaakkola(sample_table(), first)
    table = read_jaakkola(first)
    assert table.families == sample_table().families
    write_jaakkola(table, second)
    assert first.read_text() == second.read_text()
    meta = json.loads((tmp_path / "a.scores.json").read_text())
    assert meta["score"] == "bic" and meta["n_parent_sets"] == 5


def test_sections_are_best_first_plain_jaakkola(tmp_path) -> None:
    path = tmp_path / "t.scores"
    write_jaakkola(sample_table(), path)
    lines = path.read_text().splitlines()
    assert lines[0] == "3" and lines[1] == "A 2"
    assert float(lines[2].split()[0]) > float(lines[3].split()[0])
    assert not any(line.startswith("#") for line in lines)
    assert not list(tmp_path.glob("*.tmp"))


def test_comments_and_free_layout_accepted() -> None:
    text = "# made by hand\n2\nX 2\n-1.5 0\n# best-first not required\n-2 1 Y\nY 1\n-3 0\n"
    table = parse_jaakkola(text)
    assert table.families["X"][frozenset({"Y"})] == -2.0


@pytest.mark.parametrize("text,pattern", [
    ("2\nX 1\n-1 0\n", r"f:3: file ends early: expected a variable name"),
    ("1\nX 2\n-1 0\n", r"f:3: file ends early: expected a local score"),
    ("1\nX 1\nabc 0\n", r"f:3: expected a local score, found 'abc'"),
    ("1\nX 1\nnan 0\n", r"f:3: local score 'nan' is not finite"),
    ("1\nX 1\n-inf 0\n", r"f:3: local score '-inf' is not finite"),
    ("2\nX 1\n-1 0\nX 1\n-1 0\n", r"f:4: variable 'X' has a second section"),
    ("1\nX 1\n-1 1 Q\n", r"f:3: parent 'Q' of 'X' is not a declared variable"),
    ("2\nX 1\n-1 2 Y\nY 1\n-1 0\n", r"f:3: expected 2 parents, found 1"),
    ("1\nX 1\n-1 0\nextra\n", r"f:4: unexpected 'extra'"),
    ("x\n", r"f:1: expected the number of variables"),
    ("2\nX 2\n-1 0\n-2 0\nY 1\n-1 0\n", r"parent set \[\] of 'X' is listed twice"),
    ("1\nX 1\n-1 1 X\n", r"own parent"),
    ("2\nA 0\nB 1\n-1.0 0\n", r"f:2: variable 'A' has no parent sets"),
    ("0\n", r"f:1: the score file declares no variables"),
    ("1\nX 1\n-1_5 0\n", r"f:3: expected a local score, found '-1_5'"),      # Python syntax, not strtod's
    ("1\nX 1\n-1 1_0\n", r"f:3: expected the number of parents, found '1_0'"),
    ("1\nX \u0661\n-1 0\n", r"f:2: expected the number of parent sets of 'X', found"),   # an Arabic-Indic 1
    ("1\nX -1\n-1 0\n", r"f:2: expected the number of parent sets of 'X', found negative -1"),
    # past Python's 4,300-digit conversion limit: a ValueError traceback (a review); 19 digits is past any table
    ("9" * 5000 + "\nX 1\n-1 0\n", r"f:1: expected the number of variables, found 9{20}…\(5000 digits\): too large"),
    ("1\nX 1\n-1 " + "1" * 19 + " Y\n", r"f:3: expected the number of parents, found 1{19}: too large"),
    ("1\nX 0001\n-1 0\n", None),         # leading zeros are no digits of size
    ("1\nX 1\n" + "9" * 5000 + " 0\n", r"^f:3: local score '9{20}'…\(5000 characters\) is not finite$"),  # not echoed
])
def test_malformed_files_are_rejected_with_line(text: str, pattern: str | None) -> None:
    if pattern is None:
        assert parse_jaakkola(text, "f").variables == ["X"]
        return
    with pytest.raises(InputError, match=pattern):
        parse_jaakkola(text, "f")


def test_json_past_python_s_limits_is_one_line_naming_the_file(tmp_path) -> None:
    """An integer of 5,000 digits (Python's conversion limit is 4,300) or arrays nested 3,000 deep in a sidecar,
    a ``--warm-start`` or a parents JSON: ValueError and RecursionError tracebacks (a review). Also a PSS header's
    or arity's integer of 5,000 digits."""
    from bnilp.cli.learn import _warm_start_file
    from bnilp.metrics import read_graph_or_json

    path = tmp_path / "t.scores"
    write_jaakkola(sample_table(), path)
    sidecar = tmp_path / "t.scores.json"
    for text, words in (('{"N": ' + "9" * 5000 + "}", "Exceeds the limit"), ("[" * 3000 + "]" * 3000, "nested too")):
        sidecar.write_text(text)
        with pytest.raises(InputError, match=f"t.scores.json: not a readable score-file sidecar \\({words}"):
            read_jaakkola(path)
        other = tmp_path / "p.json"
        other.write_text(text)
        with pytest.raises(InputError, match=f"p.json: not .*\\({words}"):
            _warm_start_file(str(other))
        with pytest.raises(InputError, match=f"p.json: not usable JSON \\({words}"):
            read_graph_or_json(other, "TRUE")
    big = "9" * 5000
    for text, words in ((f"META num_records={big}\nVAR A\n-1\n", "1:18: META num_records: expected an integer ≥ 0"),
                        (f"VAR A\nMETA arity={big}\n-1\n", "2:12: META arity of 'A': expected an integer ≥ 1")):
        with pytest.raises(InputError, match=f"^f:{words}, found 9{{20}}…\\(5000 digits\\): too large"):
            parse_pss(text, "f")


def test_plain_number_spellings_are_read_and_a_byte_order_mark_is_skipped(tmp_path) -> None:
    """Every strtod spelling of a score (sign, no leading digit, no digit after the point, exponent) is read."""
    tokens = ("+2.5e1", ".5", "-7.E-2", "1e-300", "-0")
    text = "3\nA 1\n{} 0\nB 2\n{} 0\n{} 1 A\nC 2\n{} 0\n{} 1 B\n".format(*tokens)
    table = parse_jaakkola(text, "f")
    assert [table.families[v] for v in "ABC"] == [
        {frozenset(): 25.0}, {frozenset(): 0.5, frozenset("A"): -0.07},
        {frozenset(): 1e-300, frozenset("B"): 0.0}]
    path = tmp_path / "bom.scores"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert read_jaakkola(path).families == table.families


def test_reads_gobnilp_and_pygobnilp_files(shared_data) -> None:
    wine = read_jaakkola(shared_data / "liao2019_ebnsl" / "scores" / "wine.BIC.3")
    assert len(wine.variables) == 14 and wine.n_parent_sets() == 592
    asia = read_jaakkola(shared_data / "pygobnilp" / "scores" / "asia_10000.dat.3.jkl")
    assert asia.variables[0] == "One"


def test_an_output_name_past_the_file_systems_limit_is_refused_before_the_work_and_a_long_one_is_written(
        tmp_path) -> None:
    """check_writable (which the CLI runs on every output before the work) refuses a name longer than the file
    system allows; a name within it is written, although the temporary file beside it adds to its length."""
    from bnilp.scorefile import atomic_write_text, check_writable

    with pytest.raises(InputError, match=r"cannot be written \(xxxxxxxxxxxxxxxxxxxx… is longer than the 255 bytes"):
        check_writable(tmp_path / ("x" * 256 + ".scores"))
    with pytest.raises(InputError, match="is longer than the 255 bytes"):
        check_writable(tmp_path / ("d" * 300) / "r.json")
    long = tmp_path / ("x" * 247 + ".scores")
    check_writable(long)
    atomic_write_text(long, "1\n")
    assert long.read_text() == "1\n" and [p.name for p in tmp_path.iterdir()] == [long.name]


def test_a_folder_no_file_can_be_made_in_is_refused_before_the_work_even_for_root(tmp_path) -> None:
    """check_writable tries the nearest existing folder with an empty file it removes: /proc refuses a file to
    root too, whom a permission check lets through; a writable folder is left as it was."""
    from pathlib import Path

    from bnilp.scorefile import check_writable

    if not Path("/proc").is_dir():
        pytest.skip("no /proc here")
    refused = r"/proc/nope/x\.json: cannot be written \((no file can be made|no permission) in /proc"
    with pytest.raises(InputError, match=refused):
        check_writable("/proc/nope/x.json")
    check_writable(tmp_path / "new" / "r.json")
    assert list(tmp_path.iterdir()) == []


def test_a_table_the_reader_would_refuse_is_not_written(tmp_path) -> None:
    """Scores spread past what the search can sum are refused by the reader; the writer refuses them too, rather
    than leave a file that cannot be read back."""
    table = ScoreTable(["a", "b"], {"a": {frozenset(): 1e300, frozenset({"b"}): -1e300}, "b": {frozenset(): -1.0}})
    with pytest.raises(InputError, match=r"x\.scores: the local scores spread too far"):
        write_jaakkola(table, tmp_path / "x.scores")
    assert not list(tmp_path.iterdir())
    # exactly the limit apart is refused, and said so ("more than 1e+18 apart" was not what it refused: a review)
    edge = ScoreTable(["a", "b"], {"a": {frozenset(): 0.0, frozenset({"b"}): -1e18}, "b": {frozenset(): 0.0}})
    with pytest.raises(InputError, match=r"worst to -1e\+18, 1e\+18 or more apart"):
        write_jaakkola(edge, tmp_path / "y.scores")


def test_names_with_whitespace_cannot_be_written(tmp_path) -> None:
    table = ScoreTable(["a b"], {"a b": {frozenset(): -1.0}})
    with pytest.raises(InputError, match="whitespace"):
        write_jaakkola(table, tmp_path / "x.scores")


def test_a_token_after_a_sets_parents_is_refused_naming_its_line() -> None:
    """A parent set's line is its score, m and m parents: a further token there (``-1 1 B C``, count 1 with two
    names) is an error naming that line — not the next line with a misleading message."""
    text = "3\nA 1\n-1 1 B C\nB 1\n-1 0\nC 1\n-1 0\n"
    with pytest.raises(InputError, match=r"<string>:3: 1 token\(s\) after the 1 parent\(s\).*'C'"):
        parse_jaakkola(text)
    # what stays valid: sections and counts across line breaks, parents on their score's line
    table = parse_jaakkola("2\nA\n2\n-1 1 B\n-2\n0\nB 1 -1 0\n")
    assert table.families["A"] == {frozenset({"B"}): -1.0, frozenset(): -2.0}


@pytest.mark.parametrize("change, drop, words", [
    (dict(palim_reached=True), ("palim", "exact_for_parent_sets_up_to"), "'palim_reached' is true but neither"),
    (dict(palim_reached="false"), (), "'palim_reached' must be true or false"),
    (dict(prune="yes"), (), "'prune' must be true or false"),
    (dict(palim_reached=None), (), "'palim_reached' must be true or false, got null"),     # read as "not reached"
    (dict(palim=2.5), (), "'palim' must be an integer"),
    (dict(exact_for_parent_sets_up_to="2"), (), "'exact_for_parent_sets_up_to' must be an integer"),
    (dict(epsilon=float("nan")), (), "'epsilon' must be a finite number"),
    (dict(bf=float("inf")), (), "'bf' must be a finite number"),
    (dict(seconds=float("nan")), (), "'seconds' is not a finite number"),
    (dict(bf=1000.0, epsilon=3.0), (), "'bf' 1000.0 and 'epsilon' 3.0 disagree"),      # a review's find
    # a later review: these ended in a TypeError/KeyError traceback (exit 1), or were taken as something else
    (dict(score=["bic"]), ("score_equivalent",), "'score' must be a name"),
    (dict(prior={"x": 1}), (), "'prior' must be a name"),
    (dict(knowledge_unpruned=5), (), "'knowledge_unpruned' must be a list of variable names"),
    (dict(knowledge={"required": [["A", "B"]], "statements": 5}), (),
     "'knowledge' is not a knowledge record \\('statements' must"),
    (dict(knowledge={"statements": ["require A -> B"]}), (),
     "'knowledge' is not a knowledge record \\(knowledge: it has 'statements' but none"),
    (dict(score_time_limit_reached=True, palim_reached=False), (), "'score_time_limit_reached' is true but"),
    # a variable the file lacks: the error named neither file (a review)
    (dict(knowledge={"required": [["Q", "B"]], "statements": ["require Q -> B"]}), (),
     r"its 'knowledge' does not fit t.scores \(knowledge: unknown variable 'Q'"),
])
def test_sidecar_fields_of_the_wrong_type_are_refused_naming_the_field(tmp_path, change, drop, words) -> None:
    """The sidecar decides what a table may be used for, so its fields are checked: finite numbers (json's NaN
    and Infinity refused), bools, integers or null for palim sizes, and a size given with ``palim_reached`` —
    each an ``InputError`` naming the sidecar and the field, never a KeyError or a string read as truthy."""
    path = tmp_path / "t.scores"
    write_jaakkola(sample_table(), path)
    meta = json.loads((tmp_path / "t.scores.json").read_text())
    meta.update(change)
    for key in drop:
        meta.pop(key, None)
    (tmp_path / "t.scores.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match=f"t.scores.json: {words}"):
        read_jaakkola(path)


def test_check_table_is_the_readers_check_of_a_built_table() -> None:
    """``check_table`` refuses what the reader refuses, naming ``where``; a table the reader made passes."""
    from bnilp.scorefile import check_table

    check_table(sample_table())
    with pytest.raises(InputError, match="^table: 'C' is listed as its own parent"):
        check_table(ScoreTable(["C"], {"C": {frozenset({"C"}): -1.0, frozenset(): -2.0}}))
    with pytest.raises(InputError, match="^mine: .*not a frozenset"):
        check_table(ScoreTable(["C"], {"C": {(): -1.0}}), "mine")


def test_links_devices_and_fifos_are_written_through_not_replaced(tmp_path) -> None:
    """Renaming the finished file over the output path replaced ``/dev/null`` by a regular file, a FIFO's reader
    got nothing, and a symbolic link became a file beside its unchanged target. Now a link's target is replaced
    (the link stays) and a device or FIFO gets the whole file written into it."""
    import os
    import stat
    import threading

    from bnilp.scorefile import atomic_write_text, check_writable

    target, link = tmp_path / "target.json", tmp_path / "link.json"
    target.write_text("old\n")
    link.symlink_to(target)
    atomic_write_text(link, "new\n")
    assert link.is_symlink() and target.read_text() == "new\n"

    atomic_write_text("/dev/null", "nothing\n")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    check_writable("/dev/null")

    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    atomic_write_text(fifo, "through the pipe\n")
    reader.join(10)
    assert got == ["through the pipe\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "pipe.json", "target.json"]


def test_a_named_descriptor_is_written_into_not_replaced_or_truncated(tmp_path) -> None:
    """``/dev/stdout`` with stdout redirected to a log resolved to the log file, and the output replaced it: what
    the log held was lost (and later lines went to the deleted file). A path naming a descriptor (/dev/stdout,
    /dev/stderr, /dev/fd/N, /proc/self/fd/N) is now written into that descriptor, appending where it appends."""
    import os

    from bnilp.scorefile import atomic_write_text, is_stream, open_descriptor

    assert [open_descriptor(p) for p in ("/dev/stdout", "/dev/stderr", "/dev/fd/7", "/proc/self/fd/3", "/dev/null",
                                         "out.json")] == [1, 2, 7, 3, None, None]
    log = tmp_path / "log"
    log.write_text("before\n")
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    try:
        assert is_stream(f"/dev/fd/{fd}")
        atomic_write_text(f"/dev/fd/{fd}", '{"a": 1}\n')
        os.write(fd, b"after\n")
    finally:
        os.close(fd)
    assert log.read_text() == 'before\n{"a": 1}\nafter\n'


def test_a_score_file_into_a_device_gets_no_sidecar_and_a_replaced_file_keeps_its_mode(tmp_path, monkeypatch) -> None:
    """``score -o /dev/null`` (the README's example) wrote ``/dev/null.json`` as root and failed ("no permission in
    /dev") as anyone else: a device or pipe gets no sidecar. A ``chmod 600`` output replaced by a run became 644."""
    import os
    import stat

    import bnilp.scorefile as sf

    table = ScoreTable(["A", "B"], {"A": {frozenset(): -1.0}, "B": {frozenset(): -2.0}})
    written: list[str] = []
    real = sf.atomic_write_text
    monkeypatch.setattr(sf, "atomic_write_text", lambda path, text: (written.append(os.fspath(path)), real(path, text)))
    write_jaakkola(table, "/dev/null")
    assert written == ["/dev/null"]
    private = tmp_path / "t.scores"
    private.write_text("old\n")
    private.chmod(0o600)
    write_jaakkola(table, private)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600 and read_jaakkola(private).variables == ["A", "B"]


def test_a_form_feed_or_vertical_tab_does_not_shift_lines_or_split_a_family(tmp_path) -> None:
    """The reader split lines with ``str.splitlines``, which also breaks at \\f, \\v, \\x85 and \\u2028: an error
    after a form feed named the wrong line, and a \\v between a score and its parents gave "expected 1 parents,
    found 0". Lines end at \\n, \\r\\n and \\r only; the rest is whitespace."""
    table = parse_jaakkola("2\nA 2\n-1.0 1\x0bB\n-2.0 0\nB 1\n-3.0 0\n", "t.scores")
    assert table.families["A"][frozenset({"B"})] == -1.0
    with pytest.raises(InputError, match=r"^t\.scores:5: expected a local score"):
        parse_jaakkola("2\nA 1\n-1.0 0\x0c\nB 1\nx 0\n", "t.scores")


def test_an_output_set_is_put_in_place_whole_or_not_at_all(tmp_path, monkeypatch) -> None:
    """A command's outputs are one result (a JSON saying ``complete`` and its report; a score file and its
    sidecar), but each was renamed into place as soon as it was written: a later one that failed (no space, a
    size limit, a file that may not be replaced) left the earlier ones — a score file without its sidecar, whose
    provenance was then silently lost (a review's find). In an :func:`output_set` an exception leaves none of
    them, nor the folders made for them; a rename refused puts back the file an earlier one replaced."""
    import errno
    import os

    import bnilp.scorefile as sf
    from bnilp.errors import OutputError

    old = tmp_path / "old.json"
    old.write_text("old\n")
    with pytest.raises(RuntimeError), sf.output_set():
        sf.atomic_write_text(old, "new\n")
        sf.atomic_write_text(tmp_path / "made" / "deeper" / "a.dot", "x\n")
        raise RuntimeError
    assert old.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["old.json"]

    real = os.replace

    def refusing(name: str):            # os.replace as an immutable file of that name (chattr +i) makes it
        def replace(src, dst):
            if os.path.basename(dst) == name:
                raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))
            return real(src, dst)
        return replace

    monkeypatch.setattr(os, "replace", refusing("b.json"))
    with pytest.raises(OutputError, match=r"b\.json: cannot be written \(Operation not permitted\)$"), sf.output_set():
        sf.atomic_write_text(old, "new\n")
        sf.atomic_write_text(tmp_path / "new.csv", "n\n")
        sf.atomic_write_text(tmp_path / "b.json", "b\n")
    assert old.read_text() == "old\n"       # put back; new.csv removed; no temporary or kept-back file left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.json"]

    table = ScoreTable(["A", "B"], {"A": {frozenset(): -1.0}, "B": {frozenset(): -2.0}})
    write_jaakkola(table, tmp_path / "t.scores")
    pair = {p.name: p.read_bytes() for p in tmp_path.glob("t.scores*")}
    monkeypatch.setattr(os, "replace", refusing("t.scores.json"))
    bigger = ScoreTable(["A", "B"], {"A": {frozenset(): -1.0, frozenset({"B"}): -0.5}, "B": {frozenset(): -2.0}})
    with pytest.raises(OutputError, match=r"cannot be written"):
        write_jaakkola(bigger, tmp_path / "t.scores")       # the sidecar's rename refused: the old pair stays
    assert {p.name: p.read_bytes() for p in tmp_path.glob("t.scores*")} == pair
    monkeypatch.setattr(os, "replace", real)
    assert read_jaakkola(tmp_path / "t.scores").families == table.families


def test_a_write_that_fails_names_the_output_and_leaves_nothing(tmp_path) -> None:
    """No space or a size limit while a file was written was a raw ``OSError`` traceback (exit 1): only making
    the temporary file was one line. Now every such failure is an :class:`OutputError` naming the output."""
    import errno
    import os

    from bnilp.errors import OutputError
    from bnilp.scorefile import atomic_output

    for code in (errno.ENOSPC, errno.EFBIG):
        with pytest.raises(OutputError, match=rf"x\.json: cannot be written \({os.strerror(code)}\)$"), \
                atomic_output(tmp_path / "x.json") as tmp:
            with open(tmp, "w") as handle:
                handle.write("partial")
            raise OSError(code, os.strerror(code))
    assert list(tmp_path.iterdir()) == []


def test_the_sidecar_of_a_linked_score_file_lies_beside_the_file_written(tmp_path) -> None:
    """``-o link.scores`` (a symbolic link) replaces the file the link points to, but its sidecar went beside
    the link: reading the target then found the old sidecar and refused the file ("written for another score
    file"), a review's find. The sidecar goes beside the target, where reading either name finds it."""
    real = tmp_path / "real"
    real.mkdir()
    first = ScoreTable(["A", "B"], {"A": {frozenset(): -1.0}, "B": {frozenset(): -2.0}})
    write_jaakkola(first, real / "x.scores")
    (tmp_path / "l.scores").symlink_to(real / "x.scores")
    second = ScoreTable(["A", "B"], {"A": {frozenset(): -1.0, frozenset({"B"}): -0.5}, "B": {frozenset(): -2.0}})
    second.meta = {"epsilon": 1.5}
    write_jaakkola(second, tmp_path / "l.scores")
    assert not (tmp_path / "l.scores.json").exists()
    for name in (real / "x.scores", tmp_path / "l.scores"):
        table = read_jaakkola(name)
        assert table.families == second.families and table.meta["epsilon"] == 1.5


def test_a_sidecar_that_gives_bf_alone_still_says_what_the_table_was_pruned_for(tmp_path) -> None:
    """``bf`` without ``epsilon`` is the same record (ε = ln BF): a larger BF was let through and reported complete,
    with a warning that nothing recorded the pruning BF (a review). And a knowledge record without its lines (the
    fields are what is applied) gets them, so what is said to be applied is what is."""
    import math

    from bnilp.pipeline import solve_table

    path = tmp_path / "t.scores"
    write_jaakkola(sample_table(), path)
    meta = json.loads((tmp_path / "t.scores.json").read_text())
    meta.update(epsilon=None, bf=20.0, knowledge={"forbidden": [["A", "B"]]})
    (tmp_path / "t.scores.json").write_text(json.dumps(meta))
    table = read_jaakkola(path)
    assert table.meta["epsilon"] == pytest.approx(math.log(20))
    assert table.meta["knowledge"]["statements"] == ["forbid A -> B"]
    with pytest.raises(InputError, match=r"the table was pruned for epsilon=2\.99573 \(BF 20\)"):
        solve_table(table, epsilon=math.log(100))


def test_a_malformed_table_is_not_written(tmp_path) -> None:
    """``write_jaakkola`` wrote a variable as its own parent, an empty family, NaN scores — files its reader then
    refused — and raised ``KeyError``/``TypeError`` on a parent that is no variable or a score that is text (a
    review): it checks the table as :func:`~bnilp.scorefile.check_table` does, and writes nothing."""
    from bnilp.scorefile import ScoreTable

    bad = [({"A": {frozenset({"A"}): -1.0}}, "its own parent"),
           ({"A": {}}, "has no parent sets"),
           ({"A": {frozenset(): -1.0, frozenset({"B"}): float("nan")}, "B": {frozenset(): -1.0}}, "finite number"),
           ({"A": {frozenset({"C"}): -1.0}, "B": {frozenset(): -1.0}}, "'C'"),
           ({"A": {frozenset(): "x"}, "B": {frozenset(): -1.0}}, "finite number")]
    for families, words in bad:
        names = ["A"] if len(families) == 1 else ["A", "B"]
        with pytest.raises(InputError, match=words):
            write_jaakkola(ScoreTable(names, families), tmp_path / "x.scores")
        assert not (tmp_path / "x.scores").exists()


def test_a_sidecar_without_epsilon_is_not_called_missing() -> None:
    """The note for a table whose pruning ε is unknown said "(no sidecar)" also when a sidecar was there but had
    no ``epsilon`` (a review's find): it says which."""
    import math

    from bnilp.pipeline import unknown_pruning_note

    bare = sample_table()
    bare.meta = {}
    assert "(no sidecar)" in unknown_pruning_note(bare, math.log(20))
    bare.meta = {"score": "bic"}
    assert "(its sidecar has no 'epsilon')" in unknown_pruning_note(bare, math.log(20))


def test_an_output_set_puts_back_what_it_replaced_whatever_the_file_system_allows(tmp_path, monkeypatch) -> None:
    """The file a set replaces was kept as a hard link only: where none could be made (a file system without
    hard links, a file at its link limit) a later refused rename was undone by *removing* the path — the user's
    earlier file lost (a review's find). It is kept as a copy then; where not even a copy can be made, the error
    names what could not be put back. An interrupt just after a rename is undone too, and leaves no kept copy."""
    import errno
    import os
    import shutil

    import bnilp.scorefile as sf
    from bnilp.errors import OutputError

    real_replace = os.replace

    def refusing(name: str, error: type[BaseException] = PermissionError, after: bool = False):
        calls: list[str] = []

        def replace(src, dst):
            if os.path.basename(dst) == name and not (after and calls):
                calls.append(dst)
                if after:                       # renamed, then interrupted (once) before the set notes it
                    real_replace(src, dst)
                    raise error()
                raise error(errno.EPERM, os.strerror(errno.EPERM))
            return real_replace(src, dst)
        return replace

    def write_two() -> None:
        with sf.output_set():
            sf.atomic_write_text(tmp_path / "r.json", "NEW\n")
            sf.atomic_write_text(tmp_path / "d.dot", "new\n")

    (tmp_path / "r.json").write_text("OLD\n")
    monkeypatch.setattr(os, "link", lambda *a, **k: (_ for _ in ()).throw(OSError(errno.EMLINK, "Too many links")))
    monkeypatch.setattr(os, "replace", refusing("d.dot"))
    with pytest.raises(OutputError, match=r"d\.dot: cannot be written \(Operation not permitted\)$"):
        write_two()                             # kept as a copy: put back
    assert (tmp_path / "r.json").read_text() == "OLD\n" and sorted(os.listdir(tmp_path)) == ["r.json"]

    monkeypatch.setattr(shutil, "copy2", lambda *a, **k: (_ for _ in ()).throw(OSError(errno.ENOSPC, "full")))
    with pytest.raises(OutputError, match=r"\(Operation not permitted\); already replaced, and no copy could be "
                                          r"kept to put back: .*r\.json$"):
        write_two()                             # no copy at all: said, not hidden
    monkeypatch.undo()

    (tmp_path / "r.json").write_text("OLD\n")
    (tmp_path / "d.dot").write_text("old\n")
    monkeypatch.setattr(os, "replace", refusing("d.dot", KeyboardInterrupt, after=True))
    with pytest.raises(KeyboardInterrupt):
        write_two()
    monkeypatch.undo()
    assert (tmp_path / "r.json").read_text() == "OLD\n" and (tmp_path / "d.dot").read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["d.dot", "r.json"]


def test_a_nested_set_that_fails_leaves_nothing_of_its_own_in_the_outer_set(tmp_path, monkeypatch) -> None:
    """A caller's ``output_set`` around ``write_jaakkola``: the sidecar failed, the caller caught the error and
    went on, and the outer set committed the score file alone (a review's find). A nested block that ends in an
    exception takes back what it added; a set already ended is not joined by a context copied from it (an
    asyncio task): its later writes were silently lost, their temporary files left."""
    import contextvars
    import errno
    import os

    import bnilp.scorefile as sf
    from bnilp.errors import OutputError

    table = ScoreTable(["A", "B"], {"A": {frozenset(): -1.0}, "B": {frozenset(): -2.0}})

    def no_space(_meta):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with sf.output_set():
        with monkeypatch.context() as patch:
            patch.setattr(sf, "strict_json", no_space)      # the sidecar's text: after the score file is written
            with pytest.raises(OSError):
                write_jaakkola(table, tmp_path / "s.scores")
        sf.atomic_write_text(tmp_path / "other.txt", "x\n")
        copied = contextvars.copy_context()
    assert sorted(os.listdir(tmp_path)) == ["other.txt"]

    copied.run(sf.atomic_write_text, tmp_path / "late.txt", "late\n")
    assert sorted(os.listdir(tmp_path)) == ["late.txt", "other.txt"]
    with pytest.raises(OutputError):
        copied.run(sf.atomic_write_text, "/dev/full", "x\n")


def test_a_file_the_system_refuses_to_replace_keeps_no_copy_beside_it(tmp_path, monkeypatch) -> None:
    """Where no hard link of the file to be replaced can be made (an immutable file; another user's in a folder with
    the sticky bit, ``protected_hardlinks``) it is copied beside itself; the rename then refused, the file stays as
    it was — and the copy ``.NAME.….old`` stayed too, one more after every run (a review). It goes."""
    import errno
    import os

    import bnilp.scorefile as sf
    from bnilp.errors import OutputError

    target = tmp_path / "r.json"
    target.write_text("theirs\n")
    real_replace = os.replace

    def refused(src, dst):
        if os.path.basename(dst) == "r.json":
            raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))
        return real_replace(src, dst)

    def no_links(*args, **kwargs):
        raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "replace", refused)
    monkeypatch.setattr(os, "link", no_links)
    for _ in range(2):
        with pytest.raises(OutputError, match=r"r\.json: cannot be written \(Operation not permitted\)$"):
            sf.atomic_write_text(target, "ours\n")
    assert target.read_text() == "theirs\n" and [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_a_dangling_link_on_an_output_path_names_the_folder_made(tmp_path, monkeypatch) -> None:
    """A symbolic link to a folder not made yet, as the output path's folder or as a report folder: the check before
    the work let it through as missing, and making the folder then failed on the link after the work ("File
    exists", a traceback for ``--report``: a review). The folder the link names is made, as a file output's dangling
    link has its target written."""
    import os

    import bnilp.scorefile as sf

    monkeypatch.chdir(tmp_path)
    os.symlink("elsewhere/deeper", "folder")
    sf.check_writable("folder/r.json")
    sf.check_writable("folder", folder=True)
    sf.atomic_write_text("folder/r.json", "{}\n")
    assert (tmp_path / "elsewhere" / "deeper" / "r.json").read_text() == "{}\n" and os.path.islink("folder")
    os.symlink("away", "report")
    with sf.output_set() as outputs:
        outputs.make_folder(sf.Path("report"))
        sf.atomic_write_text("report/edges.csv", "from,to\n")
    assert (tmp_path / "away" / "edges.csv").exists()
    os.symlink("/proc/1/none", "proc")          # the folder the link names is what is checked
    with pytest.raises(InputError, match="proc: cannot be written"):
        sf.check_writable("proc", folder=True)


def test_another_users_file_in_a_sticky_folder_is_refused_before_the_work(tmp_path, monkeypatch) -> None:
    """In a folder with the sticky bit (``/tmp``) a file neither the folder's nor the file's owner may replace passes
    ``os.access``, and the run failed only after its work (a review, a shared folder's ``r.json``): refused up front.
    The folder's or the file's owner, and root, may replace it."""
    import os
    import stat

    import bnilp.scorefile as sf

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    (shared / "r.json").write_text("theirs\n")
    owner = os.stat(shared / "r.json").st_uid
    assert os.stat(shared).st_mode & stat.S_ISVTX
    monkeypatch.setattr(os, "geteuid", lambda: owner + 4242)
    with pytest.raises(InputError, match=r"r\.json: cannot be written \(it belongs to another user, in a folder "
                                         r"with the sticky bit"):
        sf.check_writable(shared / "r.json", probe=False)
    sf.check_writable(shared / "new.json", probe=False)         # a file of its own there: fine
    for uid in (owner, 0):
        monkeypatch.setattr(os, "geteuid", lambda uid=uid: uid)
        sf.check_writable(shared / "r.json", probe=False)


def test_a_copy_is_removed_only_while_the_file_it_keeps_is_still_there(tmp_path, monkeypatch) -> None:
    """``replaced`` is set only once the rename has returned: an interrupt between the two, with the copy refused its
    way back, removed the only copy of the user's file (a review's simulation). The copy goes only where the file at
    the path is still the one it copied; otherwise it stays, and the path is said not to be as it was."""
    import os

    import bnilp.scorefile as sf

    target = tmp_path / "r.json"
    target.write_text("original\n")
    backup = tmp_path / ".r.json.copy.old"
    backup.write_text("original\n")
    step = sf._Replaced(target, True, str(backup), identity=sf._identity(target))
    new = tmp_path / "new.tmp"
    new.write_text("new\n")
    os.replace(new, target)                 # the rename happened; the interrupt came before `replaced` was set
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(PermissionError(1, "refused")))
    assert step.put_back() is False and backup.read_text() == "original\n"
