"""A scoring walk that runs the system short of memory stops and says so (never the OS's silent kill):
with a time limit the deepening keeps its last finished pass (exact up to that palim, exit 3); without
one there is no result, a one-line ``LimitError`` and exit 3, and no file is written."""

from __future__ import annotations

import contextlib
import json
import math

import pytest
from click.testing import CliRunner

import bnilp.parentsets as parentsets
from bnilp.cli import EXIT_LIMIT, main
from bnilp.errors import LimitError
from bnilp.parentsets import score_parent_sets
from bnilp.scores import make_score
from tests.test_score_time_limit import discrete, random_discrete_frame

GIB = 1 << 30


def memory_runs_low(monkeypatch, from_depth: int | None = None) -> None:
    """The system reports almost no free memory — from the start, or from the deepening pass of palim
    ``from_depth`` on (a machine-independent stand-in for a walk that outgrows the memory)."""
    state = {"low": from_depth is None}
    run = parentsets._score_parent_sets

    def watched(*args, depth=None, **kwargs):
        if from_depth is not None and depth is not None and depth >= from_depth:
            state["low"] = True
        return run(*args, depth=depth, **kwargs)

    monkeypatch.setattr(parentsets, "_score_parent_sets", watched)
    monkeypatch.setattr(parentsets, "MEMORY_CHECK_SECONDS", 0.0)
    monkeypatch.setattr(parentsets, "free_memory", lambda: 1 if state["low"] else 64 * GIB)


def test_the_floor_is_a_share_of_physical_memory_and_at_least_half_a_gib() -> None:
    assert parentsets.scoring_memory_floor() >= parentsets.SCORING_MEMORY_FLOOR_BYTES == GIB // 2


def test_without_a_time_limit_low_memory_stops_the_walk_with_a_limit_error(monkeypatch) -> None:
    memory_runs_low(monkeypatch)
    with pytest.raises(LimitError, match=r"scoring stopped: .*below the scoring walk's floor.*--score-time-limit"):
        score_parent_sets(make_score("bic", discrete(3, 7, 300)), epsilon=math.log(20))


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_with_a_time_limit_low_memory_keeps_the_last_finished_pass(monkeypatch, n_jobs: int) -> None:
    """Memory runs low in the pass of palim 3: the result is the pass of palim 2, exactly."""
    data = discrete(5, 7, 300)
    ref = score_parent_sets(make_score("bic", data), epsilon=math.log(20), palim=2)
    memory_runs_low(monkeypatch, from_depth=3)
    got = score_parent_sets(make_score("bic", data), epsilon=math.log(20), time_limit=600, n_jobs=n_jobs,
                            counts="families")
    assert got.families == ref.families
    meta = got.meta
    assert meta["score_memory_limit_reached"] and not meta["score_time_limit_reached"]
    assert meta["palim_reached"] and meta["exact_for_parent_sets_up_to"] == 2
    assert [p["finished"] for p in meta["deepening"]] == [True, True, False]
    assert "floor" in meta["deepening"][-1]["stopped"]


def test_the_command_line_exits_3_and_writes_nothing_or_the_exact_part(monkeypatch, tmp_path) -> None:
    frame = random_discrete_frame(7, n=7, N=300, max_arity=3)
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "s.scores"
    memory_runs_low(monkeypatch)
    res = CliRunner().invoke(main, ["score", str(path), "-o", str(out), "--bf", "20"])
    assert res.exit_code == EXIT_LIMIT, res.output
    assert res.output.strip().splitlines()[-1].startswith("bnilp: limited: scoring stopped:")
    assert "Traceback" not in res.output and not out.exists() and not (tmp_path / "s.scores.json").exists()

    monkeypatch.undo()
    memory_runs_low(monkeypatch, from_depth=2)
    res = CliRunner().invoke(main, ["score", str(path), "-o", str(out), "--bf", "20", "--score-time-limit", "600",
                                    "--counts", "families"])
    assert res.exit_code == EXIT_LIMIT, res.output
    meta = json.loads((tmp_path / "s.scores.json").read_text())
    assert meta["score_memory_limit_reached"] and meta["exact_for_parent_sets_up_to"] == 1
    assert "scoring memory limit" in res.output
    assert "exact only for parent sets of size ≤ 1 (the scoring memory limit)" in res.output
    report = tmp_path / "r.json"
    monkeypatch.undo()
    memory_runs_low(monkeypatch, from_depth=2)
    res = CliRunner().invoke(main, ["learn", str(path), "--bf", "20", "--score-time-limit", "600", "-q",
                                    "--counts", "families", "--json", str(report)])
    assert res.exit_code == EXIT_LIMIT, res.output
    doc = json.loads(report.read_text())
    assert {"palim", "score_memory_limit"} <= set(doc["limits"]) and doc["scoring"]["score_memory_limit_reached"]
    assert "(the scoring memory limit)" in res.output


