"""`tensorweave serve --model_name NAME --model_base_path DIR [--port 8500] [--rest_api_port
8501]`: TensorFlow Serving's model server (flags named as `tensorflow_model_server` names them).

Serves the newest complete numbered version under DIR over gRPC (PredictionService,
ModelService) and REST, picks up new versions every --file_system_poll_wait_seconds, and
prints `serving NAME grpc HOST:PORT rest http://HOST:PORT` once listening. Runs until
SIGTERM or Ctrl-C. A missing DIR, bad ports and unreadable --token-file/--tls-* files are
usage errors.
"""

from __future__ import annotations

import os

from tensorweave.cli.main import UsageError, at_least, command


def _args(p) -> None:
    p.add_argument("--model_name", required=True, help="the name clients ask for")
    p.add_argument("--model_base_path", required=True,
                   help="directory of numbered SavedModel versions (1/, 2/, ...)")
    p.add_argument("--port", type=int, default=8500, help="gRPC port (0: a free one)")
    p.add_argument("--rest_api_port", type=int, default=8501,
                   help="REST port (0: a free one; -1: no REST API)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind")
    p.add_argument("--file_system_poll_wait_seconds", type=float, default=1.0,
                   help="how often to look for new versions")
    p.add_argument("--enable_batching", action="store_true",
                   help="batch concurrent requests to the same signature")
    p.add_argument("--max_batch_size", type=at_least(1), default=32)
    p.add_argument("--batch_timeout_micros", type=at_least(0), default=1000)
    p.add_argument("--max_enqueued_batches", type=at_least(1), default=100)
    p.add_argument("--max_request_bytes", type=at_least(1), default=64 << 20,
                   help="largest gRPC message or REST body accepted")
    p.add_argument("--max_inflight", type=at_least(1), default=64,
                   help="requests run or waiting at once; more get UNAVAILABLE")
    p.add_argument("--token-file", help="file holding the token every call must carry")
    p.add_argument("--tls-cert", help="PEM certificate chain to serve TLS with (with --tls-key)")
    p.add_argument("--tls-key", help="PEM private key of --tls-cert")
    p.add_argument("--tls-ca", help="PEM root certificates: require client certificates")


def _check(args) -> None:
    if not os.path.isdir(args.model_base_path):
        raise UsageError(f"--model_base_path {args.model_base_path}: no such directory",
                         "give the directory holding the numbered versions (1/, 2/, ...)")
    for flag, low in (("port", 0), ("rest_api_port", -1)):
        value = getattr(args, flag)
        if not low <= value <= 65535:
            raise UsageError(f"--{flag} {value} is not a port", "give 0..65535 (0: a free one)")
    if bool(args.tls_cert) != bool(args.tls_key):
        raise UsageError("--tls-cert and --tls-key go together", "give both or neither")
    for flag in ("token_file", "tls_cert", "tls_key", "tls_ca"):
        path = getattr(args, flag)
        if path is not None and not os.access(path, os.R_OK):
            raise UsageError(f"--{flag.replace('_', '-')} {path}: cannot read it",
                             "give a readable file")


def make_server(args):
    """The (not yet started) ModelServer the flags describe."""
    from tensorweave.serving.batching import BatchingOptions
    from tensorweave.serving.server import ModelServer

    token = open(args.token_file, "rb").read().strip() if args.token_file else None
    tls = {"cert": args.tls_cert, "key": args.tls_key, "ca": args.tls_ca} \
        if args.tls_cert else None
    batching = BatchingOptions(args.max_batch_size, args.batch_timeout_micros,
                               args.max_enqueued_batches) if args.enable_batching else None
    return ModelServer(args.model_name, args.model_base_path, port=args.port,
                       rest_api_port=None if args.rest_api_port < 0 else args.rest_api_port,
                       host=args.host, poll_seconds=args.file_system_poll_wait_seconds,
                       batching=batching, max_request_bytes=args.max_request_bytes,
                       max_inflight=args.max_inflight, token=token, tls=tls)


@command("serve", "serve SavedModels over TensorFlow Serving's gRPC and REST APIs")(_args)
def _serve(args) -> int:
    from tensorweave.distributed import server_main

    _check(args)
    asked = server_main.stop_on_signals()
    try:
        server = make_server(args)
    except (OSError, RuntimeError) as e:
        raise UsageError(f"cannot listen on {args.host}: {e}",
                         "stop what listens there or pick other ports (0: a free one)") from None
    except ValueError as e:
        raise UsageError(str(e), "check --token-file and --tls-*") from None
    server.start()
    rest = f" rest http://{args.host}:{server.rest_api_port}" if server.rest_api_port else ""
    print(f"serving {args.model_name} grpc {args.host}:{server.port}{rest}", flush=True)
    while not asked.wait(0.5):
        pass
    server.stop()
    return 0
