"""What the model is told: the system prompt, memory files, skills, the plan, hooks."""
