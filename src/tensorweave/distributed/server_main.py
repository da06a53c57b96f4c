"""A server process: `python -m tensorweave.distributed.server_main [--port 0] ...`.

Prints `target grpc://host:port` on its first stdout line once serving (so a parent started
with port 0 learns the port), then serves until SIGTERM/SIGINT, and exits 0 after a clean stop
(in-flight calls get STOP_GRACE_S; more signals while it stops change nothing).
`--token-file` and `--tls-*` override the TENSORWEAVE_RPC_TOKEN / TENSORWEAVE_TLS_* settings
for the whole process: what the server accepts and how it calls other tasks.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time

STOP_GRACE_S = 0.5     # in-flight calls get this long once a signal asks the server to stop


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cluster", help="cluster spec as JSON ({\"ps\": [\"host:port\"], ...})")
    p.add_argument("--job", help="this task's job name (with --cluster)")
    p.add_argument("--task", type=int, default=None, help="this task's index (with --cluster)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind without --cluster")
    p.add_argument("--port", type=int, default=0, help="port without --cluster (0: a free one)")
    p.add_argument("--cpus", type=int, default=1, help="CPU devices of this task")
    p.add_argument("--token-file", help="file holding the shared token every call must carry")
    p.add_argument("--tls-cert", help="PEM certificate chain to serve TLS with (with --tls-key)")
    p.add_argument("--tls-key", help="PEM private key of --tls-cert")
    p.add_argument("--bulk-max-connections", type=int, default=None,
                   help="connections the bulk port serves at once (default 256)")
    p.add_argument("--hello-deadline", type=float, default=None,
                   help="seconds a new bulk connection has for its hello (default 10)")
    p.add_argument("--tls-ca", help="PEM root certificates: require client certificates they "
                                    "signed, and verify other tasks with them")


def configure_security(args) -> None:
    """Applies `--token-file` / `--tls-*` to this process's security config.

    Raises: OSError (an unreadable token file), ValueError (a bad token, --tls-cert without
    --tls-key)."""
    from tensorweave.distributed import security

    changes: dict = {}
    if args.token_file:
        with open(args.token_file, "rb") as f:
            changes["token"] = f.read()
    for flag in ("tls_cert", "tls_key", "tls_ca"):
        if getattr(args, flag, None):
            changes[flag] = getattr(args, flag)
    if changes:
        security.set_config(security.current().replace(**changes))


def serve(args) -> int:
    """Runs a server from parsed `add_args` arguments until a signal stops it."""
    asked = stop_on_signals()
    return serve_until(make_server(args), asked)


def stop_on_signals() -> StopRequest:
    """A request that SIGTERM and SIGINT set (call it in the main thread, before the server
    starts, so a signal that comes while it starts still stops it)."""
    # NOTE: the handlers only ask; the main thread stops the server once. A stop run inside a
    # handler could be re-entered by the next signal (a terminal's Ctrl-C reaches every task
    # of a cluster, then the launcher's SIGTERM follows) and hang there.
    asked = StopRequest()
    signal.signal(signal.SIGTERM, asked.set)
    signal.signal(signal.SIGINT, asked.set)
    return asked


class StopRequest:
    """Whether a signal asked the process to stop; `wait(timeout)` as threading.Event's.

    Lock-free, unlike threading.Event: a handler runs between two bytecodes of the main
    thread, possibly inside another handler's `set`, and Event.set would wait there forever
    for the non-reentrant lock that the interrupted set holds (Ctrl-C then SIGTERM did this
    to one task in ~20 stops)."""

    POLL_S = 0.05

    def __init__(self) -> None:
        self._asked = False

    def set(self, *_signal) -> None:
        self._asked = True

    def is_set(self) -> bool:
        return self._asked

    def wait(self, timeout: float) -> bool:
        """Whether a stop was asked for, at the latest `timeout` s from now."""
        end = time.monotonic() + timeout
        while not self._asked and (left := end - time.monotonic()) > 0:
            time.sleep(min(self.POLL_S, left))
        return self._asked


def make_server(args):
    """The started `Server` that `add_args` arguments describe.

    Raises: ValueError / TypeError (a malformed --cluster, or --job/--task not in it),
    UnavailableError (the address cannot be bound), OSError (an unreadable --token-file).
    """
    from tensorweave.distributed.address import join
    from tensorweave.distributed.server import Server

    configure_security(args)
    config = {"device_count": {"CPU": args.cpus}}
    limits = {"bulk_max_connections": getattr(args, "bulk_max_connections", None),
              "hello_deadline_s": getattr(args, "hello_deadline", None)}
    if args.cluster:
        return Server(args.cluster, args.job, args.task, config=config, **limits)
    return Server({"localhost": [join(args.host, args.port)]}, "localhost", 0, config=config,
                  **limits)


def serve_until(server, asked: StopRequest) -> int:
    """Prints the server's target, serves until `asked` is set, stops it; returns 0."""
    print(f"target {server.target}", flush=True)
    while not asked.wait(0.5):
        pass
    server.stop(grace=STOP_GRACE_S)
    if server.metrics()["rpc_in_flight"]:
        # NOTE: a call stuck where no cancellation reaches would keep the interpreter from
        # exiting (it joins its pools' threads): the server has stopped, so the process ends
        sys.stdout.flush()
        os._exit(0)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tensorweave.distributed.server_main")
    add_args(p)
    return serve(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
