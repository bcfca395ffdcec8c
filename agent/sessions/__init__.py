"""Session persistence: the append-only transcript, its writer and replay, finding sessions."""