def allocations_fail(monkeypatch, from_depth: int | None = None) -> None:
    """An allocation of the walk is refused (``MemoryError``, as under ``ulimit -v``: the free memory the floor
    watches stays ample) — in every pass, or from the deepening pass of palim ``from_depth`` on."""
    import bnilp.lattice as lattice

    absorb = lattice._ChildWalk.absorb

    def refused(self, blocks, results):
        if from_depth is None or (self.palim is not None and self.palim >= from_depth):
            raise MemoryError("Unable to allocate 63.7 MiB for an array")
        return absorb(self, blocks, results)

    monkeypatch.setattr(lattice._ChildWalk, "absorb", refused)


def test_a_refused_allocation_is_a_memory_limit_not_a_crash(monkeypatch, tmp_path) -> None:
    """A review's find: under ``ulimit -v`` numpy's ``MemoryError`` escaped as a traceback (exit 1). It stops the
    walk as running short of free memory does: without a time limit a ``LimitError`` (one line, exit 3, no file);
    with one the last finished pass, exact up to its palim."""
    data = discrete(5, 7, 300)
    allocations_fail(monkeypatch)
    with pytest.raises(LimitError, match=r"scoring stopped: an allocation failed \(Unable to allocate.*ulimit -v"):
        score_parent_sets(make_score("bic", data), epsilon=math.log(20), counts="families")
    monkeypatch.undo()
    ref = score_parent_sets(make_score("bic", data), epsilon=math.log(20), palim=2)
    allocations_fail(monkeypatch, from_depth=3)
    got = score_parent_sets(make_score("bic", data), epsilon=math.log(20), time_limit=600, counts="families")
    assert got.families == ref.families and got.meta["score_memory_limit_reached"]
    assert got.meta["exact_for_parent_sets_up_to"] == 2 and "allocation failed" in got.meta["deepening"][-1]["stopped"]

    frame = random_discrete_frame(7, n=7, N=300, max_arity=3)
    path, out = tmp_path / "d.csv", tmp_path / "s.scores"
    frame.to_csv(path, index=False)
    allocations_fail(monkeypatch)
    res = CliRunner().invoke(main, ["score", str(path), "-o", str(out), "--bf", "20", "--counts", "families"])
    assert res.exit_code == EXIT_LIMIT and "Traceback" not in res.output and not out.exists(), res.output
    assert res.output.strip().splitlines()[-1].startswith("bnilp: limited: scoring stopped: an allocation failed")


def test_a_refused_allocation_in_every_pass_of_a_deepening_is_the_one_line_limit_too(monkeypatch, tmp_path) -> None:
    """A review's find (``prlimit --as`` on alarm1000 with ``--score-time-limit``): no pass finished, so the
    deepening fell back to the required parents alone (palim 0) outside its handler, and that walk's refused
    allocation escaped as a traceback (exit 1) where the run without a time limit ended in one line, exit 3."""
    def refused(*args, **kwargs):       # every pass, the fallback to palim 0 too
        raise MemoryError("Unable to allocate 63.7 MiB for an array")

    monkeypatch.setattr(parentsets, "_score_pass", refused)
    with pytest.raises(LimitError, match=r"^scoring stopped: an allocation failed \(Unable to allocate"):
        score_parent_sets(make_score("bic", discrete(5, 7, 300)), epsilon=math.log(20), time_limit=600)
    frame = random_discrete_frame(7, n=7, N=300, max_arity=3)
    path, out = tmp_path / "d.csv", tmp_path / "s.scores"
    frame.to_csv(path, index=False)
    res = CliRunner().invoke(main, ["score", str(path), "-o", str(out), "--bf", "20", "--counts", "families",
                                    "--score-time-limit", "600"])
    assert res.exit_code == EXIT_LIMIT and "Traceback" not in res.output and not out.exists(), res.output
    assert res.output.strip().splitlines()[-1].startswith("bnilp: limited: scoring stopped: an allocation failed")


