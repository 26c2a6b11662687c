"""Pin history: bump, diff, outdated, and the commits between two pins."""
