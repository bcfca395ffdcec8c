"""Context management: token accounting, microcompact, auto and full compaction, restoration."""
