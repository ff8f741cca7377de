from bnilp.command import main

main()
