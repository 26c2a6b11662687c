from qola.noop import main

main()
