"""`cnn_digits.py --cluster`: the demo's CNN trained by between-graph replication.

The launcher starts a local cluster (`--ps` parameter servers and `--workers` workers, each
its own process on 127.0.0.1), then one client process per worker task. Every client builds
the same graph under `tf.train.replica_device_setter` — variables on the ps tasks, its input
pipeline and compute on its own worker — opens a session on its worker's master and trains
asynchronously on its share of the TFRecord shards (task 0, the chief, initializes the
variables; the others wait for that). When every client is done, the launcher connects as one
more client, evaluates the trained variables (they live on the ps) and saves a checkpoint.

Run: .venv/bin/python examples/cnn_digits.py --cluster [--workers 2] [--ps 1]
 or: .venv/bin/python examples/cnn_digits_cluster.py [--workers 2] [--ps 1] [demo flags]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import tensorweave as tf
from tensorweave.distributed.local_cluster import LocalCluster

CLIENT_TIMEOUT_S = 600.0
INIT_TIMEOUT_S = 60.0


def build(demo, args, spec: dict, task: int, paths: list[str], n_train: int):
    """The replicated graph as worker `task` builds it; returns (model, iterator)."""
    n_workers = len(spec["worker"])
    setter = tf.train.replica_device_setter(cluster=spec,
                                            worker_device=f"/job:worker/task:{task}")
    with tf.device(setter):
        iterator = demo.input_pipeline(paths[task::n_workers] or paths, args.batch_size,
                                       args.seed + task)
        next_images, next_labels = iterator.get_next()
        images = tf.placeholder_with_default(next_images, [None, 8, 8, 1], name="images")
        labels = tf.placeholder_with_default(next_labels, [None], name="labels")
        is_training = tf.placeholder_with_default(False, [], name="is_training")
        steps_per_epoch = -(-n_train // args.batch_size)
        model = demo.build_model(images, labels, is_training, args, steps_per_epoch)
    return model, iterator


def session_config(task: int) -> tf.ConfigProto:
    # NOTE: a worker's session needs the ps tasks and itself, not the other workers
    # (TF's usual device_filters), so one worker finishing or failing leaves the others be.
    return tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{task}"])


def client(demo, args) -> int:
    """One worker's client process: train `args.epochs` passes over its shards."""
    spec = json.loads(args.cluster_spec)
    task = args.cluster_task
    tf.set_random_seed(args.seed)
    data = demo.load_data(args.test_fraction, args.seed)
    paths = sorted(os.path.join(args.logdir, "records", p)
                   for p in os.listdir(os.path.join(args.logdir, "records"))
                   if p.endswith(".tfrecord"))
    model, iterator = build(demo, args, spec, task, paths, len(data[0]))
    n_batches = -(-len(data[0]) // (args.batch_size * len(spec["worker"])))
    with tf.Session(f"grpc://{spec['worker'][task]}", config=session_config(task)) as sess:
        if task == 0:
            sess.run(tf.global_variables_initializer())
        else:
            _wait_initialized(sess)
        sess.run(tf.local_variables_initializer())

        def report(epoch, stats):
            print(f"worker {task} epoch {epoch:2d}: loss {stats['loss']:.4f}  train accuracy "
                  f"{stats['train_accuracy']:.3f}", flush=True)

        demo.train(sess, model, iterator, n_batches, args, on_epoch_end=report)
    return 0


def _wait_initialized(sess) -> None:
    """Blocks until the chief has initialized the variables (or INIT_TIMEOUT_S passes)."""
    pending = tf.report_uninitialized_variables()
    deadline = time.monotonic() + INIT_TIMEOUT_S
    while len(sess.run(pending)):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the chief did not initialize the variables in "
                               f"{INIT_TIMEOUT_S:.0f} s")
        time.sleep(0.2)


def launch(demo, args) -> float:
    """Starts the cluster and the clients, then evaluates; returns the test accuracy."""
    start = time.perf_counter()
    tf.set_random_seed(args.seed)
    data = demo.load_data(args.test_fraction, args.seed)
    paths = demo.write_records(data[0], data[1], os.path.join(args.logdir, "records"))
    with LocalCluster(ps=args.ps, workers=args.workers) as cluster:
        print(f"cluster: {cluster.cluster_json}")
        clients = [_start_client(args, cluster, i) for i in range(args.workers)]
        failed = _wait_clients(clients)
        if failed:
            raise RuntimeError(f"worker client(s) {failed} failed")
        model, _ = build(demo, args, cluster.spec, 0, paths, len(data[0]))
        saver = tf.train.Saver()
        with tf.Session(cluster.target("worker", 0), config=session_config(0)) as sess:
            accuracy = demo.evaluate(sess, model, data[2], data[3])
            step = int(sess.run(model["global_step"]))
            prefix = os.path.join(os.path.abspath(args.logdir), "cluster_checkpoints", "model")
            print(f"checkpoint: {saver.save(sess, prefix, global_step=step)}")
    print(f"{args.workers} workers, {args.ps} ps, {step} steps in "
          f"{time.perf_counter() - start:.1f} s")
    print(f"test accuracy: {accuracy:.3f}")
    return accuracy


def _start_client(args, cluster, task: int) -> subprocess.Popen:
    argv = [sys.executable, os.path.join(os.path.dirname(__file__), "cnn_digits.py"),
            "--cluster-spec", cluster.cluster_json, "--cluster-task", str(task),
            "--logdir", args.logdir, "--epochs", str(args.epochs),
            "--batch-size", str(args.batch_size), "--seed", str(args.seed),
            "--learning-rate", str(args.learning_rate), "--no-progress"]
    return subprocess.Popen(argv)


def _wait_clients(clients: list[subprocess.Popen]) -> list[int]:
    """Waits for every client (CLIENT_TIMEOUT_S in all); returns the tasks that failed."""
    deadline = time.monotonic() + CLIENT_TIMEOUT_S
    failed = []
    for task, proc in enumerate(clients):
        try:
            code = proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        if code != 0:
            failed.append(task)
    return failed


if __name__ == "__main__":
    # NOTE: run directly, this file is the demo with --cluster (cnn_digits imports this
    # module for the cluster parts; its flags, --help included, are the demo's).
    import cnn_digits

    cnn_digits.main(["--cluster", *sys.argv[1:]])