def test_a_refused_allocation_after_scoring_is_a_limit_too(monkeypatch, tmp_path) -> None:
    """A ``MemoryError`` anywhere else in a command (the search, the report) ends it with one line and exit 3."""
    import bnilp.pipeline

    def refused(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(bnilp.pipeline, "solve", refused)
    frame = random_discrete_frame(8, n=4, N=200, max_arity=3)
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    res = CliRunner().invoke(main, ["learn", str(path), "--bf", "3", "-q"])
    assert res.exit_code == EXIT_LIMIT and "Traceback" not in res.output, res.output
    assert res.output.strip().splitlines()[-1].startswith("bnilp: limited: out of memory: an allocation failed "
                                                          "(MemoryError)")


def test_the_watch_stops_a_long_step_that_never_checks(monkeypatch) -> None:
    """A step that holds the walk (building a huge level) is interrupted by the watching thread within a
    look or two; the interrupt becomes ScoringMemoryLimit there and nothing is left pending after it."""
    import time

    monkeypatch.setattr(parentsets, "MEMORY_CHECK_SECONDS", 0.01)
    monkeypatch.setattr(parentsets, "free_memory", lambda: 1)
    t0 = time.perf_counter()
    with pytest.raises(parentsets.ScoringMemoryLimit), parentsets.memory_watch(parentsets.Deadline(math.inf, 2)):
        for _ in range(500):     # many short calls, as a level's build is (a call into C is not interrupted)
            time.sleep(0.01)
    assert time.perf_counter() - t0 < 2
    time.sleep(0.2)      # a stray interrupt would raise KeyboardInterrupt here


def test_the_watch_interrupts_only_inside_its_block_even_when_its_thread_starts_slowly(monkeypatch) -> None:
    """On a loaded machine the main thread can still be starting the watching thread when that thread's first
    look finds memory short: the interrupt must wait for the block (it landed in ``Thread.start``, outside the
    block, and ended a CI run's pytest with a bare KeyboardInterrupt)."""
    import threading
    import time
    import types

    class SlowStart(threading.Thread):
        def start(self) -> None:
            super().start()
            time.sleep(0.2)      # the main thread is held here past the thread's first looks

    monkeypatch.setattr(parentsets, "threading", types.SimpleNamespace(
        Thread=SlowStart, Lock=threading.Lock, Event=threading.Event,
        current_thread=threading.current_thread, main_thread=threading.main_thread))
    monkeypatch.setattr(parentsets, "MEMORY_CHECK_SECONDS", 0.01)
    monkeypatch.setattr(parentsets, "free_memory", lambda: 1)
    try:
        with pytest.raises(parentsets.ScoringMemoryLimit), \
                parentsets.memory_watch(parentsets.Deadline(math.inf, 2)):
            for _ in range(500):
                time.sleep(0.01)
    except KeyboardInterrupt:
        pytest.fail("the watch's interrupt arrived outside its block")
    time.sleep(0.2)      # a stray interrupt would raise KeyboardInterrupt here


def __del__(seconds: float) -> None:  # noqa: N807 - a finalizer's name: no interrupt lands in it, it is put off
    import time

    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_an_interrupt_put_off_and_sent_late_still_arrives_inside_the_watch(monkeypatch) -> None:
    """Under the command line's handler an interrupt that lands in a lock step or a finalizer is put off and sent
    again by another thread; on a loaded machine that thread can run long after its 1 ms. The watch waited
    0.1 s and the interrupt escaped to the caller as a bare KeyboardInterrupt (exit 130, not the limit's 3):
    it waits now while a put-off interrupt is still to be sent."""
    import time

    from bnilp import threads

    monkeypatch.setattr(threads, "RETRY_SECONDS", 0.3)     # the sending thread runs late
    monkeypatch.setattr(parentsets, "MEMORY_CHECK_SECONDS", 0.01)
    monkeypatch.setattr(parentsets, "free_memory", lambda: 1)
    try:
        with threads.interrupts_where_safe():
            with pytest.raises(parentsets.ScoringMemoryLimit), \
                    parentsets.memory_watch(parentsets.Deadline(math.inf, 2)):
                __del__(0.2)          # the watch fires in here: the interrupt is put off
            time.sleep(0.5)
    except KeyboardInterrupt:
        pytest.fail("the watch's interrupt arrived after its block")
    assert not threads.retries_pending()


def test_the_watch_is_silent_while_memory_lasts(monkeypatch) -> None:
    import time

    monkeypatch.setattr(parentsets, "MEMORY_CHECK_SECONDS", 0.01)
    monkeypatch.setattr(parentsets, "free_memory", lambda: 64 * GIB)
    with parentsets.memory_watch(parentsets.Deadline(math.inf, GIB)):
        time.sleep(0.1)
    time.sleep(0.1)


def test_the_watch_recognises_its_interrupt_when_compiled_code_wraps_it(monkeypatch) -> None:
    """numba's dispatcher re-raises an interrupt that lands in it as ``SystemError`` with the interrupt as
    its cause (BDeu on flag ended with that traceback and exit 1): it is still the memory limit; an error
    with no interrupt behind it is not, even after the watch fired (memory made short only where the
    interrupt is caught: a watch that fired before the ``suppress`` was entered failed the test, a review)."""
    import threading
    import time

    def step() -> None:
        try:
            time.sleep(0.01)
        except KeyboardInterrupt as interrupt:
            raise SystemError("CPUDispatcher(...) returned a result with an exception set") from interrupt

    monkeypatch.setattr(parentsets, "MEMORY_CHECK_SECONDS", 0.01)
    monkeypatch.setattr(parentsets, "free_memory", lambda: 1)
    with pytest.raises(parentsets.ScoringMemoryLimit), parentsets.memory_watch(parentsets.Deadline(math.inf, 2)):
        for _ in range(500):
            step()
    time.sleep(0.2)
    short = threading.Event()       # memory runs short only inside the suppress below: the interrupt lands there
    monkeypatch.setattr(parentsets, "free_memory", lambda: 1 if short.is_set() else 10**15)
    slept = math.inf
    with pytest.raises(ValueError, match="unrelated"), parentsets.memory_watch(parentsets.Deadline(math.inf, 2)):
        with contextlib.suppress(KeyboardInterrupt):
            started = time.perf_counter()
            short.set()
            while time.perf_counter() - started < 30:   # short sleeps: the interrupt comes between Python steps
                time.sleep(0.01)                         # (the watch fires and its interrupt is caught here)
        slept = time.perf_counter() - started
        raise ValueError("unrelated")
    assert slept < 30           # the watch did fire


def test_a_memory_floor_is_the_larger_of_its_share_and_its_bytes() -> None:
    from bnilp.memory import memory_floor, physical_memory
    total = physical_memory()
    assert total > GIB
    assert memory_floor(0.5, 1) == total // 2 and memory_floor(0.0, GIB) == GIB
    assert memory_floor(1.0, 2 * total) == 2 * total


def test_freed_memory_goes_back_to_the_system_where_the_c_library_can() -> None:
    """glibc's malloc_trim is found among the process's symbols (None with another C library), and calling it
    through :func:`return_freed_memory` is harmless."""
    import platform

    from bnilp.memory import _malloc_trim, return_freed_memory
    if platform.libc_ver()[0] == "glibc":
        assert _malloc_trim() is not None
    return_freed_memory()


def test_scoring_imports_dask_only_where_a_dask_cluster_runs_it() -> None:
    """Every walk imported ``distributed`` (0.5 s of each first pass) to know Dask's ``KilledWorker``; a memory
    stop that landed in that import left the module half made, and the fallback pass (and every later scoring
    call of the process) failed with an ``AttributeError``, said as "interrupted". The type is now looked up
    only where Dask is loaded, and a killed Dask worker is still a limit."""
    import subprocess
    import sys

    code = ("import sys; import numpy as np, pandas as pd; from bnilp.data import from_dataframe; "
            "from bnilp.scores import make_score; from bnilp.parentsets import score_parent_sets; "
            "rows = np.random.default_rng(0).integers(0, 2, (200, 4)); "
            "d = from_dataframe(pd.DataFrame(rows, columns=list('abcd'))); "
            "score_parent_sets(make_score('bic', d), epsilon=1.0, n_jobs=2); print('distributed' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "False", done.stderr
    KilledWorker = pytest.importorskip("distributed.scheduler").KilledWorker  # noqa: N806 - the class's own name
    killed = KilledWorker.__new__(KilledWorker)
    with pytest.raises(LimitError, match="a worker process ended unexpectedly \\(KilledWorker\\)"):
        with parentsets.lost_workers_as_limits():
            raise killed
    with pytest.raises(ValueError, match="unrelated"), parentsets.lost_workers_as_limits():
        raise ValueError("unrelated")


def test_a_worker_lost_on_a_cluster_by_address_points_to_that_cluster_not_to_this_machines_jobs() -> None:
    """On this machine (no scheduler, or ``local``) a lost worker is most often the kernel's memory killer, and
    ``--jobs`` decides how many there are; a cluster given by address runs its workers elsewhere, where
    ``--jobs`` does not reach: the line names that cluster and its logs (it blamed memory and --jobs)."""
    from concurrent.futures import BrokenExecutor

    for scheduler in (None, "local"):
        with pytest.raises(LimitError, match=r"operating system for memory; fewer n_jobs \(--jobs\)"):
            with parentsets.lost_workers_as_limits(scheduler):
                raise BrokenExecutor
    with pytest.raises(LimitError, match="ended unexpectedly") as stopped:
        with parentsets.lost_workers_as_limits("tcp://10.0.0.5:8786"):
            raise BrokenExecutor
    assert "on the Dask cluster tcp://10.0.0.5:8786: its workers' logs say why" in str(stopped.value)
    assert "--jobs" not in str(stopped.value) and "operating system" not in str(stopped.value)
