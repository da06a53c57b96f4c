"""The runtime: devices, plans, executors, rendezvous, workers and kernels."""
