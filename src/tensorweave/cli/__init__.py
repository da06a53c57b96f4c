"""The `tensorweave` command."""
