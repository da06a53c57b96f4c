"""Environments for the cluster resolvers, shared by the test and make_resolver_expected.py
(run with TensorFlow, it writes tests/data/cluster_resolver_expected.json)."""

import json

TF_CONFIGS = {
    "ps_worker": {"cluster": {"ps": ["ps0:2222"], "worker": ["w0:2222", "w1:2222"]},
                  "task": {"type": "worker", "index": 1}},
    "chief_grpc": {"cluster": {"chief": ["c0:2222"], "worker": ["w0:2222"]},
                   "task": {"type": "chief", "index": 0}, "rpc_layer": "grpc"},
    "evaluator": {"cluster": {"chief": ["c0:2222"], "worker": ["w0:2222"]},
                  "task": {"type": "evaluator", "index": 0}},
    "single": {"cluster": {"worker": ["w0:2222"]}, "task": {"type": "worker", "index": 0}},
    "session_master": {"cluster": {"worker": ["w0:2222", "w1:2222"]},
                       "task": {"type": "worker", "index": 0}, "session_master": "grpc://m:1"},
    "no_task": {"cluster": {"worker": ["w0:2222", "w1:2222"]}},
    "empty": {},
}

SLURM = {
    "two_nodes": ({"SLURM_PROCID": "3", "SLURM_STEP_NUM_TASKS": "4",
                   "SLURM_STEP_NODELIST": "node[01-02]", "SLURM_STEP_TASKS_PER_NODE": "2(x2)"},
                  {"jobs": {"ps": 1, "worker": 3}, "gpus_per_node": 2}),
    "ranges": ({"SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "5",
                "SLURM_STEP_NODELIST": "n[1-2],m5,o[3-4]", "SLURM_STEP_TASKS_PER_NODE": "1(x5)"},
               {"gpus_per_node": 1}),
    "uneven": ({"SLURM_PROCID": "2", "SLURM_STEP_NUM_TASKS": "3",
                "SLURM_STEP_NODELIST": "b,a", "SLURM_STEP_TASKS_PER_NODE": "2,1"},
               {"jobs": {"worker": 2, "chief": 1}, "port_base": 9000, "gpus_per_node": 4}),
}


def tf_config_env(name: str) -> str:
    return json.dumps(TF_CONFIGS[name])
