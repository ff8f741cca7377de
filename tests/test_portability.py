"""Where macOS and Windows differ from Linux, simulated here (the tests run on Linux): no ``os.register_at_fork``,
a code page that cannot print ε, no ``/dev/fd``, no ``/proc/meminfo``, a file another program holds open, file
systems that ignore case. Each was found by a review reading the code for those systems; each test fails on the
code before its fix."""

from __future__ import annotations

import errno
import ntpath
import os
import subprocess
import sys

import pytest

from bnilp import memory, scorefile
from bnilp.cli.options import check_outputs
from bnilp.errors import InputError, OutputError

FLAGS = {"json_out": "--json", "dot_out": "--dot"}


def _bnilp(*args: str, env: dict[str, str] | None = None, before: str = "") -> subprocess.CompletedProcess:
    """``python -m bnilp ARGS`` in a fresh interpreter, after running ``before`` there (its output read in the
    encoding ``PYTHONIOENCODING`` of ``env`` gives it)."""
    code = (f"{before}\nimport runpy, sys\nsys.argv = ['bnilp', *{list(args)!r}]\n"
            "runpy.run_module('bnilp', run_name='__main__')")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300,
                          encoding=(env or {}).get("PYTHONIOENCODING", "utf-8"), env={**os.environ, **(env or {})})


def test_the_command_line_runs_where_os_has_no_register_at_fork(tmp_path) -> None:
    """Windows has no ``os.register_at_fork``: ``bnilp.threads`` called it at import, and every command failed
    (``AttributeError``) — ``bnilp.learn`` too."""
    done = _bnilp("learn", "-q", "--bf", "3", "--json", str(tmp_path / "r.json"),
                  before="import os, random\ndel os.register_at_fork")   # random: NumPy 1.x imports it at load,
    # and random.py registers at fork where os.fork exists (on Windows neither does)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r.json").exists()


def test_an_output_in_a_code_page_that_cannot_print_epsilon_gets_stand_ins_and_every_file(tmp_path) -> None:
    """On Windows a redirected stdout is in the locale's code page (cp1252) unless Python's UTF-8 mode is on:
    ``--help`` (⟂) and the report's panel (ε) ended in a ``UnicodeEncodeError`` traceback, exit 1, and the report's
    files — written together after the panel — were lost. Symbols get ASCII stand-ins (``X1 ? ?`` was ``X1 ← ∅``)."""
    cp1252 = {"PYTHONIOENCODING": "cp1252"}
    done = _bnilp("citest", "--help", env=cp1252)
    assert done.returncode == 0 and "Test X _||_ Y | GIVEN" in done.stdout, done.stderr     # ⟂'s stand-in
    report = tmp_path / "r.json"
    done = _bnilp("learn", "--bf", "3", "--json", str(report), env=cp1252)
    assert done.returncode == 0 and "eps = ln BF" in done.stdout and " <- {}" in done.stdout, done.stderr
    assert "Traceback" not in done.stderr and report.exists()


