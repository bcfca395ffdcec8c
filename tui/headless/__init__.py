"""Front ends for programs: ``ccx -p`` with text, JSON or stream-json output (``run``) and
Claude Code's stream-json protocol as the Agent SDK speaks it (``stream_json``)."""
