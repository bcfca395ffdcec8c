"""The agent: core types, the model client, the shell parser, permissions and settings,
sessions, instructions, MCP and the loop (above tools, below compaction and tui)."""

__version__ = "0.1.0"
