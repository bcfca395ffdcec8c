"""Whether a tool call may run: the gate, its shell half, protected paths, settings, trust, safe git."""
