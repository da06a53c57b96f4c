"""Monitoring: step stats, timelines, summaries and the resource watcher."""
