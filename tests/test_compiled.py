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
    namespace: dict = {"njit": njit}
    with pytest.warns(CompileCacheWarning, match="cannot be cached") as said:
        exec(compile("@njit(cache=True)\ndef thrice(x):\n    return 3 * x\n\n"
                     "@njit(cache=True)\ndef half(x):\n    return x / 2\n", "<no file>", "exec"), namespace)
    assert len(said) == 1 and namespace["thrice"](5) == 15 and namespace["half"](5) == 2.5


def test_a_cache_that_cannot_be_written_or_read_costs_a_compile_not_the_run(tmp_path, monkeypatch) -> None:
    """A full disk (or a quota) while the compiled code is saved, and a cached file removed before it is read: the
    call returns its value, a warning says so once; a cache that works is used (a second process loads it)."""
    monkeypatch.setattr("bnilp.compiled._SAID", set())
    module = _module(tmp_path, "full_disk", monkeypatch)
    cache_file = module.twice._cache._cache_file

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache_file, "save", full)
    with pytest.warns(CompileCacheWarning, match="not cached .No space left on device"):
        assert module.twice(21) == 42
    monkeypatch.undo()
    monkeypatch.setattr("bnilp.compiled._SAID", set())
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
