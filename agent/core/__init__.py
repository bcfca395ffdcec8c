"""The agent's data types and leaf utilities: messages, events, the request, locations."""
