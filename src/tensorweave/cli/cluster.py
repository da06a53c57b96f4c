"""`tensorweave cluster --ps N --workers M [--cpus C]`: a local cluster of server processes.

Prints the cluster spec (JSON) and each task's target, then keeps the tasks running until
Ctrl-C or SIGTERM, and stops them all (none is left behind, also when one fails to start).
"""

from __future__ import annotations

import signal
import threading

from tensorweave.cli.main import command


def _args(p) -> None:
    p.add_argument("--ps", type=int, default=1, help="parameter-server tasks")
    p.add_argument("--workers", type=int, default=2, help="worker tasks")
    p.add_argument("--cpus", type=int, default=1, help="CPU devices per task")


@command("cluster", "start a local cluster of ps and worker processes")(_args)
def _cluster(args) -> int:
    from tensorweave.distributed.local_cluster import LocalCluster

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with LocalCluster(args.ps, args.workers, args.cpus) as cluster:
        print(f"cluster {cluster.cluster_json}", flush=True)
        for job, tasks in cluster.spec.items():
            for i in range(len(tasks)):
                print(f"/job:{job}/task:{i} {cluster.target(job, i)}", flush=True)
        print("serving; Ctrl-C stops every task", flush=True)
        while not stop.wait(0.5):
            dead = [k for k, p in cluster.procs.items() if p.poll() is not None]
            if dead:
                print(f"task(s) exited: {dead}; stopping the cluster", flush=True)
                return 1
    return 0
