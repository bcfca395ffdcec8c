"""A session assembled and driven: the Runtime built from the options, the settings and the
folder; the Driver every front end talks to; subagents, background agents, status line."""
