"""Claude Code's stream-json protocol: the output schema (``schema``) and the input stream with
its control protocol (``session``), as the Agent SDK speaks them."""
