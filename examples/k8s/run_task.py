"""The entry point of every pod of examples/k8s: one task of the demo's cluster mode.

    python examples/k8s/run_task.py              # the task of TF_CONFIG
    python examples/k8s/run_task.py --evaluate   # afterwards, on any host that reaches worker 0

The task comes from TF_CONFIG (Kubeflow's TFJob sets it in each pod). Without it, from
TW_CLUSTER (the cluster as JSON), TW_JOB, and the ordinal at the end of the pod's host name
(`tw-worker-1` -> task 1), as a StatefulSet names its pods.

  ps task       serves it (`tensorweave server --from-env`) until the pod is stopped.
  worker task   serves it, writes the demo's TFRecord shards to --logdir (the same for every
                worker: the data are deterministic), then runs the demo's own cluster client
                (`cnn_digits.py --cluster-spec ... --cluster-task I`, unchanged: the code
                `cnn_digits.py --cluster` runs on one machine), and keeps serving until stopped
                (the ps variables stay reachable for --evaluate).
  --evaluate    what `cnn_digits.py --cluster` does once its clients are done: the test accuracy
                of the variables on the ps, and a checkpoint in --logdir.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(EXAMPLES))


def resolve_task(environ=os.environ) -> dict:
    """TF_CONFIG as a dict: the environment's, or one made from TW_CLUSTER/TW_JOB/hostname."""
    if environ.get("TF_CONFIG"):
        return json.loads(environ["TF_CONFIG"])
    if not environ.get("TW_CLUSTER") or not environ.get("TW_JOB"):
        raise SystemExit("run_task.py: set TF_CONFIG, or TW_CLUSTER and TW_JOB")
    host = environ.get("HOSTNAME") or socket.gethostname()
    index = int(host.rsplit("-", 1)[-1])
    return {"cluster": json.loads(environ["TW_CLUSTER"]),
            "task": {"type": environ["TW_JOB"], "index": index}}


def tensorweave_tool() -> str:
    tool = Path(sys.executable).with_name("tensorweave")
    return str(tool) if tool.exists() else "tensorweave"


def serve(config: dict) -> subprocess.Popen:
    """`tensorweave server --from-env` for the task; returns once it serves."""
    env = {**os.environ, "TF_CONFIG": json.dumps(config)}
    proc = subprocess.Popen([tensorweave_tool(), "server", "--from-env"], env=env,
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith("target "):
        raise SystemExit(f"run_task.py: the server did not start ({line.strip()!r})")
    print(line.strip(), flush=True)
    return proc


def run_worker(config: dict, logdir: str, demo_flags: list[str]) -> int:
    import cnn_digits

    args = cnn_digits.parse_args(["--logdir", logdir, *demo_flags])
    data = cnn_digits.load_data(args.test_fraction, args.seed)
    cnn_digits.write_records(data[0], data[1], os.path.join(logdir, "records"))
    argv = [sys.executable, str(EXAMPLES / "cnn_digits.py"),
            "--cluster-spec", json.dumps(config["cluster"]),
            "--cluster-task", str(config["task"]["index"]), "--logdir", logdir,
            "--no-progress", *demo_flags]
    return subprocess.call(argv)


def evaluate(config: dict, logdir: str, demo_flags: list[str]) -> float:
    """The launcher's last step (cnn_digits_cluster.launch): accuracy of the ps variables."""
    import cnn_digits
    import cnn_digits_cluster as cluster

    import tensorweave as tf

    args = cnn_digits.parse_args(["--logdir", logdir, *demo_flags])
    spec = config["cluster"]
    tf.set_random_seed(args.seed)
    data = cnn_digits.load_data(args.test_fraction, args.seed)
    paths = cnn_digits.write_records(data[0], data[1], os.path.join(logdir, "records"))
    model, _ = cluster.build(cnn_digits, args, spec, 0, paths, len(data[0]))
    saver = tf.train.Saver()
    with tf.Session(f"grpc://{spec['worker'][0]}", config=cluster.session_config(0)) as sess:
        accuracy = cnn_digits.evaluate(sess, model, data[2], data[3])
        step = int(sess.run(model["global_step"]))
        prefix = os.path.join(os.path.abspath(logdir), "cluster_checkpoints", "model")
        print(f"checkpoint: {saver.save(sess, prefix, global_step=step)}")
    print(f"test accuracy: {accuracy:.3f}", flush=True)
    return accuracy


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--logdir", default="/tmp/tensorweave-demo")
    p.add_argument("--evaluate", action="store_true")
    p.add_argument("--exit-when-done", action="store_true",
                   help="a worker stops serving once its client is done")
    args, demo_flags = p.parse_known_args(argv)
    config = resolve_task()
    if args.evaluate:
        evaluate(config, args.logdir, demo_flags)
        return 0
    server = serve(config)
    signal.signal(signal.SIGTERM, lambda *_: (server.terminate(), sys.exit(0)))
    code = 0
    if config["task"]["type"] != "ps":
        code = run_worker(config, args.logdir, demo_flags)
        print(f"client done: exit {code}", flush=True)
        if args.exit_when_done or code:
            server.terminate()
            return code
    return server.wait()


if __name__ == "__main__":
    sys.exit(main())
