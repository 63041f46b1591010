"""Operators' tools over a running stack: API keys, statements and histories, reconciliation, stream SQL."""
