"""`tensorweave server [--cluster JSON --job NAME --task I | --from-env] [--host H --port P]`:
one task (--from-env: the cluster and task of TF_CONFIG, as Kubernetes' TFJob sets it).

Prints `target grpc://host:port` once serving and serves until SIGTERM or Ctrl-C. A --cluster
that is not a JSON object of jobs, a --job or --task not in it, an address that cannot be
bound and unreadable --token-file/--tls-* files are usage errors.
"""

from __future__ import annotations

import errno
import json
import socket

from tensorweave.cli.main import UsageError, command
from tensorweave.distributed import server_main

_WHICH_TASK = ("--cluster takes host:port addresses ([v6]:port), and --job NAME --task I name "
               "this task among them")
_TF_CONFIG_EXAMPLE = ('\'{"cluster": {"worker": ["localhost:2222"]}, '
                      '"task": {"type": "worker", "index": 0}}\'')
_EXAMPLE = '\'{"ps": ["localhost:2222"], "worker": ["localhost:2223"]}\''


def _args(p) -> None:
    server_main.add_args(p)
    p.add_argument("--from-env", action="store_true",
                   help="take --cluster, --job and --task from TF_CONFIG (as TensorFlow reads "
                        "it: cluster, task.type, task.index)")


@command("server", "serve one task of a cluster (the master service over gRPC)")(_args)
def _server(args) -> int:
    from tensorweave import errors

    if args.from_env:
        _from_env(args)
    _check(args)
    _check_address(*_address(args))
    asked = server_main.stop_on_signals()
    try:
        server = server_main.make_server(args)
    except (ValueError, TypeError) as e:
        raise UsageError(f"--cluster/--job/--task: {e}", _WHICH_TASK) from None
    except errors.UnavailableError as e:
        where = "its address in --cluster" if args.cluster else "--port (0 picks a free one)"
        raise UsageError(e.message, f"stop what listens there or change {where}") from None
    return server_main.serve_until(server, asked)


def _from_env(args) -> None:
    """Fills --cluster/--job/--task from TF_CONFIG (distributed/cluster_resolver.py)."""
    from tensorweave.distributed.cluster_resolver import tf_config

    if args.cluster or args.job is not None or args.task is not None:
        raise UsageError("--from-env takes the task from TF_CONFIG",
                         "give either --from-env or --cluster/--job/--task")
    try:
        config = tf_config()
    except ValueError as e:
        raise UsageError(str(e), f"set TF_CONFIG to e.g. {_TF_CONFIG_EXAMPLE}") from None
    task = config.get("task") or {}
    if not config.get("cluster") or "type" not in task:
        raise UsageError("--from-env: TF_CONFIG has no cluster and task",
                         f"set TF_CONFIG to e.g. {_TF_CONFIG_EXAMPLE}")
    if task["type"] == "evaluator":
        raise UsageError("--from-env: an evaluator task is outside the cluster: it serves "
                         "nothing", "run the evaluation script itself on that task")
    args.cluster = json.dumps(config["cluster"])
    args.job, args.task = str(task["type"]), int(task.get("index", 0))


def _check(args) -> None:
    """The flags' own mistakes, before anything starts."""
    if args.cluster:
        try:
            spec = json.loads(args.cluster)
        except ValueError as e:
            raise UsageError(f"--cluster is not valid JSON ({e})", f"give e.g. {_EXAMPLE}") \
                from None
        if not isinstance(spec, dict) or not spec:
            raise UsageError("--cluster must be a JSON object of jobs",
                             f"give e.g. {_EXAMPLE}")
    elif args.job is not None or args.task is not None:
        raise UsageError("--job and --task need --cluster", f"add --cluster {_EXAMPLE}")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is not a port", "give 0..65535 (0: a free one)")
    if args.cpus < 1:
        raise UsageError(f"--cpus {args.cpus}: a task needs at least one CPU device",
                         "give --cpus 1 or more")
    if bool(args.tls_cert) != bool(args.tls_key):
        raise UsageError("--tls-cert and --tls-key go together", "give both or neither")
    for flag in ("token_file", "tls_cert", "tls_key", "tls_ca"):
        path = getattr(args, flag)
        if path is not None and not _readable(path):
            raise UsageError(f"--{flag.replace('_', '-')} {path}: cannot read it",
                             "give a readable file")


def _address(args) -> tuple[str, int]:
    """(host, port) this task binds; (host, 0) when --cluster leaves it to the server to say
    which task this is (it then names the mistake)."""
    if not args.cluster:
        return args.host, args.port
    from tensorweave.distributed import address
    from tensorweave.distributed.cluster import ClusterSpec

    try:
        spec = ClusterSpec(args.cluster)
        job = args.job if args.job is not None else spec.jobs[0] if len(spec.jobs) == 1 else None
        if job is None or (args.task is None and spec.num_tasks(job) != 1):
            return "localhost", 0
        task = args.task if args.task is not None else spec.task_indices(job)[0]
        host, port = address.split(spec.task_address(job, task))
        return host or "localhost", port
    except (ValueError, TypeError) as e:
        raise UsageError(f"--cluster/--job/--task: {e}", _WHICH_TASK) from None


def _check_address(host: str, port: int) -> None:
    """That `host` resolves and `port` is free there (before gRPC tries: its own failure
    is a log line and a vague error)."""
    try:
        family, kind, _, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError):
        raise UsageError(f"host {host!r} does not resolve",
                         "give an address of this machine (127.0.0.1, or 0.0.0.0 for all)") \
            from None
    with socket.socket(family, kind) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as e:
            hint = ("stop what listens there or pick another port (0: a free one)"
                    if e.errno == errno.EADDRINUSE else "give an address of this machine")
            raise UsageError(f"cannot listen on port {port} of {host}: {e.strerror}", hint) \
                from None


def _readable(path: str) -> bool:
    try:
        with open(path, "rb"):
            return True
    except OSError:
        return False
