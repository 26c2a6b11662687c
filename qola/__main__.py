from qola.cli import main

main()
