"""Tasks on separate network-namespace hosts: ps -> worker transfer, a ps/2-worker MLP step and
a word2vec step with its tables sharded over 2 ps.

    sudo .venv/bin/python -m benchmarks.namespace_hosts        (needs CAP_NET_ADMIN)

Four hosts (tests/distributed/netns.py: namespaces on a bridge, 198.18.0.0/15), two ps and two
workers, each on its own host; the client on worker 0's host (the transfers and the MLP use
ps 0 only). The same measurement
(benchmarks/namespace_task.py) runs under tensorweave and, when ~/.cache/tensorweave-tf-peer
(or PEER_PYTHON) has TensorFlow, under TF in the same run, each on fresh hosts. Prints one
JSON object: our figures under namespace_task.py's keys, TF's under the same keys prefixed
`tf_`, or `_skipped` saying why a side was not measured (no privilege to make namespaces: a
`make bench` without root skips the section so). A suite of `make bench` (~1.5 min).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.distributed import netns  # noqa: E402

TASK = str(ROOT / "benchmarks" / "namespace_task.py")
TASKS = [("ps", 0), ("ps", 1), ("worker", 0), ("worker", 1)]
PEER = os.environ.get("PEER_PYTHON") or str(Path.home() / ".cache" / "tensorweave-tf-peer" /
                                            "bin" / "python")


def _ready(proc) -> bool:
    """Whether `proc` printed `ready` (TF logs lines of its own first)."""
    for line in proc.stdout:
        if line.strip() == "ready":
            return True
    return False


def measure(python: str, framework: str) -> dict:
    """The client's figures for `framework`, on three fresh hosts."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with netns.Hosts(4) as hosts:
        at = [f"{a}:2222" for a in hosts.addresses]
        spec = {"ps": at[:2], "worker": at[2:]}
        cluster = json.dumps(spec)
        for i, (job, task) in enumerate(TASKS):
            proc = hosts.run(i, [python, TASK, "server", "--framework", framework, "--cluster",
                                 cluster, "--job", job, "--task", str(task)], env=env)
            if not _ready(proc):
                return {"_error": f"{framework} {job}:{task} did not start"}
        client = hosts.run(2, [python, TASK, "client", "--framework", framework,
                               "--cluster", cluster], env=env)
        out, _ = client.communicate(timeout=300)
        lines = [line for line in out.splitlines() if line.startswith("{")]
        return json.loads(lines[-1]) if lines else {"_error": out[-500:]}


def main() -> None:
    why = netns.unavailable()
    if why is not None:
        print(json.dumps({"_skipped": {"namespace hosts": why}}))
        return
    res = dict(measure(sys.executable, "tensorweave"))
    if Path(PEER).exists():
        res.update({f"tf_{k}": v for k, v in measure(PEER, "tf").items()})
    else:
        res["_skipped"] = {"TensorFlow": f"no TensorFlow peer at {PEER}"}
    res["load_avg"] = [round(v, 2) for v in os.getloadavg()]
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
