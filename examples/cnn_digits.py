"""The tensorweave demo: a small CNN, written as a TensorFlow 1.x script, learns to read
scikit-learn's 8x8 handwritten digits (1,797 images) in a few seconds on a CPU.

    conv 3x3x32 - batch norm - ReLU - max pool      8x8 -> 4x4
    conv 3x3x64 - batch norm - ReLU - max pool      4x4 -> 2x2
    dense 128 - ReLU - dropout - dense 10

He-initialized kernels with L2 regularization, Adam, batch-norm moving averages updated
through the UPDATE_OPS control-dependency idiom, a held-out test split (20%, fixed seed).
It prints `test accuracy: 0.9xx` at the end.

Training reads its images one record at a time: the training split is written once to sharded
TFRecord files (tf.train.Example protos) and streamed through a tf.data pipeline (shuffle,
map with parse_single_example, batch, prefetch); evaluation feeds the test arrays directly.

Everything goes under `--logdir` (default runs/cnn_digits): a checkpoint after every epoch
(run the demo again and it resumes from the latest one; `--fresh` starts over), TensorBoard
event files (loss, accuracies, weight histograms, the graph, one traced step) and a Chrome
trace of one training step.

Run: make demo   (or .venv/bin/python examples/cnn_digits.py [--epochs 12] [--no-progress])
     `--cluster` trains the same model over a local cluster of processes (1 ps, 2 workers,
     each worker its own client: between-graph replication; see cnn_digits_cluster.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits  # installed with scikit-learn

import tensorweave as tf
from tensorweave.monitoring.progress import Progress


# -- data -------------------------------------------------------------------------------------
def load_data(test_fraction: float, seed: int):
    """(x_train, y_train, x_test, y_test): [N, 8, 8, 1] float32 images standardized with the
    training split's mean and std, int32 labels; the split is stratified and seeded."""
    digits = load_digits()
    images = digits.images.astype(np.float32)[..., None]
    labels = digits.target.astype(np.int32)
    x_train, x_test, y_train, y_test = train_test_split(
        images, labels, test_size=test_fraction, random_state=seed, stratify=labels)
    mean, std = x_train.mean(), x_train.std()
    return (x_train - mean) / std, y_train, (x_test - mean) / std, y_test


def write_records(x, y, directory: str, shards: int = 4) -> list[str]:
    """Writes (x, y) once as `shards` TFRecord files of Examples {image: 64 floats, label};
    returns their paths (existing complete shards are reused)."""
    os.makedirs(directory, exist_ok=True)
    paths = [os.path.join(directory, f"train-{k:05d}-of-{shards:05d}.tfrecord")
             for k in range(shards)]
    if all(os.path.exists(p) for p in paths):
        return paths
    for k, path in enumerate(paths):
        with tf.io.TFRecordWriter(path + ".tmp") as w:
            for image, label in zip(x[k::shards], y[k::shards]):
                w.write(tf.train.Example(features=tf.train.Features(feature={
                    "image": tf.train.Feature(float_list=tf.train.FloatList(
                        value=image.reshape(-1))),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
                })).SerializeToString())
        os.replace(path + ".tmp", path)
    return paths


def input_pipeline(paths: list[str], batch_size: int, seed: int):
    """An initializable iterator over shuffled, parsed, batched training records."""
    features = {"image": tf.io.FixedLenFeature([64], tf.float32),
                "label": tf.io.FixedLenFeature([], tf.int64)}

    def parse(record):
        f = tf.io.parse_single_example(record, features)
        return tf.reshape(f["image"], [8, 8, 1]), tf.cast(f["label"], tf.int32)

    dataset = (tf.data.TFRecordDataset(paths).shuffle(2048, seed=seed)
               .map(parse, num_parallel_calls=1).batch(batch_size).prefetch(2))
    return tf.data.make_initializable_iterator(dataset)


