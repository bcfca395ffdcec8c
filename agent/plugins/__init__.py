"""Plugins: folders that bundle commands, agents, skills, hooks and MCP servers, as Claude Code's."""
