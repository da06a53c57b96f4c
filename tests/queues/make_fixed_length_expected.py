"""Writes fixed-length-record files and what TensorFlow's FixedLengthRecordReader and
FixedLengthRecordDataset read from them (tests/data/fixed_length/, fixed_length_expected.npz):

    ~/.cache/tensorweave-tf-peer/bin/python tests/queues/make_fixed_length_expected.py

Configs (name: record, header, footer, hop, encoding): see CONFIGS. Keys: <name>_keys,
<name>_values (reader), <name>_dataset (dataset, where TF's dataset takes the config) and
<name>_dataset_error ("ErrorClass: message" where TF's
dataset fails).
"""

# ruff: noqa: B023  (each lambda runs at once, inside its loop iteration)
from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
ROOT = Path(__file__).resolve().parents[1] / "data"
DIR = ROOT / "fixed_length"
CONFIGS = {  # name: (record_bytes, header, footer, hop, encoding)
    "plain": (5, 0, 0, 0, ""),
    "header_footer": (4, 3, 2, 0, ""),
    "hop": (6, 2, 1, 4, ""),
    "gzip": (5, 1, 2, 0, "GZIP"),
    "zlib": (5, 0, 3, 0, "ZLIB"),
}


def main():
    DIR.mkdir(parents=True, exist_ok=True)
    out = {}
    raw = bytes(range(37))
    for name, (rec, head, foot, hop, enc) in CONFIGS.items():
        data = {"GZIP": gzip.compress, "ZLIB": zlib.compress}.get(enc, lambda b: b)(raw)
        path = DIR / f"{name}.bin"
        path.write_bytes(data)
        with tf.Graph().as_default(), tf.Session() as sess:
            q = tf.train.string_input_producer([str(path)], num_epochs=1, shuffle=False)
            r = tf.FixedLengthRecordReader(rec, header_bytes=head, footer_bytes=foot,
                                           hop_bytes=hop, encoding=enc or None)
            k, v = r.read(q)
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            keys, values = [], []
            try:
                while True:
                    a, b = sess.run([k, v])
                    keys.append(a.decode().rsplit(":", 1)[1])
                    values.append(b)
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads)
        out[f"{name}_keys"] = np.array(keys)
        out[f"{name}_values"] = np.array(values, dtype=object).astype(bytes)
        if not hop:
            with tf.Graph().as_default(), tf.Session() as sess:
                ds = tf.data.FixedLengthRecordDataset(str(path), rec, header_bytes=head,
                                                      footer_bytes=foot,
                                                      compression_type=enc or None)
                it = tf.data.make_initializable_iterator(ds)
                nxt = it.get_next()
                got, error = [], ""
                try:
                    sess.run(it.initializer)
                    while True:
                        got.append(sess.run(nxt))
                except tf.errors.OutOfRangeError:
                    pass
                except tf.errors.OpError as e:
                    error = f"{type(e).__name__}: {e.message}"
            out[f"{name}_dataset"] = np.array(got, dtype=object).astype(bytes)
            out[f"{name}_dataset_error"] = np.array(error)
    np.savez(ROOT / "fixed_length_expected.npz", **out)
    print({k: len(v) for k, v in out.items()})


if __name__ == "__main__":
    main()
