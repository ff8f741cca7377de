from bnilp.cli import run

run()
