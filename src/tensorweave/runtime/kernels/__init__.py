"""Kernels per device type; `registry.py` holds the one kernel table."""
