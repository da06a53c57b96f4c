"""The master: placement, pruning, optimization passes, partitioning, step orchestration."""
