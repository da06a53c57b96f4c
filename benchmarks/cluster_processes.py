"""A cluster of task processes on this host (loopback TCP): the MLP step over 1 ps + 2 worker
towers and the word2vec step with its tables sharded over 2 ps, ours and TensorFlow's taking
turns in the same run.

    python -m benchmarks.cluster_processes [--rounds 2] [--steps 50] [--only mlp,sharded]

The measurement is benchmarks/namespace_task.py's (the same code under both frameworks); each
task (2 ps, 2 workers) is a process of its own, as on separate hosts, but they talk over
127.0.0.1 and share this machine's cores (benchmarks/namespace_hosts.py puts them on network
namespace hosts, which needs root). Every round starts fresh tasks for each framework, ours
first. Prints one JSON object: our figures under namespace_task.py's keys, TF's under the same
keys prefixed `tf_` (the best of the rounds, each figure a time), and `rounds`, every round's
figures; without the TF peer (~/.cache/tensorweave-tf-peer or PEER_PYTHON) only ours, with
`_skipped` saying why.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASK = str(ROOT / "benchmarks" / "namespace_task.py")
TASKS = [("ps", 0), ("ps", 1), ("worker", 0), ("worker", 1)]
PEER = os.environ.get("PEER_PYTHON") or str(Path.home() / ".cache" / "tensorweave-tf-peer" /
                                            "bin" / "python")
START_TIMEOUT_S = 120.0
CLIENT_TIMEOUT_S = 600.0


def _ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _wait_ready(proc: subprocess.Popen) -> bool:
    """Whether `proc` printed `ready` (TF logs lines of its own first)."""
    for line in proc.stdout:
        if line.strip() == "ready":
            return True
    return False


def measure(python: str, framework: str, only: str, steps: int) -> dict:
    """The client's figures for `framework`, on fresh task processes."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TF_CPP_MIN_LOG_LEVEL": "3"}
    at = [f"127.0.0.1:{p}" for p in _ports(len(TASKS))]
    cluster = json.dumps({"ps": at[:2], "worker": at[2:]})
    procs = []
    try:
        for job, task in TASKS:
            proc = subprocess.Popen(
                [python, TASK, "server", "--framework", framework, "--cluster", cluster,
                 "--job", job, "--task", str(task)],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
            procs.append(proc)
            if not _wait_ready(proc):
                return {"_error": f"{framework} {job}:{task} did not start"}
        out = subprocess.run([python, TASK, "client", "--framework", framework, "--cluster",
                              cluster, "--only", only, "--steps", str(steps)],
                             capture_output=True, text=True, env=env,
                             timeout=CLIENT_TIMEOUT_S)
        lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
        return json.loads(lines[-1]) if lines else {"_error": out.stderr[-500:]}
    except subprocess.TimeoutExpired:
        return {"_error": f"{framework}: the client ran past {CLIENT_TIMEOUT_S:g} s"}
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(timeout=30)


def best(rounds: list[dict]) -> dict:
    """Per figure, the lowest over the rounds (every figure a time, bytes equal)."""
    out: dict = {}
    for r in rounds:
        for k, v in r.items():
            if isinstance(v, (int, float)):
                out[k] = min(out.get(k, v), v)
            else:
                out.setdefault(k, v)
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--only", default="mlp,sharded")
    args = p.parse_args(argv)
    has_peer = Path(PEER).exists()
    ours, theirs = [], []
    for _ in range(max(1, args.rounds)):
        ours.append(measure(sys.executable, "tensorweave", args.only, args.steps))
        if has_peer:
            theirs.append(measure(PEER, "tf", args.only, args.steps))
    res = best(ours)
    res.update({f"tf_{k}": v for k, v in best(theirs).items()})
    if not has_peer:
        res["_skipped"] = {"TensorFlow": f"no TensorFlow peer at {PEER}"}
    res["rounds"] = [{"tensorweave": o, "tf": t} for o, t in zip(ours, theirs or [{}] * len(ours))]
    res["load_avg"] = [round(v, 2) for v in os.getloadavg()]
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
