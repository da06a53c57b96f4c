"""Writes tests/data/accumulators_expected.json with TensorFlow's ref-typed accumulator ops.

Run with the TensorFlow peer (never needed by the tests themselves):

    ~/.cache/tensorweave-tf-peer/bin/python tests/ops/make_accumulators_expected.py

Keys: `dense/<scenario>` and `sparse/<scenario>` of `accumulator_cases.py`, each the list of
step records `accumulator_cases.run` returns.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import accumulator_cases as cases  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402
from tensorflow.python.ops import gen_data_flow_ops as gen  # noqa: E402

tf.disable_v2_behavior()
OUT = Path(__file__).resolve().parents[1] / "data" / "accumulators_expected.json"


def _acc(sparse, dtype, shape, reduction):
    make = gen.sparse_conditional_accumulator if sparse else gen.conditional_accumulator
    shape = tf.TensorShape(shape) if shape is not None else tf.TensorShape(None)
    return make(dtype=dtype, shape=shape, reduction_type=reduction)


def _sparse_apply(h, step, indices, values, shape):
    known = shape is not None
    shape = shape if known else tf.constant([], tf.int64)
    return gen.sparse_accumulator_apply_gradient(h, step, indices, values, shape,
                                                 has_known_shape=known)


OPS = {
    "acc": _acc,
    "apply": gen.accumulator_apply_gradient,
    "sparse_apply": _sparse_apply,
    "take": lambda h, n: gen.accumulator_take_gradient(h, n, dtype=h.op.get_attr("dtype")),
    "sparse_take": lambda h, n: gen.sparse_accumulator_take_gradient(
        h, n, dtype=h.op.get_attr("dtype")),
    "set_step": gen.accumulator_set_global_step,
    "num": gen.accumulator_num_accumulated,
}


def main() -> None:
    out = {}
    for kind, table in (("dense", cases.DENSE), ("sparse", cases.SPARSE)):
        for name, spec in table.items():
            out[f"{kind}/{name}"] = cases.run(tf, OPS, kind == "sparse", spec)
    OUT.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}: {len(out)} scenarios")


if __name__ == "__main__":
    main()
