"""Slash commands: what counts as one (``slash``), the built-in ones (``builtin``), and the
project's and user's own from ``.claude/commands`` (``custom``)."""
