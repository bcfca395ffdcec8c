"""The composition root: options, the runtime that wires the parts, slash commands, headless, CLI."""
