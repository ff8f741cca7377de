"""Shared fixtures: the public benchmark data (read in place from ../shared/data, never copied)."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def slow_after(cases, quick: int) -> list:
    """Parametrize cases of which the first ``quick`` run in the README's quick command and the rest are marked
    slow (``.ci/run`` runs both): the quick suite keeps each oracle's cheap instances, CI all of them."""
    return [case if i < quick else pytest.param(*(case if isinstance(case, tuple) else (case,)),
                                                 marks=pytest.mark.slow)
            for i, case in enumerate(cases)]


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture
def runner() -> CliRunner:
    """A click test runner for the ``bnilp`` command."""
    return CliRunner()


def random_discrete_frame(seed: int, n: int, N: int, max_arity: int = 3) -> pd.DataFrame:
    """Random data with real dependencies: each column copies an earlier one with noise."""
    rng = np.random.default_rng(seed)
    cols: dict[str, np.ndarray] = {}
    for j in range(n):
        r = int(rng.integers(2, max_arity + 1))
        x = rng.integers(0, r, size=N)
        if j and rng.random() < 0.8:
            src = cols[f"V{int(rng.integers(0, j))}"]
            copy = rng.random(N) < rng.uniform(0.3, 0.9)
            x = np.where(copy, src % r, x)
        x[: r] = np.arange(r)
        cols[f"V{j}"] = x
    return pd.DataFrame(cols)


def signal_once_listed(count: int, signum: int = signal.SIGTERM) -> tuple[Callable[[dict], None], list[int]]:
    """A ``progress`` callback for the solver that sends ``signum`` to this process once phase 2 reports
    ``count`` networks listed, and the list that then holds the count it saw (empty if it never fired)."""
    sent: list[int] = []

    def progress(info: dict) -> None:
        if info["phase"] == "enumerate" and info["networks"] >= count and not sent:
            sent.append(info["networks"])
            os.kill(os.getpid(), signum)

    return progress, sent


def tied_forests(n: int):
    """A score table on ``n`` variables where every family is the empty set or one parent, all scoring 0:
    every forest is optimal ((n + 1)^(n − 1) tied DAGs)."""
    from bnilp.scorefile import ScoreTable

    names = [f"v{i}" for i in range(n)]
    return ScoreTable(names, {v: {frozenset(): 0.0, **{frozenset([u]): 0.0 for u in names if u != v}}
                              for v in names})
