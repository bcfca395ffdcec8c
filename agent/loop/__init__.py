"""The turn: the agent loop, running tool calls, costs."""