def test_the_terminal_streams_stay_unbuffered_under_python_u() -> None:
    """Under ``python -u`` (or ``PYTHONUNBUFFERED``, common in containers and CI) stdout is unbuffered: the
    re-opened streams (:func:`bnilp.terminal.tolerant_terminal`) held writes in an 8 KB buffer, so warnings and
    tracebacks on stderr came before the stdout text written ahead of them."""
    code = ("import os, sys\nfrom bnilp.terminal import tolerant_terminal\ntolerant_terminal()\n"
            "sys.stdout.write('a')\nos.write(2, b'b')\nsys.stdout.write('c')\n")
    done = subprocess.run([sys.executable, "-u", "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=60)
    assert done.stdout == "abc", done.stdout


def test_an_output_to_stdout_is_written_where_descriptors_are_not_files(monkeypatch, tmp_path) -> None:
    """``-o -`` was refused ("cannot be written (no permission)") where ``/dev/fd/1`` is not a file (Windows), and
    ``/dev/stdout`` was not known for stdout once ``normpath`` had turned it into ``\\dev\\stdout``. A descriptor
    that is not open is still refused."""
    monkeypatch.setattr(scorefile, "DESCRIPTOR_FOLDER", str(tmp_path / "no-such-folder"))
    scorefile.check_writable("-")
    closed = os.open(os.devnull, os.O_WRONLY)
    os.close(closed)
    with pytest.raises(InputError, match=f"descriptor {closed} is not open"):
        scorefile.check_writable(f"/dev/fd/{closed}")
    monkeypatch.setattr(scorefile.os, "sep", "\\")
    monkeypatch.setattr(scorefile.os.path, "normpath", ntpath.normpath)
    assert scorefile.open_descriptor("/dev/stdout") == 1 and scorefile.open_descriptor("\\dev\\fd\\2") == 2
    assert scorefile.open_descriptor("C:\\dev\\stdout") is None


def test_free_memory_is_known_without_proc_meminfo_or_sysconf(monkeypatch) -> None:
    """macOS has no ``/proc`` and no ``SC_AVPHYS_PAGES``, Windows no ``sysconf``: the free memory was None there,
    and every memory guard (scoring's floor, the listing's watch, the dynamic programme's fit) was off, silently.
    psutil (a dependency on those systems) says it."""
    psutil = pytest.importorskip("psutil")
    monkeypatch.setattr(memory, "MEMINFO", "/no/proc/meminfo")
    monkeypatch.delattr(memory.os, "sysconf")
    monkeypatch.setattr(memory, "cgroup_memory", lambda *a, **k: None)
    free, available = memory.free_memory(), psutil.virtual_memory().available
    assert free is not None and abs(free - available) < max(available // 4, 1 << 28)
    assert memory.physical_memory() == psutil.virtual_memory().total
    monkeypatch.setattr(memory, "_psutil", lambda: None)
    assert memory.free_memory() is None          # nothing says it: the guards are off (said in the README)


def test_a_file_that_cannot_be_replaced_is_left_as_it_was_with_no_copy_beside_it(monkeypatch, tmp_path) -> None:
    """A file open in another program cannot be replaced on Windows: the write failed (rightly, one line) but left
    ``.NAME.<hex>.old`` — the link kept to put the file back — beside it."""
    held = tmp_path / "edges.csv"
    held.write_text("old\n")
    real_replace = os.replace

    def refuse(src, dst, *args, **kwargs):
        if os.fspath(dst) == os.fspath(held):
            raise PermissionError(errno.EACCES, "being used by another process", os.fspath(dst))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(scorefile.os, "replace", refuse)
    with pytest.raises(OutputError, match="being used by another process"):
        scorefile.atomic_write_text(held, "new\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edges.csv"] and held.read_text() == "old\n"


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_outputs_that_differ_only_in_case_are_one_file_where_the_file_system_ignores_case(monkeypatch, tmp_path,
                                                                                          platform) -> None:
    """APFS and NTFS ignore case: ``--json r.json --dot R.JSON`` (one output replaced the other) and
    ``--json ASIA.CSV`` over the input ``asia.csv`` were let through there. On Linux they are two files."""
    json_out, dot_out = str(tmp_path / "r.json"), str(tmp_path / "R.JSON")
    data = tmp_path / "asia.csv"
    data.write_text("a,b\n0,1\n")
    check_outputs({"json_out": json_out, "dot_out": dot_out}, FLAGS)
    monkeypatch.setattr(sys, "platform", platform)
    with pytest.raises(InputError, match="name the same file"):
        check_outputs({"json_out": json_out, "dot_out": dot_out}, FLAGS)
    with pytest.raises(InputError, match="name the same file"):
        check_outputs({"json_out": str(tmp_path / "ASIA.CSV")}, FLAGS, inputs={str(data): "DATA"})
    with pytest.raises(InputError, match="lies inside") as caught:     # said with the paths as written
        check_outputs({"json_out": str(tmp_path / "Nest"), "dot_out": str(tmp_path / "nest" / "R.dot")}, FLAGS)
    assert "Nest)" in str(caught.value) and "R.dot" in str(caught.value)


def test_csv_outputs_end_their_lines_in_newline_whatever_the_system_s_line_separator(monkeypatch, tmp_path) -> None:
    """pandas ends ``to_csv``'s lines in ``os.linesep``: on Windows the simulated data and the report's
    ``edges.csv`` and ``mecs.csv`` got CRLF while every other output gets LF."""
    from click.testing import CliRunner

    from bnilp.cli import main

    monkeypatch.setattr(os, "linesep", "\r\n")
    data, rep = tmp_path / "d.csv", tmp_path / "rep"
    res = CliRunner().invoke(main, ["simulate", "--nodes", "4", "--samples", "200", "--seed", "1", "-q",
                                    "--discrete-fraction", "1", "-o",
                                    str(data), "--truth", str(tmp_path / "t.json")])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["learn", str(data), "--bf", "3", "-q", "--report", str(rep)])
    assert res.exit_code == 0, res.output
    for path in (data, rep / "edges.csv", rep / "mecs.csv"):
        assert b"\r" not in path.read_bytes(), path


def test_a_read_only_file_that_cannot_be_replaced_is_one_line_and_leaves_no_temporary_file(monkeypatch, tmp_path):
    """Windows: the temporary file takes the read-only mode of the file it replaces, the rename onto a read-only file
    is refused, and Windows refuses to remove a read-only file — the clean-up's ``PermissionError`` traceback took
    the place of the one-line error, and the temporary file stayed."""
    held = tmp_path / "r.json"
    held.write_text("old\n")
    held.chmod(0o444)
    real_replace, real_unlink = os.replace, os.unlink

    def refuse(src, dst, *args, **kwargs):
        if os.fspath(dst) == os.fspath(held):
            raise PermissionError(errno.EACCES, "Access is denied", os.fspath(dst))
        return real_replace(src, dst, *args, **kwargs)

    def windows_unlink(path, *args, **kwargs):
        if not os.stat(path).st_mode & 0o200:
            raise PermissionError(errno.EACCES, "Access is denied", os.fspath(path))
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(scorefile.os, "replace", refuse)
    monkeypatch.setattr(scorefile.os, "unlink", windows_unlink)
    with pytest.raises(OutputError, match="Access is denied"):
        scorefile.atomic_write_text(held, "new\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"] and held.read_text() == "old\n"
    assert held.stat().st_mode & 0o777 == 0o444         # still read-only
