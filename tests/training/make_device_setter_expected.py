"""Writes tests/data/replica_device_setter_expected.json with TensorFlow (TF1 graph mode).

Run with the TensorFlow peer (never needed by the tests themselves):

    ~/.cache/tensorweave-tf-peer/bin/python tests/training/make_device_setter_expected.py

For each case of `device_setter_cases.CASES`: {op name: [op type, device, colocation groups]}
of every op (for `sync_replicas` with TF1's ref-typed accumulator op types and names).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import device_setter_cases as cases  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
OUT = Path(__file__).resolve().parents[1] / "data" / "replica_device_setter_expected.json"


def _tf1_accumulators(graph, found: dict) -> dict:
    """TF 2's SyncReplicasOptimizer builds resource accumulators (`ResourceAccumulator*`); TF1's
    builds the ref-typed ones, named after their op types, and (op_def_library's
    `_MaybeColocateWith`) colocates every op taking the `Ref(string)` handle with the
    accumulator: map to those."""
    def rename(text: str) -> str:
        return text.replace("ResourceAccumulator", "Accumulator")

    out = {}
    for name, (typ, dev, groups) in found.items():
        if "Accumulator" in typ and typ.startswith("Resource"):
            typ = typ[len("Resource"):]
            if typ != "ConditionalAccumulator":
                handle = graph.get_operation_by_name(name).inputs[0].op
                groups = [g.decode() for g in handle.colocation_groups()]
        out[rename(name)] = [typ, dev, [rename(g) for g in groups]]
    return out


def main() -> None:
    out = {}
    for name, build in cases.CASES.items():
        g = tf.Graph()
        with g.as_default():
            build(tf, tf.train.replica_device_setter)
        out[name] = _tf1_accumulators(g, cases.placements(g))
    OUT.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}: {sum(len(v) for v in out.values())} ops in {len(out)} cases")


if __name__ == "__main__":
    main()
