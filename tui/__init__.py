"""Everything that assembles a session and drives it for a person or a program: the session,
the commands, the CLI, the full-screen app, the plain REPL, headless and stream-json, the warm
worker, the demo and its fake API (the top layer: tools < agent < compaction < tui)."""
