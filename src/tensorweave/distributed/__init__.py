"""The distributed runtime: clusters, servers, and gRPC masters and workers.

`ClusterSpec` and `Server` are TF's `tf.train.ClusterSpec` and `tf.train.Server`; `Server`
(and with it grpc) is imported on first use, so importing the package stays cheap.
"""

from tensorweave.distributed.cluster import ClusterSpec

__all__ = ["ClusterSpec", "Server"]


def __getattr__(name: str):
    if name == "Server":
        from tensorweave.distributed.server import Server

        return Server
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
