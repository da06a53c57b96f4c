"""Writes tests/data/estimator_families_in_tf.json with the TensorFlow peer: which
symbols of the estimator / feature_column / lookup / metrics families in
shared/reference/tf_v1_symbol_usage.tsv TF 2.21's tf.compat.v1 still has
(test_estimator_families.py requires those).
Run: ~/.cache/tensorweave-tf-peer/bin/python tests/compat/make_estimator_families.py"""

import json
import os

import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
TSV = os.path.join(HERE, "..", "..", "..", "shared", "reference", "tf_v1_symbol_usage.tsv")
PREFIXES = ("estimator", "feature_column", "lookup", "contrib.lookup", "metrics",
            "contrib.metrics", "tables_initializer", "Estimator")


def family_rows(path):
    with open(path) as f:
        next(f)
        return [line.split("\t")[0] for line in f if line.split("\t")[0].split(".")[0]
                in {p.split(".")[0] for p in PREFIXES}
                and line.split("\t")[0].startswith(PREFIXES)]


def has(root, name) -> bool:
    obj = root
    for part in name.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def main():
    rows = family_rows(TSV)
    present = {name: has(tf.compat.v1, name) for name in rows}
    with open(os.path.join(HERE, "..", "data", "estimator_families_in_tf.json"), "w") as f:
        json.dump(present, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
