"""Generate ``instances/asia.csv``: rows forward-sampled from the ASIA network.

ASIA (Lauritzen & Spiegelhalter 1988, "Local computations with probabilities on graphical
structures", JRSS B 50:157–224) with its textbook probabilities (P(x = yes | parents)):

    asia 0.01;  smoke 0.5;  tub | asia: 0.05 / 0.01;  lung | smoke: 0.1 / 0.01;
    bronc | smoke: 0.6 / 0.3;  either = tub OR lung;  xray | either: 0.98 / 0.05;
    dysp | bronc, either: (yes, yes) 0.9, (yes, no) 0.8, (no, yes) 0.7, (no, no) 0.1.

Run ``python instances/make_asia.py`` to regenerate (seed 2019, 5,000 rows); the output is
byte-for-byte reproducible with numpy's PCG64.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

ROWS = 5000
SEED = 2019


def sample_asia(rows: int = ROWS, seed: int = SEED) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)

    def bern(p: np.ndarray | float) -> np.ndarray:
        return rng.random(rows) < p

    asia = bern(0.01)
    smoke = bern(0.5)
    tub = bern(np.where(asia, 0.05, 0.01))
    lung = bern(np.where(smoke, 0.1, 0.01))
    bronc = bern(np.where(smoke, 0.6, 0.3))
    either = tub | lung
    xray = bern(np.where(either, 0.98, 0.05))
    dysp = bern(np.select([bronc & either, bronc & ~either, ~bronc & either], [0.9, 0.8, 0.7], 0.1))
    return {"asia": asia, "tub": tub, "smoke": smoke, "lung": lung, "bronc": bronc,
            "either": either, "xray": xray, "dysp": dysp}


def main() -> None:
    columns = sample_asia()
    names = list(columns)
    lines = [",".join(names)]
    for row in zip(*(columns[n] for n in names), strict=True):
        lines.append(",".join("yes" if v else "no" for v in row))
    out = Path(__file__).resolve().parents[1] / "bnilp" / "instances" / "asia.csv"   # package data
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out} ({ROWS} rows)")


if __name__ == "__main__":
    main()
