"""`tensorweave cluster --ps N --workers M [--cpus C]`: a local cluster of server processes.

Prints the cluster spec (JSON) and each task's target, then keeps the tasks running until
Ctrl-C or SIGTERM, and stops them all (none is left behind, also when one fails to start or
the signal comes while they start). One signal is enough: from then on the command ignores
more, stops every task at once and waits at most LocalCluster's STOP_GRACE_S before it kills
those still running.
"""

from __future__ import annotations

import signal
import time

from tensorweave.cli.main import UsageError, at_least, command


def _args(p) -> None:
    p.add_argument("--ps", type=at_least(0), default=1, help="parameter-server tasks")
    p.add_argument("--workers", type=at_least(0), default=2, help="worker tasks")
    p.add_argument("--cpus", type=at_least(1), default=1, help="CPU devices per task")


class _Stop(BaseException):
    """Raised in the main thread by SIGINT/SIGTERM (as KeyboardInterrupt is by SIGINT)."""


def _raise_stop(signum, frame):
    _ignore_signals()
    raise _Stop(signum)


def _ignore_signals() -> None:
    # NOTE: while the tasks stop, so a second Ctrl-C cannot cut the stop short and leave
    # tasks behind (LocalCluster.stop is bounded).
    for sig in _SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@command("cluster", "start a local cluster of ps and worker processes")(_args)
def _cluster(args) -> int:
    from tensorweave.distributed.local_cluster import LocalCluster

    if args.ps + args.workers == 0:
        raise UsageError("a cluster needs at least one task", "give --workers 1 or more")
    before = {sig: signal.signal(sig, _raise_stop) for sig in _SIGNALS}
    try:
        with LocalCluster(args.ps, args.workers, args.cpus) as cluster:
            return _serve(cluster)
    except _Stop:
        return 0
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _serve(cluster) -> int:
    """Prints the spec and targets, then watches the tasks until one exits or a signal."""
    print(f"cluster {cluster.cluster_json}", flush=True)
    for job, tasks in cluster.spec.items():
        for i in range(len(tasks)):
            print(f"/job:{job}/task:{i} {cluster.target(job, i)}", flush=True)
    print("serving; Ctrl-C stops every task", flush=True)
    try:
        while True:
            time.sleep(0.5)
            dead = [f"/job:{j}/task:{i}" for (j, i), p in cluster.procs.items()
                    if p.poll() is not None]
            if dead:
                print(f"task(s) exited: {', '.join(dead)}; stopping the cluster", flush=True)
                return 1
    except _Stop:
        print(f"stopping {len(cluster.procs)} task(s)", flush=True)
        return 0
    finally:
        _ignore_signals()
