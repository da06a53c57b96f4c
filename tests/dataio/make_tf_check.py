"""Reads a TFRecord file with real TensorFlow and prints its Examples as JSON.

Run with the TensorFlow peer Python (not with tensorweave's), e.g.
  /root/.cache/tensorweave-tf-peer/bin/python tests/dataio/make_tf_check.py FILE [GZIP|ZLIB]

Each record is decoded twice, by TensorFlow's `tf.train.Example` proto and by TensorFlow's
parse op (`tf.io.parse_example` with a VarLenFeature per key of the first record), so the
output shows that TF reads both our framing and our Example bytes. Printed:
  {"count": N, "examples": [{key: [values]}...], "parsed": [{key: [values]}...]}
with bytes values as latin-1 strings. tests/dataio/test_tf_reads_ours.py runs it.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402

KINDS = {"bytes_list": tf.string, "float_list": tf.float32, "int64_list": tf.int64}


def _plain(values) -> list:
    return [v.decode("latin-1") if isinstance(v, bytes) else v for v in values]


def _as_dict(example) -> dict:
    out = {}
    for key, feature in example.features.feature.items():
        kind = feature.WhichOneof("kind")
        out[key] = _plain(getattr(feature, kind).value) if kind else []
    return out


def _parsed(records, first) -> list:
    spec = {k: tf.io.VarLenFeature(KINDS[f.WhichOneof("kind")])
            for k, f in first.features.feature.items() if f.WhichOneof("kind")}
    parsed = tf.io.parse_example(tf.constant(records), spec)
    rows = [dict() for _ in records]
    for key, sp in parsed.items():
        for (row, _), value in zip(sp.indices.numpy().tolist(), sp.values.numpy().tolist()):
            rows[row].setdefault(key, []).append(value)
    return [{k: _plain(v) for k, v in r.items()} for r in rows]


def main() -> None:
    path = sys.argv[1]
    compression = sys.argv[2] if len(sys.argv) > 2 else ""
    records = [r.numpy() for r in tf.data.TFRecordDataset(path, compression_type=compression)]
    examples = [tf.train.Example.FromString(r) for r in records]
    out = {"count": len(records), "examples": [_as_dict(e) for e in examples],
           "parsed": _parsed(records, examples[0]) if records else []}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
