"""Shared fixtures: the public benchmark data (read in place from ../shared/data, never copied)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


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
