"""Running git safely: the runner, the config guard, the safe.directory shim, the lock."""
