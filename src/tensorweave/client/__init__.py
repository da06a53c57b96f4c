"""The client: Session and fetch/feed mapping."""
