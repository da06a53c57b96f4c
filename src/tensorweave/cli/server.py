"""`tensorweave server [--cluster JSON --job NAME --task I] [--host H --port P]`: one task.

Prints `target grpc://host:port` once serving and serves until SIGTERM or Ctrl-C.
"""

from __future__ import annotations

from tensorweave.cli.main import command
from tensorweave.distributed.server_main import add_args, serve


@command("server", "serve one task of a cluster (the master service over gRPC)")(add_args)
def _server(args) -> int:
    return serve(args)
