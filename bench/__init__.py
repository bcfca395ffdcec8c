"""Benchmark scripts; run them with the project's virtualenv Python."""
