"""Writes tests/data/cluster_resolver_expected.json with TensorFlow's resolvers (run with the
TF peer: ~/.cache/tensorweave-tf-peer/bin/python tests/distributed/make_resolver_expected.py)."""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import resolver_cases as cases  # noqa: E402
import tensorflow as tf  # noqa: E402

cr = tf.distribute.cluster_resolver


def outcome(fn):
    try:
        return {"value": fn()}
    except Exception as e:  # noqa: BLE001
        return {"error": type(e).__name__}


def main():
    out = {"tf_config": {}, "slurm": {}, "tf_version": tf.__version__}
    for name in cases.TF_CONFIGS:
        os.environ["TF_CONFIG"] = cases.tf_config_env(name)
        r = cr.TFConfigClusterResolver()
        out["tf_config"][name] = {
            "cluster": r.cluster_spec().as_dict(), "task_type": r.task_type,
            "task_id": r.task_id, "rpc_layer": r.rpc_layer, "master": outcome(r.master),
            "master_ps0": outcome(lambda r=r: r.master("worker", 0, "grpc")),
        }
    os.environ.pop("TF_CONFIG")
    for name, (env, kwargs) in cases.SLURM.items():
        saved = dict(os.environ)
        os.environ.update(env)
        r = cr.SlurmClusterResolver(**kwargs)
        spec = r.cluster_spec().as_dict()
        out["slurm"][name] = {"cluster": spec, "task_type": r.task_type, "task_id": r.task_id,
                              "master": r.master(), "gpus": r.num_accelerators(),
                              "cuda_visible": os.environ.get("CUDA_VISIBLE_DEVICES")}
        os.environ.clear()
        os.environ.update(saved)
    path = Path(__file__).resolve().parents[1] / "data" / "cluster_resolver_expected.json"
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(path)


if __name__ == "__main__":
    main()
