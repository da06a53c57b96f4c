"""Your own TF1 script on a running cluster: the spec and a target that `tensorweave cluster`
printed go in, the variables live on the ps task, the steps run on a worker.

    .venv/bin/tensorweave cluster --ps 1 --workers 2        # in one terminal; it prints
      cluster {"ps": ["127.0.0.1:41001"], "worker": ["127.0.0.1:41002", "127.0.0.1:41003"]}
      /job:ps/task:0 grpc://127.0.0.1:41001
      /job:worker/task:0 grpc://127.0.0.1:41002
      ...
    .venv/bin/python examples/cluster_client.py \\
        --cluster '{"ps": ["127.0.0.1:41001"], "worker": [...]}' --task 0   # in another

It fits y = x @ w + b by gradient descent (the data never leaves the client: it is fed), and
prints the device of every variable and the fitted parameters. Run it again, or with
`--task 1`, and it continues from the variables the ps still holds: they outlive sessions.
`tf.Session.reset(target)` (here `--reset`) clears them.
"""

import argparse
import json

import numpy as np

import tensorweave as tf

TRUE_W = np.array([[2.0], [-3.4], [1.5]], np.float32)
TRUE_B = 4.2


def build(cluster: dict, task: int):
    """The graph under replica_device_setter: variables on the ps job, the rest on our worker."""
    setter = tf.train.replica_device_setter(cluster=cluster,
                                            worker_device=f"/job:worker/task:{task}")
    with tf.device(setter):
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return x, y, w, b, loss, step


def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", required=True, help="the JSON `tensorweave cluster` printed")
    parser.add_argument("--task", type=int, default=0, help="the worker task to run on")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--reset", action="store_true", help="clear the ps variables first")
    args = parser.parse_args(argv)
    cluster = json.loads(args.cluster)
    target = f"grpc://{cluster['worker'][args.task]}"     # the /job:worker/task:I target
    if args.reset:
        tf.Session.reset(target)

    rng = np.random.RandomState(args.task)
    features = rng.randn(500, 3).astype(np.float32)
    targets = features @ TRUE_W + TRUE_B
    x, y, w, b, loss, step = build(cluster, args.task)
    for v in tf.global_variables():
        print(f"{v.op.name}: {v.device}")
    with tf.Session(target) as sess:
        if len(sess.run(tf.report_uninitialized_variables())):
            sess.run(tf.global_variables_initializer())
            print("initialized the variables")
        else:
            mse = sess.run(loss, {x: features, y: targets})
            print(f"continuing from the ps's variables: mse {mse:.6f}")
        for _ in range(args.steps):
            _, mse = sess.run([step, loss], {x: features, y: targets})
        fitted_w, fitted_b = sess.run([w, b])
    print(f"fitted w: {' '.join(f'{v:.3f}' for v in fitted_w.ravel())}  b: {fitted_b:.3f}")
    print(f"final mse: {mse:.6f}")
    return float(mse)


if __name__ == "__main__":
    main()
