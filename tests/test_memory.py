"""What the process may use: the control group's memory limit and the cores of its affinity."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from bnilp import memory
from bnilp.memory import cgroup_memory
from bnilp.scorefile import read_jaakkola


def _files(folder: Path, **contents: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in contents.items():
        (folder / name.replace("__", ".")).write_text(text)


def test_a_cgroup_v2_limit_is_read_with_the_inactive_file_cache_not_counted_as_used(tmp_path) -> None:
    proc = tmp_path / "cgroup"
    proc.write_text("0::/job/42\n")
    _files(tmp_path / "fs/job/42", memory__max="4294967296\n", memory__current="1073741824\n",
           memory__stat="anon 600000000\ninactive_file 73741824\nactive_file 400000000\n")
    assert cgroup_memory(str(proc), str(tmp_path / "fs")) == (4294967296, 1073741824 - 73741824)
    _files(tmp_path / "fs/job/42", memory__max="max\n")
    assert cgroup_memory(str(proc), str(tmp_path / "fs")) is None          # no limit


def test_a_cgroup_v1_limit_is_read_and_a_container_sees_its_group_at_the_root(tmp_path) -> None:
    proc = tmp_path / "cgroup"
    proc.write_text("4:cpu,cpuacct:/x\n3:memory:/docker/abc\n0::/\n")
    _files(tmp_path / "fs/memory", memory__limit_in_bytes="2147483648\n", memory__usage_in_bytes="500\n",
           memory__stat="cache 400\ntotal_inactive_file 100\n")
    assert cgroup_memory(str(proc), str(tmp_path / "fs")) == (2147483648, 400)    # /docker/abc not mounted
    _files(tmp_path / "fs/memory/docker/abc", memory__limit_in_bytes="9223372036854771712\n",
           memory__usage_in_bytes="1\n")
    assert cgroup_memory(str(proc), str(tmp_path / "fs")) == (2147483648, 400)    # its own 2^63: the group above
    _files(tmp_path / "fs/memory", memory__limit_in_bytes="9223372036854771712\n")
    assert cgroup_memory(str(proc), str(tmp_path / "fs")) is None          # no limit anywhere


def test_a_limit_set_on_a_group_above_the_process_counts(tmp_path) -> None:
    """Slurm (cgroup v2) sets a job's memory on job_N; its tasks run in job_N/step_M/user/task_0, which say
    "max". Every group up to the root is read, and the one leaving the least room counts."""
    proc = tmp_path / "cgroup"
    proc.write_text("0::/system.slice/slurmstepd.scope/job_7/step_0/user/task_0\n")
    job = tmp_path / "fs/system.slice/slurmstepd.scope/job_7"
    _files(job, memory__max="8589934592\n", memory__current="6442450944\n")
    _files(job / "step_0", memory__max="max\n", memory__current="6000000000\n")
    _files(job / "step_0/user/task_0", memory__max="max\n", memory__current="5000000000\n")
    assert cgroup_memory(str(proc), str(tmp_path / "fs")) == (8589934592, 6442450944)
    _files(job / "step_0", memory__max="7000000000\n")       # less room below: 1.0 GB against 2.1 GB
    assert cgroup_memory(str(proc), str(tmp_path / "fs")) == (7000000000, 6000000000)


def test_no_cgroup_file_system_is_no_limit(tmp_path) -> None:
    assert cgroup_memory(str(tmp_path / "missing"), str(tmp_path)) is None
    (tmp_path / "cgroup").write_text("0::/a\n")
    assert cgroup_memory(str(tmp_path / "cgroup"), str(tmp_path / "nothing")) is None


def test_free_memory_is_what_the_control_group_leaves_when_that_is_less(monkeypatch) -> None:
    """The programme's tables, phase 2's guard and the scoring guard all ask ``free_memory``: in a job limited
    to 4 GiB with 3 GiB used it is 1 GiB, whatever the machine has free; and the floor's physical memory is the
    limit."""
    monkeypatch.setattr(memory, "_machine_free", lambda: 100 * 2**30)
    monkeypatch.setattr(memory, "cgroup_memory", lambda: (4 * 2**30, 3 * 2**30))
    assert memory.free_memory() == 2**30
    assert memory.physical_memory() == 4 * 2**30
    monkeypatch.setattr(memory, "cgroup_memory", lambda: None)
    assert memory.free_memory() == 100 * 2**30
    monkeypatch.setattr(memory, "cgroup_memory", lambda: (4 * 2**30, 5 * 2**30))   # over: nothing left
    assert memory.free_memory() == 0


@pytest.mark.parametrize("text", ["", "garbage\n", "0::/a\nnot:a:line:at:all\n"])
def test_an_unreadable_cgroup_file_is_no_limit_not_an_error(tmp_path, text) -> None:
    (tmp_path / "cgroup").write_text(text)
    assert cgroup_memory(str(tmp_path / "cgroup"), str(tmp_path)) is None


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this system")
def test_one_thread_per_core_means_the_cores_this_process_may_run_on():
    """Held to one core (``taskset``, a batch job's cpuset), "one per core" is one: the programme's threads and
    its time estimate (divided by them), ``--jobs -1``'s workers. ``os.cpu_count()`` counts the machine's."""
    from bnilp.ilp.dp import dp_threads
    from bnilp.memory import usable_cores

    allowed = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(allowed)})
        assert usable_cores() == 1 and dp_threads(0) == 1
    finally:
        os.sched_setaffinity(0, allowed)
    assert usable_cores() == len(allowed)


def test_more_jobs_than_cores_start_one_worker_a_core(monkeypatch, tmp_path):
    """``--jobs 100000`` with a score evaluated in Python started a loky process for each job it could before
    memory ran out (436 processes, 24 GiB, in a review): workers on this machine are capped to its usable
    cores, and −1 is all of them; the scores do not change."""
    import numpy as np
    import pandas as pd

    from bnilp import lattice
    from bnilp.data import from_dataframe
    from bnilp.parentsets import score_parent_sets
    from bnilp.scores import make_score

    monkeypatch.setattr(memory, "usable_cores", lambda: 2)
    assert [memory.worker_count(j) for j in (1, 2, 3, 100_000, -1)] == [1, 2, 2, 2, 2]
    started: list[int] = []
    for name in ("start_pool", "start_threads"):
        start = getattr(lattice, name)
        monkeypatch.setattr(lattice, name,
                            lambda n_jobs, start=start, **kw: started.append(n_jobs) or start(n_jobs, **kw))
    rng = np.random.default_rng(0)
    x = rng.normal(size=120)
    data = from_dataframe(pd.DataFrame({"x": x, "y": x + rng.normal(size=120), "d": rng.integers(0, 2, 120)}),
                          continuous=["x", "y"], discrete=["d"])
    for name in ("cg", "bic"):
        subset = data if name == "cg" else from_dataframe(pd.DataFrame({"d": rng.integers(0, 2, 120),
                                                                        "e": rng.integers(0, 3, 120)}))
        one = score_parent_sets(make_score(name, subset), epsilon=3.0, n_jobs=1)
        many = score_parent_sets(make_score(name, subset), epsilon=3.0, n_jobs=100_000)
        assert many.families == one.families
    assert started and max(started) == 2


def test_a_family_matrix_past_half_the_free_memory_is_a_limit_not_the_out_of_memory_killer(monkeypatch, tmp_path):
    """The search's family arrays hold a dense K × n matrix (``_Data.pbool``, a byte a cell: 3 GB at 10⁶ families of
    3,000 variables); past half the free memory the run ends ``limited`` (exit 3, one line naming the sizes), with
    no output file — not killed mid-build. Below :data:`DENSE_CHECK_BYTES` nothing is asked."""
    from click.testing import CliRunner

    from bnilp.cli import main
    from bnilp.ilp import families

    table = read_jaakkola("scorefiles/wine.BIC.20.scores")
    cells = sum(len(f) for f in table.families.values()) * len(table.variables)
    monkeypatch.setattr(memory, "free_memory", lambda: 2 * cells - 2)
    monkeypatch.setattr(families, "DENSE_CHECK_BYTES", 0)
    out = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["solve", "scorefiles/wine.BIC.20.scores", "-q", "--json", str(out)])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 3 and len(lines) == 1 and not out.exists()
    assert lines[0].startswith("bnilp: limited: memory_limit: the score table's ")
    assert f" families of {len(table.variables)} variables take about " in lines[0]
    assert lines[0].endswith("(fewer families: a lower BF or a palim when scoring)")
    data = families._Data(table, check_room=False)     # phase 2's restriction of a table that passed: not asked
    assert data.restricted(np.ones(data.K, dtype=bool))[0].K == data.K
    monkeypatch.setattr(memory, "free_memory", lambda: 2 * cells)
    assert CliRunner().invoke(main, ["solve", "scorefiles/wine.BIC.20.scores", "-q", "--optimum-only"]).exit_code == 0
