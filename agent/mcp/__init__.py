"""MCP servers: their configuration and approval, the client connections and their tools."""
