"""One module per command; qola/cli.py only wires the command line to them.

Each command is a function that takes the parsed options and returns the
exit code; it writes through qola.base.console and raises QolaError for errors.
"""
