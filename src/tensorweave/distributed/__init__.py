"""The distributed runtime: clusters, servers, and gRPC masters and workers."""
