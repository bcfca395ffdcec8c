"""The agent: loop, messages, API client, sessions, settings, permissions, CLI."""

__version__ = "0.1.0"