def batches(n: int, batch_size: int, rng=None):
    """Index arrays covering range(n) in batches (shuffled when `rng` is given)."""
    order = rng.permutation(n) if rng is not None else np.arange(n)
    for start in range(0, n, batch_size):
        yield order[start:start + batch_size]


# -- model ------------------------------------------------------------------------------------
def conv_block(inputs, filters: int, l2_scale: float, is_training, name: str):
    """conv 3x3 (no bias: batch norm follows) → batch norm → ReLU → 2x2 max pool."""
    with tf.variable_scope(name):
        h = tf.layers.conv2d(
            inputs, filters, 3, padding="same", use_bias=False,
            kernel_initializer=tf.variance_scaling_initializer(scale=2.0),
            kernel_regularizer=tf.contrib.layers.l2_regularizer(l2_scale))
        h = tf.layers.batch_normalization(h, training=is_training)
        h = tf.nn.relu(h)
        return tf.layers.max_pooling2d(h, pool_size=2, strides=2)


def build_model(images, labels, is_training, args, steps_per_epoch: int):
    """The CNN, its loss (cross entropy + L2), the Adam train op (after the batch-norm
    updates; the learning rate decays by `args.lr_decay` per epoch) and the batch accuracy.
    `images`/`labels` may be placeholders or any tensors (an input pipeline's outputs)."""
    h = conv_block(images, 32, args.l2, is_training, "block1")
    h = conv_block(h, 64, args.l2, is_training, "block2")
    h = tf.layers.flatten(h)
    h = tf.layers.dense(h, 128, activation=tf.nn.relu,
                        kernel_initializer=tf.variance_scaling_initializer(scale=2.0),
                        kernel_regularizer=tf.contrib.layers.l2_regularizer(args.l2))
    h = tf.layers.dropout(h, rate=args.dropout, training=is_training)
    logits = tf.layers.dense(h, 10, name="logits")

    cross_entropy = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    loss = cross_entropy + tf.losses.get_regularization_loss()
    global_step = tf.train.get_or_create_global_step()
    learning_rate = tf.train.exponential_decay(args.learning_rate, global_step,
                                               decay_steps=steps_per_epoch,
                                               decay_rate=args.lr_decay)
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):  # moving mean/variance step with each train step
        train_op = tf.train.AdamOptimizer(learning_rate).minimize(
            loss, global_step=global_step)
    predictions = tf.argmax(logits, axis=1, output_type=tf.int32, name="predictions")
    accuracy = tf.reduce_mean(tf.cast(tf.equal(predictions, labels), tf.float32))
    return {"images": images, "labels": labels, "is_training": is_training, "loss": loss,
            "train_op": train_op, "accuracy": accuracy, "predictions": predictions,
            "global_step": global_step}


# -- training and evaluation ------------------------------------------------------------------
def train_epoch(sess, model, iterator, n_batches: int, args, epoch: int):
    """One pass over the training records; returns (mean loss, mean accuracy)."""
    losses, accuracies = [], []
    sess.run(iterator.initializer)
    with Progress(total=n_batches, desc=f"epoch {epoch:2d}/{args.epochs}",
                  disable=True if args.no_progress else None, unit="batch") as bar:
        while True:
            try:
                _, loss, acc = sess.run([model["train_op"], model["loss"], model["accuracy"]],
                                        {model["is_training"]: True})
            except tf.errors.OutOfRangeError:
                break
            losses.append(loss)
            accuracies.append(acc)
            bar.update(loss=np.mean(losses), acc=np.mean(accuracies))
    return float(np.mean(losses)), float(np.mean(accuracies))


def evaluate(sess, model, x, y, batch_size: int = 512) -> float:
    """Accuracy over (x, y) in inference mode (batch norm uses its moving averages)."""
    correct = 0
    for idx in batches(len(x), batch_size):
        predictions = sess.run(model["predictions"], {model["images"]: x[idx]})
        correct += int(np.sum(predictions == y[idx]))
    return correct / len(x)


