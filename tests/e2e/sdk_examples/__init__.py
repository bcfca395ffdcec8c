"""The Agent SDK's example programs, their scripted replies and checks (catalogue.py)."""
