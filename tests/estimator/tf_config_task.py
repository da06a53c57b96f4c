"""One task of a TF_CONFIG-driven Estimator cluster: the DNNClassifier of
examples/estimator_digits.py (digits, a numeric feature column, 128-64 hidden units, Adam)
trained and evaluated with `tf.estimator.train_and_evaluate`, which runs the role TF_CONFIG
names (chief, worker, ps, evaluator); without TF_CONFIG, the same program in one process.

    TF_CONFIG='{"cluster": ..., "task": {"type": "chief", "index": 0}}' \\
        python tf_config_task.py --model-dir DIR --steps N

Each evaluation is followed by a LatestExporter ("latest", keeping 2) and a FinalExporter
("final"). Prints `result {"role": ..., "accuracy": ..., "global_step": ..., "exports": [the
last evaluation's export paths, or null]}` when train_and_evaluate returns with metrics (the
evaluator, or a local run), `result {"role": ...}` otherwise. A ps task never returns (it
serves until killed).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from estimator_digits import data  # noqa: E402

import tensorweave as tf  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model-dir", required=True)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--save-steps", type=int, default=250)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    (x_train, y_train), (x_test, y_test) = data()
    pixels = tf.feature_column.numeric_column("pixels", shape=(64,))
    config = tf.estimator.RunConfig(model_dir=args.model_dir, tf_random_seed=0,
                                    save_checkpoints_steps=args.save_steps,
                                    log_step_count_steps=args.save_steps,
                                    session_creation_timeout_secs=120)
    classifier = tf.estimator.DNNClassifier(
        hidden_units=[128, 64], feature_columns=[pixels], n_classes=10,
        optimizer=tf.train.AdamOptimizer(1e-3), config=config)
    train = tf.estimator.inputs.numpy_input_fn({"pixels": x_train}, y_train, batch_size=64,
                                               num_epochs=None, shuffle=True)
    test = tf.estimator.inputs.numpy_input_fn({"pixels": x_test}, y_test, batch_size=297,
                                              shuffle=False)
    serving = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"pixels": tf.placeholder(tf.float32, [None, 64], name="pixels")})
    exporters = [tf.estimator.LatestExporter("latest", serving, exports_to_keep=2),
                 tf.estimator.FinalExporter("final", serving)]
    out = tf.estimator.train_and_evaluate(
        classifier, tf.estimator.TrainSpec(train, max_steps=args.steps),
        tf.estimator.EvalSpec(test, steps=None, start_delay_secs=0, throttle_secs=1,
                              exporters=exporters))
    result = {"role": config.task_type if os.environ.get("TF_CONFIG") else "local"}
    if out is not None:
        metrics, exports = out
        result.update(accuracy=float(metrics["accuracy"]),
                      global_step=int(metrics["global_step"]),
                      exports=[None if e is None else os.fsdecode(e) for e in exports])
    print("result " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
