"""Reads a checkpoint that tensorweave wrote, with TensorFlow, and prints what TF sees as JSON.

    /root/.cache/tensorweave-tf-peer/bin/python tests/training/make_tf_roundtrip.py PREFIX [--meta]

Output: {"tensors": {name: {"dtype", "shape", "hex"}}} where "hex" is the raw little-endian
bytes of the value (a list of hex strings for string tensors), read with
`tf.train.load_checkpoint`. With --meta, TensorFlow also imports PREFIX.meta (our meta graph)
with `tf.train.import_meta_graph`, restores PREFIX through the returned Saver and adds
{"restored": {variable name: same form}}. Used by tests/compat/test_tf_checkpoint.py (slow,
skipped when the TF peer is not installed).
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402


def encode(value) -> dict:
    arr = np.asarray(value)
    if arr.dtype == object:
        data = [bytes(x).hex() for x in arr.reshape(-1)]
    else:
        data = np.ascontiguousarray(arr).tobytes().hex()
    return {"shape": list(arr.shape), "hex": data}


def read_checkpoint(prefix: str) -> dict:
    reader = tf.train.load_checkpoint(prefix)
    out = {}
    for name, dtype in sorted(reader.get_variable_to_dtype_map().items()):
        entry = encode(reader.get_tensor(name))
        entry["dtype"] = dtype.name
        out[name] = entry
    return out


def restore_with_meta_graph(prefix: str) -> dict:
    tf.disable_v2_behavior()
    with tf.Graph().as_default(), tf.Session() as sess:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        saver.restore(sess, prefix)
        out = {}
        for v in tf.global_variables():
            entry = encode(sess.run(v))
            entry["dtype"] = v.dtype.base_dtype.name
            out[v.op.name] = entry
        return out


def main() -> None:
    prefix = sys.argv[1]
    result = {"tensors": read_checkpoint(prefix)}
    if "--meta" in sys.argv[2:]:
        result["restored"] = restore_with_meta_graph(prefix)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
