"""The benchmark suite: `make bench` (python -m benchmarks.run) writes BENCHMARKS.md."""
