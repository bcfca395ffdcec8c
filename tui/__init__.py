"""Front ends: the Textual app, the plain REPL, and the `ccx` launcher."""
