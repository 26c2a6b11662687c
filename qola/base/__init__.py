"""What every layer may use: errors and exit codes, the terminal, words, names."""
