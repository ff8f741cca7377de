from bnilp.cli import main

main()
