"""Reading shell command lines for permission checks: the parse (tree-sitter's bash grammar)
and what the read-only classifier knows about each program it allows."""
