"""The compiled kernels' on-disk cache (:mod:`bnilp.compiled`): a cache that cannot be found, written or read costs
compile time, never the run (a review: a traceback at import where no cache folder could be written, and at the
end of a run whose cache folder was full or removed meanwhile)."""

from __future__ import annotations

import errno
import importlib.util
import subprocess
import sys
import textwrap
import warnings

import pytest

from bnilp.compiled import CompileCacheWarning, njit

pytestmark = pytest.mark.filterwarnings("ignore::bnilp.compiled.CompileCacheWarning")


def _module(tmp_path, name: str, monkeypatch):
    """A module of a file in ``tmp_path`` whose ``twice`` is compiled with ``njit(cache=True)``."""
    path = tmp_path / f"{name}.py"
    path.exists() or path.write_text(textwrap.dedent("""
        from bnilp.compiled import njit

        @njit(cache=True, nogil=True)
        def twice(x):
            return 2 * x
    """))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)      # importable, as the package's modules are
    spec.loader.exec_module(module)
    return module


def test_a_function_without_a_cache_folder_is_compiled_uncached_and_said_once(monkeypatch) -> None:
    """Code numba finds no folder to cache for (here: no source file; a read-only package with a read-only HOME
    gives the same "no locator available") is compiled all the same, with one :class:`CompileCacheWarning`."""
    monkeypatch.setattr("bnilp.compiled._SAID", set())
    monkeypatch.setenv("BNILP_COMPILE_CACHE_SAID", "")
    namespace: dict = {"njit": njit}
    with pytest.warns(CompileCacheWarning, match="cannot be cached") as said:
        exec(compile("@njit(cache=True)\ndef thrice(x):\n    return 3 * x\n\n"
                     "@njit(cache=True)\ndef half(x):\n    return x / 2\n", "<no file>", "exec"), namespace)
    assert len(said) == 1 and namespace["thrice"](5) == 15 and namespace["half"](5) == 2.5


def test_a_cache_that_cannot_be_written_or_read_costs_a_compile_not_the_run(tmp_path, monkeypatch) -> None:
    """A full disk (or a quota) while the compiled code is saved, and a cached file removed before it is read: the
    call returns its value, a warning says so once; a cache that works is used (a second process loads it)."""
    monkeypatch.setattr("bnilp.compiled._SAID", set())
    monkeypatch.setenv("BNILP_COMPILE_CACHE_SAID", "")
    module = _module(tmp_path, "full_disk", monkeypatch)
    cache_file = module.twice._cache._cache_file

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache_file, "save", full)
    with pytest.warns(CompileCacheWarning, match="not cached .No space left on device"):
        assert module.twice(21) == 42
    monkeypatch.setattr("bnilp.compiled._SAID", set())         # another module, whose cache works
    monkeypatch.setenv("BNILP_COMPILE_CACHE_SAID", "")
    module = _module(tmp_path, "removed", monkeypatch)
    assert module.twice(4) == 8                     # compiled and cached
    again = _module(tmp_path, "removed", monkeypatch)

    def removed(*args, **kwargs):
        raise FileNotFoundError(errno.ENOENT, "No such file or directory")

    monkeypatch.setattr(again.twice._cache._cache_file, "load", removed)
    with pytest.warns(CompileCacheWarning, match="could not be read"):
        assert again.twice(5) == 10
    probe = ("import importlib.util, sys\n"
             f"spec = importlib.util.spec_from_file_location('removed', {str(tmp_path / 'removed.py')!r})\n"
             "m = sys.modules['removed'] = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
             "print(m.twice(3), sum(m.twice.stats.cache_hits.values()))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["6", "1"]                        # the code cached by the first process, loaded by the next
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # a cache that works says nothing
        assert _module(tmp_path, "quiet", monkeypatch).twice(1) == 2


def test_a_cut_short_index_and_an_interrupt_while_loading(tmp_path, monkeypatch) -> None:
    """A cache index cut short (a process killed while it wrote it) failed the load softly, then the save, which reads
    the index first, with an ``UnpicklingError`` traceback on every run (a review): both are skipped. A Ctrl-C that
    lands in numba's unpickling (CPython wraps it in a ``SystemError``) is the run's interrupt, not a cache failure
    to compile around."""
    import pickle

    monkeypatch.setattr("bnilp.compiled._SAID", set())
    monkeypatch.setenv("BNILP_COMPILE_CACHE_SAID", "")       # nothing said yet; put back after the test
    module = _module(tmp_path, "cut_short", monkeypatch)
    cache_file = module.twice._cache._cache_file

    def truncated(*args, **kwargs):
        raise pickle.UnpicklingError("pickle data was truncated")

    monkeypatch.setattr(cache_file, "load", truncated)
    monkeypatch.setattr(cache_file, "save", truncated)
    with pytest.warns(CompileCacheWarning) as said:
        assert module.twice(7) == 14
    assert {str(w.message).split(" (")[0] for w in said} == {
        "bnilp: a cached compiled function could not be read", "bnilp: compiled code not cached"}
    other = _module(tmp_path, "interrupted", monkeypatch)

    def interrupted(*args, **kwargs):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise SystemError("<built-in function loads> returned a result with an exception set") from exc

    monkeypatch.setattr(other.twice._cache._cache_file, "load", interrupted)
    with pytest.raises(SystemError) as caught:
        other.twice(1)
    assert isinstance(caught.value.__cause__, KeyboardInterrupt)


def test_what_was_said_is_not_said_again_by_the_processes_started_after(tmp_path, monkeypatch) -> None:
    """The scoring pool's workers import the same kernels and meet the same cache: each printed the warning again,
    in Python's several-line form (a review). What a process said is in its environment, which they inherit."""
    monkeypatch.setattr("bnilp.compiled._SAID", set())
    monkeypatch.setenv("BNILP_COMPILE_CACHE_SAID", "")       # nothing said yet; put back after the test
    namespace: dict = {"njit": njit}
    with pytest.warns(CompileCacheWarning):
        exec(compile("@njit(cache=True)\ndef once(x):\n    return x\n", "<no file>", "exec"), namespace)
    child = ("import warnings; warnings.simplefilter('error')\n"
             "from bnilp.compiled import njit\n"
             "exec(compile('@njit(cache=True)\\ndef again(x):\\n    return x\\n', '<no file>', 'exec'))\n"
             "print('quiet')")
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "quiet", done.stderr