def train(sess, model, iterator, n_batches: int, args, on_epoch_end=None, first_epoch: int = 1):
    """Trains epochs `first_epoch..args.epochs`; `on_epoch_end(epoch, stats)` runs after each
    one (checkpoints and summaries). Returns the last epoch's stats."""
    stats = {}
    for epoch in range(first_epoch, args.epochs + 1):
        loss, acc = train_epoch(sess, model, iterator, n_batches, args, epoch)
        stats = {"epoch": epoch, "loss": loss, "train_accuracy": acc}
        if on_epoch_end is not None:
            on_epoch_end(epoch, stats)
    return stats


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Train a CNN on the 8x8 digits.")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    parser.add_argument("--lr-decay", type=float, default=0.85,
                        help="learning-rate factor per epoch")
    parser.add_argument("--l2", type=float, default=1e-4, help="L2 scale on the kernels")
    parser.add_argument("--dropout", type=float, default=0.3, help="dropout rate")
    parser.add_argument("--test-fraction", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bars (they are off anyway when stdout is not a terminal)")
    parser.add_argument("--logdir", default=os.path.join("runs", "cnn_digits"),
                        help="checkpoints, TensorBoard logs and the Chrome trace go here")
    parser.add_argument("--fresh", action="store_true",
                        help="ignore existing checkpoints and train from scratch")
    parser.add_argument("--cluster", action="store_true",
                        help="train over a local cluster of processes (between-graph "
                             "replication; see cnn_digits_cluster.py)")
    parser.add_argument("--workers", type=int, default=2, help="worker tasks with --cluster")
    parser.add_argument("--ps", type=int, default=1, help="ps tasks with --cluster")
    parser.add_argument("--cluster-spec", help=argparse.SUPPRESS)   # a worker's client
    parser.add_argument("--cluster-task", type=int, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None) -> float:
    # NOTE: the matrices are tiny; on a small machine BLAS worker threads only contend.
    args = parse_args(argv)
    with threadpool_limits(limits=1, user_api="blas"):
        if args.cluster or args.cluster_spec:
            import cnn_digits_cluster as cluster

            demo = sys.modules[__name__]
            if args.cluster_spec:
                return cluster.client(demo, args)
            return cluster.launch(demo, args)
        return run(args)


def run(args) -> float:
    """Builds, trains (resuming from the latest checkpoint) and evaluates the model; prints
    and returns the test accuracy."""
    start = time.perf_counter()
    tf.set_random_seed(args.seed)
    data = load_data(args.test_fraction, args.seed)
    paths = write_records(data[0], data[1], os.path.join(args.logdir, "records"))
    iterator = input_pipeline(paths, args.batch_size, args.seed)
    next_images, next_labels = iterator.get_next()
    # NOTE: training reads the pipeline; evaluation feeds these two tensors directly, which
    # prunes the iterator out of the evaluation step.
    images = tf.placeholder_with_default(next_images, [None, 8, 8, 1], name="images")
    labels = tf.placeholder_with_default(next_labels, [None], name="labels")
    is_training = tf.placeholder_with_default(False, [], name="is_training")
    steps_per_epoch = -(-len(data[0]) // args.batch_size)
    model = build_model(images, labels, is_training, args, steps_per_epoch)
    logs = Logs(args.logdir, model)
    print(f"train: {len(data[0])} images in {len(paths)} TFRecord shards, "
          f"test: {len(data[2])} images")

    with tf.Session() as sess:
        first_epoch = logs.restore_or_initialize(sess, steps_per_epoch, args.fresh)

        def end_of_epoch(epoch, stats):
            stats["test_accuracy"] = evaluate(sess, model, data[2], data[3])
            print(f"epoch {epoch:2d}: loss {stats['loss']:.4f}  train accuracy "
                  f"{stats['train_accuracy']:.3f}  test accuracy {stats['test_accuracy']:.3f}")
            logs.epoch_done(sess, epoch, stats, data)

        if first_epoch <= args.epochs:
            train(sess, model, iterator, steps_per_epoch, args, on_epoch_end=end_of_epoch,
                  first_epoch=first_epoch)
        else:
            print(f"all {args.epochs} epochs are in the checkpoint; use --fresh to train again")
        test_accuracy = evaluate(sess, model, data[2], data[3])
    logs.close()
    print(f"time: {time.perf_counter() - start:.1f} s")
    print(f"logs: {args.logdir}  (view: tensorboard --logdir {args.logdir}; Chrome trace: "
          f"open {logs.trace_path} in chrome://tracing or ui.perfetto.dev)")
    print(f"graph: {logs.meta_graph_path()}  (what the master does with it: tensorweave "
          f"explain {logs.meta_graph_path()} --fetch predictions:0 --feed images:0)")
    print(f"test accuracy: {test_accuracy:.3f}")
    return test_accuracy


class Logs:
    """Checkpoints every epoch, TensorBoard summaries and one traced step."""

    def __init__(self, logdir: str, model):
        self.logdir = logdir
        self.model = model
        self.ckpt_prefix = os.path.join(logdir, "checkpoints", "model.ckpt")
        self.trace_path = os.path.join(logdir, "train_step_trace.json")
        self.saver = tf.train.Saver(max_to_keep=3)
        weights = [v for v in tf.trainable_variables() if "kernel" in v.name]
        self.histograms = tf.summary.merge([tf.summary.histogram(v.op.name, v) for v in weights])
        self.writer = tf.summary.FileWriter(logdir, tf.get_default_graph())

    def restore_or_initialize(self, sess, steps_per_epoch: int, fresh: bool) -> int:
        """Restores the latest checkpoint (unless `fresh`); returns the first epoch to train."""
        latest = None if fresh else tf.train.latest_checkpoint(os.path.dirname(self.ckpt_prefix))
        if latest is None:
            sess.run(tf.global_variables_initializer())
            return 1
        self.saver.restore(sess, latest)
        state = tf.train.get_checkpoint_state(os.path.dirname(self.ckpt_prefix))
        self.saver.recover_last_checkpoints(list(state.all_model_checkpoint_paths))
        step = int(sess.run(self.model["global_step"]))
        print(f"resumed from {latest} (step {step})")
        return step // steps_per_epoch + 1

    def epoch_done(self, sess, epoch: int, stats: dict, data) -> None:
        step = int(sess.run(self.model["global_step"]))
        self.saver.save(sess, self.ckpt_prefix, global_step=step)
        summary = tf.Summary(value=[tf.Summary.Value(tag=k, simple_value=v)
                                    for k, v in stats.items() if k != "epoch"])
        self.writer.add_summary(summary, step)
        self.writer.add_summary(sess.run(self.histograms), step)
        if not os.path.exists(self.trace_path):
            self._trace_one_step(sess, data, step)
        self.writer.flush()

    def _trace_one_step(self, sess, data, step: int) -> None:
        """One fully traced (not training) step: TensorBoard's run metadata + a Chrome trace."""
        from tensorweave.timeline import run_traced

        m = self.model
        feed = {m["images"]: data[0][:64], m["labels"]: data[1][:64], m["is_training"]: False}
        run_traced(sess, [m["loss"], m["accuracy"]], feed, writer=self.writer,
                   tag=f"step{step}", global_step=step, trace_path=self.trace_path)

    def meta_graph_path(self) -> str:
        """The MetaGraphDef the saver wrote beside the latest checkpoint (`tensorweave
        explain` and `tf.train.import_meta_graph` read it)."""
        return tf.train.latest_checkpoint(os.path.dirname(self.ckpt_prefix)) + ".meta"

    def close(self) -> None:
        self.writer.close()


if __name__ == "__main__":
    main()
