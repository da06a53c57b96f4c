"""Writes tests/data/ckpt/dtypes/: a checkpoint written by TensorFlow's own SaveV2 kernel with
every dtype a checkpoint stores (float16, bfloat16, complex, unsigned, bool, strings with long
and empty elements, empty tensors, scalars) and 12000 small tensors, so the index spans several
256 KiB table blocks. The tests compare our reader against it and our writer byte for byte.

Run with the TensorFlow peer (tests never need TensorFlow):

    /root/.cache/tensorweave-tf-peer/bin/python tests/training/make_tf_checkpoints.py
"""

import json
import os
import shutil

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "ckpt", "dtypes")
N_MANY = 12000


def values() -> dict:
    rng = np.random.default_rng(7)
    bf16 = tf.bfloat16.as_numpy_dtype
    v = {
        "half/h": np.array([[0.5, -1.25, np.inf, -np.inf, 65504.0],
                            [1e-4, 3.0, -0.0, 2.0, 7.5],
                            [9.0, 10.0, 11.0, 12.0, np.nan]], np.float16),
        "half/bf": np.array([1.5, -2.0, 3.140625, 1e30], bf16),
        "f32": np.float32(2.5),
        "f64": rng.standard_normal((2, 3)),
        "c64": np.array([1 + 2j, -3.5j], np.complex64),
        "c128": np.array([[0.25 - 1j]], np.complex128),
        "i8": np.array([-128, 0, 127], np.int8),
        "i16": np.array([-32768, 32767], np.int16),
        "i32": np.arange(-6, 6, dtype=np.int32).reshape(3, 4),
        "i64": np.array([2 ** 62, -(2 ** 62)], np.int64),
        "u8": np.array([0, 255], np.uint8),
        "u16": np.array([65535], np.uint16),
        "u32": np.array([4294967295], np.uint32),
        "u64": np.array([18446744073709551615], np.uint64),
        "flags": np.array([[True, False], [False, True]]),
        "empty/f": np.zeros([0], np.float32),
        "empty/i": np.zeros([2, 0, 3], np.int32),
        "str/vec": np.array([b"", b"a", b"x" * 300, "h\u00e9llo".encode(), b"\x00\xff"],
                            object),
        "str/mat": np.array([[b"ab", b"c"], [b"", b"def"]], object),
        "str/scalar": np.array(b"only", object),
        "str/empty": np.zeros([0], object),
    }
    for i in range(N_MANY):
        v[f"many/layer_{i:05d}/kernel"] = np.array([i], np.float32)
    return v


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    vals = values()
    special = [n for n in vals if not n.startswith("many/")]
    np.random.default_rng(3).shuffle(special)
    # NOTE: data offsets follow the add order (shuffled specials, then the many tensors in
    # order), the index is sorted
    order = special + [n for n in vals if n.startswith("many/")]
    prefix = os.path.join(OUT, "dtypes")
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=order, shape_and_slices=[""] * len(order),
                      tensors=[tf.constant(vals[n]) for n in order])
    numeric = {}
    strings = {}
    for name, v in vals.items():
        if name.startswith("many/"):
            continue
        key = name.replace("/", "__")
        if v.dtype == object:
            strings[name] = [x.hex() for x in np.asarray(v).reshape(-1)]
        elif v.dtype == tf.bfloat16.as_numpy_dtype:
            numeric[key + "__bits"] = np.asarray(v).view(np.uint16)
        else:
            numeric[key] = np.asarray(v)
    np.savez(os.path.join(OUT, "expected.npz"), **numeric)
    reader = tf.train.load_checkpoint(prefix)
    manifest = {
        "written_by": f"TensorFlow {tf.__version__} tf.raw_ops.SaveV2",
        "order": special,
        "many": N_MANY,
        "dtypes": {n: d.name for n, d in reader.get_variable_to_dtype_map().items()
                   if not n.startswith("many/")},
        "shapes": {n: s for n, s in reader.get_variable_to_shape_map().items()
                   if not n.startswith("many/")},
        "strings_hex": strings,
        "note": "expected.npz keys use __ for /; bfloat16 as uint16 bits under <key>__bits",
    }
    with open(os.path.join(OUT, "MANIFEST.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
