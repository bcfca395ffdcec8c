"""The tools the model calls (Read, Write, Edit, Bash, Grep, Glob) and the file-state cache."""
