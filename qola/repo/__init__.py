"""Reading repositories from their files (no git runs here), and qola's own files."""
