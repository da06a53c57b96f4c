"""tensorweave.formats."""
