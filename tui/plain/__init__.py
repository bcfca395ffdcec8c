"""The plain line-by-line REPL (`ccx --plain`)."""
