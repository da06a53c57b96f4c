"""Autodiff: gradient functions per op type, and `gradients()` (built on them)."""
