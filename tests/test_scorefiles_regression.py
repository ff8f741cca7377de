"""Regression fixtures: score files generated earlier (scorefiles/, BIC, BF 20, no palim) are
reproduced byte for byte from the data (their scores were checked against GOBNILP's wine file)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bnilp.data import load_data
from bnilp.parentsets import score_parent_sets
from bnilp.scorefile import format_jaakkola
from bnilp.scores import make_score

FIXTURES = Path(__file__).resolve().parent.parent / "scorefiles"


@pytest.mark.parametrize("name", ["tic-tac-toe", "wine", "voting", "zoo"])
def test_score_file_is_reproduced(shared_data, name: str) -> None:
    fixture = FIXTURES / f"{name}.BIC.20.scores"
    if not fixture.exists():
        pytest.skip(f"{fixture.name} not generated (benchmarks/score_table1.py --write)")
    data = load_data(shared_data / "liao2019_ebnsl" / f"{name}.csv", no_header=True)
    table = score_parent_sets(make_score("bic", data), epsilon=math.log(20))
    assert format_jaakkola(table) == fixture.read_text()
